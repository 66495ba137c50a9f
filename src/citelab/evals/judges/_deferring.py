"""A model judge's questions asked concurrently, while the scorers stay plain functions.

The citation scorers are pure synchronous functions that call ``judge.supports`` as they walk
an answer, and which question comes next depends on the last verdict. To have many answers'
questions in flight at once without a thread per answer, every scoring task (one answer
each) runs in one asyncio loop through :func:`score_deferring` (the executors of
``citelab.evals.execution`` drive the tasks, a bounded number at a time): a judge that asks
a model (:class:`DeferringJudge`, e.g. :class:`~citelab.evals.LLMJudge`) and has no verdict
yet raises :class:`VerdictPending` instead of asking; the task awaits the model's verdict
and scores the answer again. The verdicts already known are memo hits, so each walk gets one
question further, until one completes. Walking an answer costs far less than a model call,
so the repeated walks are cheap (``benchmarks/bench_score.py`` measures it). Scorers must
not swallow :class:`VerdictPending`; it is a ``BaseException`` (as
``asyncio.CancelledError`` is), so ``except Exception`` lets it pass.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = [
    "DeferringJudge",
    "VerdictPending",
    "deferring",
    "score_deferring",
]

T = TypeVar("T")

_DEFERRING: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "citelab_judge_deferring", default=False
)


@runtime_checkable
class DeferringJudge(Protocol):
    """A judge whose verdicts come from a model and can be asked for asynchronously."""

    name: str
    concurrency: int

    def supports(self, statement: str, evidence: str) -> bool: ...

    def config(self) -> dict[str, Any]: ...

    async def ask(self, statement: str, evidence: str) -> bool:
        """The verdict, asked of the model unless already known (then remembered)."""
        ...

    async def aclose(self) -> None:
        """Close the connections the running event loop holds."""
        ...


class VerdictPending(BaseException):
    """Raised by a deferring judge's ``supports`` for a verdict it does not know yet."""

    def __init__(self, judge: DeferringJudge, statement: str, evidence: str) -> None:
        super().__init__(f"judge {judge.name}: verdict pending")
        self.judge = judge
        self.statement = statement
        self.evidence = evidence


def deferring() -> bool:
    """True inside :func:`score_deferring`: unknown verdicts raise :class:`VerdictPending`."""
    return _DEFERRING.get()


async def score_deferring(task: Callable[[], T]) -> T:
    """``task()`` in the running event loop, deferring: each verdict it needs that its judge
    does not know yet is asked (awaited, within the judge's own bound) and the task run
    again, until it completes. The caller bounds how many tasks run at once."""
    while True:
        pending = _attempt(task)
        if not isinstance(pending, VerdictPending):
            return pending
        await pending.judge.ask(pending.statement, pending.evidence)


def _attempt(task: Callable[[], T]) -> T | VerdictPending:
    token = _DEFERRING.set(True)
    try:
        return task()
    except VerdictPending as pending:
        return pending
    finally:
        _DEFERRING.reset(token)
