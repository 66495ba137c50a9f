"""What an executor is (:class:`Executor`) and what it is handed to answer cases
(:class:`Answering`); what it reports of a run (:class:`AnswerFigures`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from citelab.evals.records import CaseRecord

if TYPE_CHECKING:
    from citelab.evals.execution._scoring import ScoringJob
    from citelab.evals.results import ScoredRows

__all__ = ["AnswerFigures", "Answering", "Executor"]


@runtime_checkable
class Answering(Protocol):
    """Answers a run's cases in the process it lives in: the runner's
    :class:`~citelab.evals.runner.BatchRunner`. Cases are named by their index in the run's
    plan. An executor sets it up once per process (corpora, search indexes, model clients),
    asks it for one case at a time, at most :attr:`concurrency` at once, and closes it."""

    @property
    def concurrency(self) -> int:
        """Cases answered at once (per process)."""
        ...

    @property
    def streaming(self) -> dict[str, bool]:
        """Model name → whether its calls stream, for the models that have the choice."""
        ...

    def key(self, index: int) -> str:
        """The record key of the case at ``index`` (for messages)."""
        ...

    async def set_up(self, indices: Sequence[int]) -> None:
        """Load what the cases at ``indices`` need before the first one starts."""
        ...

    async def answer(self, index: int) -> CaseRecord:
        """Answer the case at ``index``; a failed turn is recorded, not raised."""
        ...

    def model_calls(self) -> dict[str, dict[str, int]]:
        """Model name → ``{"hits", "misses"}`` of the model-call cache so far."""
        ...

    async def aclose(self) -> None:
        """Close the model clients (they belong to the running event loop)."""
        ...

    def portable(self) -> Callable[[], Answering]:
        """A picklable callable that builds the same answering in another process."""
        ...


@dataclass
class AnswerFigures:
    """What an executor measured while it answered a run's cases (written to ``run.json``)."""

    setup_seconds: float = 0.0
    """Wall time spent loading what the cases need before the first one started."""
    seconds: float = 0.0
    """Wall time spent answering, without set-up or scoring."""
    cpu_seconds: float = 0.0
    """CPU time spent meanwhile, by this process and the workers."""
    model_calls: dict[str, dict[str, int]] = field(default_factory=dict)
    """Model name → ``{"hits", "misses"}`` of the model-call cache."""
    streaming: dict[str, bool] = field(default_factory=dict)
    """Model name → whether its calls streamed."""


@runtime_checkable
class Executor(Protocol):
    """Where a run's work runs: answering cases and scoring records (see the package docs).

    Whatever the executor, the records and the scored rows come back in the order they were
    asked for, so the tables are the same."""

    @property
    def name(self) -> str: ...

    async def answer(
        self,
        answering: Answering,
        indices: Sequence[int],
        keep: Callable[[CaseRecord], None],
        scoring: ScoringJob,
    ) -> AnswerFigures:
        """Answer the cases at ``indices``, giving every record to ``keep`` (in this process)
        as it comes. ``scoring`` is what the records will be scored with: an executor whose
        workers score each record where they answered it keeps the rows for :meth:`score`."""
        ...

    def prepare(self, scoring: ScoringJob) -> None:
        """Start the workers that will score (they build their scorers meanwhile); without
        workers, nothing. :meth:`score` does it too when it has not been done."""
        ...

    def score(self, scoring: ScoringJob, records: Sequence[CaseRecord]) -> ScoredRows:
        """Every scorer of ``scoring`` on ``records``: their rows, in the records' order."""
        ...

    def config(self) -> dict[str, Any]:
        """What to write to ``run.json`` about where the work ran."""
        ...

    def close(self) -> None:
        """Release what the executor started (worker processes, a cluster it started)."""
        ...
