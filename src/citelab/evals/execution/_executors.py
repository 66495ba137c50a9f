"""Executors by name: ``local``, ``processes``, ``ray`` (:func:`get_executor`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from citelab._errors import ConfigError
from citelab.evals.execution._local import LocalExecutor
from citelab.evals.execution._processes import ProcessExecutor, cpus, refuse_model_judges
from citelab.evals.execution._protocol import Executor
from citelab.evals.execution._scoring import ScoringJob
from citelab.evals.judges import LexicalJudge, PairLexicalJudge
from citelab.evals.scorers import Scorer

if TYPE_CHECKING:
    from citelab.evals.execution._ray import RayExecutor

__all__ = ["EXECUTORS", "PER_PROCESS", "get_executor", "scoring_executor"]


def _local(address: str | None, workers: int | None) -> Executor:
    if address is not None or workers is not None:
        raise ConfigError("address and workers need executor 'processes' or 'ray'")
    return LocalExecutor()


def _processes(address: str | None, workers: int | None) -> Executor:
    if address is not None:
        raise ConfigError("address needs executor 'ray'")
    return ProcessExecutor(workers)


def _ray(address: str | None, workers: int | None) -> RayExecutor:
    from citelab.evals.execution._ray import RayExecutor  # imports Ray: on first use only

    return RayExecutor(address=address, workers=workers)


EXECUTORS: Mapping[str, Callable[[str | None, int | None], Executor]] = {
    "local": _local,
    "processes": _processes,
    "ray": _ray,
}
"""Executor name → how to build it from ``(address, workers)``."""


def get_executor(
    executor: str | Executor = "local",
    *,
    address: str | None = None,
    workers: int | None = None,
) -> Executor:
    """An executor by name, or the given object as is.

    ``local``: this process. ``processes``: ``workers`` worker processes on this machine
    (default: one per CPU). ``ray``: a Ray cluster (``citelab[ray]``): the one at ``address``
    (e.g. ``ray://head:10001`` or ``head:6379``; default: the cluster this process is
    connected to, else a local one started for the run), with ``workers`` actors (default:
    one per CPU of the cluster).
    """
    if not isinstance(executor, str):
        return executor
    build = EXECUTORS.get(executor)
    if build is None:
        raise ConfigError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    if workers is not None and workers < 1:
        raise ConfigError(f"workers must be at least 1, got {workers}")
    return build(address, workers)


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
    return ProcessExecutor(count) if count > 1 else LocalExecutor()


def _offline_and_ours(scorer: Scorer) -> bool:
    judge = getattr(scorer, "judge", None)
    ours = type(scorer).__module__.startswith("citelab.evals.")
    return ours and (judge is None or type(judge) in {LexicalJudge, PairLexicalJudge})
