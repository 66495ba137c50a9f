"""Executors by name: ``local``, ``processes``, ``ray`` and any a user registers
(:data:`EXECUTORS`, :func:`get_executor`)."""

from __future__ import annotations

from collections.abc import Callable

from citelab._errors import ConfigError
from citelab._registry import Registry
from citelab.evals.execution._local import LocalExecutor
from citelab.evals.execution._processes import ProcessExecutor, cpus, refuse_model_judges
from citelab.evals.execution._protocol import Executor
from citelab.evals.execution._scoring import ScoringJob
from citelab.evals.judges import LexicalJudge, TrainedLexicalJudge
from citelab.evals.scorers import Scorer

__all__ = ["EXECUTORS", "PER_PROCESS", "ExecutorFactory", "get_executor", "scoring_executor"]


ExecutorFactory = Callable[..., Executor]
"""Makes an executor; called with ``address`` and ``workers`` when they are given."""

EXECUTORS: Registry[ExecutorFactory] = Registry("executor")
"""Every executor by name: ``EXECUTORS.build("processes", workers=4)`` is a new one; a user's
executor is registered here, or named as ``module:attr``, like any other part
(``citelab list executors``)."""
EXECUTORS.register("local", LocalExecutor)
EXECUTORS.register(
    "processes",
    ProcessExecutor,
    description="Worker processes on this machine that score the answers beside this one "
    "(started with forkserver or spawn, never fork; workers: default one per CPU but one).",
)
EXECUTORS.register(
    "ray",
    # Imported when first built: nothing loads Ray to run locally.
    "citelab.evals.execution._ray:RayExecutor",
    description="Ray actors on a cluster, each answering small batches of cases and scoring "
    "them where they were answered (citelab[ray]).",
)


def get_executor(
    executor: str | Executor = "local",
    *,
    address: str | None = None,
    workers: int | None = None,
) -> Executor:
    """An executor by its name in :data:`EXECUTORS` (or ``module:attr``), or the given object
    as is.

    ``address`` and ``workers``, when given, go to the executor's factory. ``local`` (this
    process) takes neither; ``processes`` takes ``workers`` (worker processes on this machine,
    which score beside this process; default: one per CPU but one, at least one); ``ray``
    takes both: a cluster's ``address`` (e.g. ``ray://head:10001`` or ``head:6379``;
    default: the cluster this process is connected to, else a local one started for the
    run) and ``workers`` actors (default: one per CPU of the cluster). An option the
    executor does not take is a :class:`~citelab.ConfigError`.
    """
    if not isinstance(executor, str):
        return executor
    if workers is not None and workers < 1:
        raise ConfigError(f"workers must be at least 1, got {workers}")
    given = {"address": address, "workers": workers}
    return EXECUTORS.build(executor, **{k: v for k, v in given.items() if v is not None})


PER_PROCESS = 500
"""Records per worker process at least when :func:`scoring_executor` chooses how many: below
two workers' worth, one process (starting workers and sending the records cost more than
they save)."""


def scoring_executor(scoring: ScoringJob, records: int, processes: int | None) -> Executor:
    """Where ``records`` records are scored when only scoring runs (``citelab score``):
    ``processes`` worker processes (1: this process), or by default one per CPU, at most one
    per :data:`PER_PROCESS` records, when every scorer is citelab's own with citelab's own
    offline judge (or none) — a user's scorer or judge, rebuilt in a worker from its
    configuration, might not be the same object (it may keep state, or count its calls)."""
    if processes is not None and processes < 1:
        raise ConfigError(f"processes must be at least 1, got {processes}")
    if processes is None:
        ours = all(map(_offline_and_ours, scoring.scorers))
        processes = min(cpus(), records // PER_PROCESS) if ours else 1
    if processes > 1:
        refuse_model_judges(scoring)
    count = max(1, min(processes, records))
    # This process scores beside its workers (see ProcessExecutor): count - 1 of them.
    return ProcessExecutor(count - 1) if count > 1 else LocalExecutor()


def _offline_and_ours(scorer: Scorer) -> bool:
    judge = getattr(scorer, "judge", None)
    ours = type(scorer).__module__.startswith("citelab.evals.")
    return ours and (judge is None or type(judge) in {LexicalJudge, TrainedLexicalJudge})
