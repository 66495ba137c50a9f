"""Where a run's cases run: in this process (``local``, the default) or on a Ray cluster.

The runner decides *what* runs (the plan, minus the cases already recorded) and writes what
comes back (``records.jsonl``, the tables, the report); an executor decides *where*. It gets
the pending units and hands each finished :class:`~citelab.evals.CaseRecord` to ``keep`` in
the driver process, and it scores records (:meth:`Executor.score`): locally one after the
other, on Ray where the answers are. Either way the scored rows come back as one
:class:`~citelab.evals.results.ScoredRows` table, in the records' order.

``local`` is today's asyncio runner: one event loop, ``concurrency`` cases at a time.
``ray`` (``citelab[ray]``) runs small batches of cases on Ray actors; see
:mod:`citelab.evals.runner._ray`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from citelab._errors import ConfigError
from citelab._memory import paused_garbage_collection
from citelab.evals.records import CaseRecord, RecordsFile
from citelab.evals.results import (
    ScoredRows,
    concurrent_judges,
    score_records_concurrently,
    score_rows,
)

if TYPE_CHECKING:
    from citelab.evals.runner._batch import BatchRunner
    from citelab.evals.runner._plan import RunPlan, Unit

__all__ = ["Executor", "ExecutorName", "LocalExecutor", "get_executor"]

ExecutorName = Literal["local", "ray"]
EXECUTORS: tuple[ExecutorName, ...] = ("local", "ray")


class Executor(Protocol):
    """Runs a plan's pending units somewhere and scores records; see the module docs."""

    @property
    def name(self) -> str: ...

    async def execute(
        self, batch: BatchRunner, units: list[Unit], keep: Callable[[CaseRecord], None]
    ) -> None:
        """Run ``units`` of ``batch.plan`` (set-up included), giving every record to ``keep``
        as it comes.

        Fills the figures of ``batch`` (``setup_seconds``, ``seconds``,
        ``cpu_seconds``, ``streaming``) and leaves the model-call counts to
        :meth:`cache_counts`.
        """
        ...

    def prepare(self, plan: RunPlan) -> None:
        """Get ready to score ``plan``'s records (on Ray: start the workers, which build
        their scorers meanwhile); :meth:`score` does it too when it has not been done."""
        ...

    def score(
        self, plan: RunPlan, records: Sequence[CaseRecord], source: RecordsFile | None = None
    ) -> ScoredRows:
        """Every scorer of ``plan`` on ``records``: their rows, in the records' order.
        ``source``: the file the records were read from, if they were (see
        :class:`RecordsFile`)."""
        ...

    def cache_counts(self, batch: BatchRunner) -> dict[str, dict[str, int]]:
        """Model name → ``{"hits", "misses"}`` of the model-call cache during the run."""
        ...

    def config(self) -> dict[str, Any]:
        """What to write to ``run.json`` about where the run ran."""
        ...

    def close(self) -> None:
        """Release what the executor started (a cluster it started, its workers)."""
        ...


class LocalExecutor:
    """This process, one event loop: the runner's own asyncio path."""

    name = "local"

    async def execute(
        self, batch: BatchRunner, units: list[Unit], keep: Callable[[CaseRecord], None]
    ) -> None:
        await batch.run_batch(units, keep)

    def prepare(self, plan: RunPlan) -> None:
        return None

    def score(
        self, plan: RunPlan, records: Sequence[CaseRecord], source: RecordsFile | None = None
    ) -> ScoredRows:
        with paused_garbage_collection():
            if not concurrent_judges(plan.scorers):
                return score_rows(records, plan.cases, plan.scorers)
            # A model judge (the LLM judge) asks many records' questions at once, in one
            # loop; a record scored again (a verdict it waited for) gets a table of its own.
            return ScoredRows.concat(score_records_concurrently(records, plan.cases, plan.scorers))

    def cache_counts(self, batch: BatchRunner) -> dict[str, dict[str, int]]:
        return {
            name: {"hits": model.hits, "misses": model.misses}
            for name, model in batch.models.items()
        }

    def config(self) -> dict[str, Any]:
        return {"name": self.name}

    def close(self) -> None:
        return None


def get_executor(
    executor: str | Executor = "local",
    *,
    address: str | None = None,
    workers: int | None = None,
) -> Executor:
    """An executor by name (``local`` or ``ray``), or the given object as is.

    ``address`` (a Ray cluster's, e.g. ``ray://head:10001`` or ``head:6379``; default: the
    cluster this process is connected to, else a local one started for the run) and
    ``workers`` (actors; default: one per CPU of the cluster) apply to ``ray`` only.
    """
    if not isinstance(executor, str):
        return executor
    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    if workers is not None and workers < 1:
        raise ConfigError(f"workers must be at least 1, got {workers}")
    if executor == "local":
        if address is not None or workers is not None:
            raise ConfigError("address and workers need executor 'ray'")
        return LocalExecutor()
    from citelab.evals.runner._ray import RayExecutor

    return RayExecutor(address=address, workers=workers)
