"""Where the work of an evaluation runs: the one execution seam.

Two kinds of work go through an :class:`Executor`, whoever asks for them (the runner's
:func:`~citelab.evals.run` and :func:`~citelab.evals.rescore`, and
:func:`~citelab.evals.score_answers`):

* **answering** a run's cases: the runner hands the executor an :class:`Answering` (its
  batch runner: answer service, search indexes, model clients) and the cases' indices, and
  gets every record back as it is made;
* **scoring** records: a :class:`ScoringJob` (the gold cases and the scorers) and the
  records; the rows come back as one :class:`~citelab.evals.results.ScoredRows` table in the
  records' order, so the tables are the same wherever they were scored.

The executors (:data:`EXECUTORS`, built by :func:`get_executor`):

* ``local`` (:class:`LocalExecutor`): this process, one event loop. Cases run at most
  ``concurrency`` at a time; records are scored one after the other, and with a model judge
  (the LLM judge) many at once, each unknown verdict asked concurrently within the judge's
  bound while other records score.
* ``processes`` (:class:`ProcessExecutor`): scoring in a pool of worker processes started
  with ``forkserver`` (or ``spawn``), never forked from a process that may run threads; the
  scorers cross as their configurations, the records as their JSON lines. Cases are answered
  in this process. A model judge is refused (it scores concurrently in one process).
* ``ray`` (:class:`RayExecutor`, ``citelab[ray]``): answering and scoring on Ray actors,
  each record scored where it was answered; a worker that dies is restarted and its cases
  run again.

A worker's exception is raised in the calling process; a worker that is lost for good is a
:class:`~citelab.WorkerLost`. :func:`scoring_executor` chooses where ``citelab score``
scores (one process, or one per CPU for many answers).
"""

from typing import TYPE_CHECKING

from citelab._lazy import lazy_attributes
from citelab.evals.execution._executors import (
    EXECUTORS,
    PER_PROCESS,
    ExecutorFactory,
    get_executor,
    scoring_executor,
)
from citelab.evals.execution._local import LocalExecutor
from citelab.evals.execution._processes import ProcessExecutor, cpus, start_method
from citelab.evals.execution._protocol import AnswerFigures, Answering, Executor
from citelab.evals.execution._scoring import PortableScoring, ScoringJob, concurrent_judges

if TYPE_CHECKING:
    from citelab.evals.execution._ray import RayExecutor

# The Ray executor is imported on first use: it is the only one that needs Ray.
_LAZY = {"RayExecutor": "citelab.evals.execution._ray"}

__all__ = [
    "EXECUTORS",
    "PER_PROCESS",
    "AnswerFigures",
    "Answering",
    "Executor",
    "ExecutorFactory",
    "LocalExecutor",
    "PortableScoring",
    "ProcessExecutor",
    "RayExecutor",
    "ScoringJob",
    "concurrent_judges",
    "cpus",
    "get_executor",
    "scoring_executor",
    "start_method",
]

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
