"""A model judge's questions asked concurrently, while the scorers stay plain functions.

The citation scorers are pure synchronous functions that call ``judge.supports`` as they walk
an answer, and which question comes next depends on the last verdict. To have many answers'
questions in flight at once without a thread per answer, :func:`score_concurrently` runs
every scoring task (one answer each; see ``citelab.evals.results``, which scores records
this way) in one asyncio loop, *deferring*: a judge that asks a model
(:class:`DeferringJudge`, e.g. :class:`~citelab.evals.LLMJudge`) and has no verdict yet
raises :class:`VerdictPending` instead of asking; the loop asks the model (at most
``concurrency`` answers at a time, each holding its slot while its questions are asked) and
scores the answer again. The verdicts already known are memo hits, so each walk gets one
question further, until one completes. Walking an answer costs a small fraction of a
millisecond, far less than a model call, so the repeated walks are cheap (see
``benchmarks/bench_score.py``). Scorers must not swallow :class:`VerdictPending`; it is a
``BaseException`` (as ``asyncio.CancelledError`` is), so ``except Exception`` lets it pass.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from citelab._async import run_blocking

__all__ = [
    "DeferringJudge",
    "VerdictPending",
    "deferring",
    "score_concurrently",
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
    """True inside :func:`score_concurrently`: unknown verdicts raise :class:`VerdictPending`."""
    return _DEFERRING.get()


def score_concurrently(
    tasks: Sequence[Callable[[], T]], judges: Sequence[DeferringJudge], concurrency: int
) -> list[T]:
    """Each task's result, in order, its pending verdicts asked ``concurrency`` tasks at a
    time in one event loop (see the module docs); the judges' connections are closed after."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    return run_blocking(_drive(tasks, judges, concurrency))


async def _drive(
    tasks: Sequence[Callable[[], T]], judges: Sequence[DeferringJudge], concurrency: int
) -> list[T]:
    slots = asyncio.Semaphore(concurrency)

    async def one(task: Callable[[], T]) -> T:
        async with slots:
            return await score_deferring(task)

    running = [asyncio.ensure_future(one(task)) for task in tasks]
    try:
        return list(await asyncio.gather(*running))
    except BaseException:
        for future in running:
            future.cancel()  # none of them may use a connection closed below
        await asyncio.gather(*running, return_exceptions=True)
        raise
    finally:
        for judge in judges:
            await judge.aclose()


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
