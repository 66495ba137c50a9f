"""The ``processes`` executor: records scored in a pool of worker processes on this machine.

The workers are started with ``forkserver`` (``spawn`` where a platform has none), never
forked from this process, which may run threads (a notebook's kernel does). What crosses to
a worker is plain data: the scorers' configurations once (each worker rebuilds the scorers
from them), then for each chunk of records (:data:`CHUNK` records) their JSON lines and their
cases. This process scores too: the workers take chunks from the front, two at a time each
so that none waits (fed from a thread, as starting a worker waits for the process server),
and this process scores chunks from the back, leaving the last two per worker to them — so
the scoring starts at once, while the workers are still starting, and a few records go to
the workers alone. The rows are put back in the records' order: the same tables as one process
scores. Cases are answered in this process (as ``local`` answers them: their model calls
wait on the network); only scoring is shared with the workers.

A model judge (the LLM judge) scores in one process, its questions asked concurrently in
one event loop: the executor refuses it. A worker's exception is raised here; a worker that
dies is a :class:`~citelab.WorkerLost`.
"""

from __future__ import annotations

import collections
import multiprocessing
import os
import pickle
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from citelab._collector import bulk_scoring
from citelab._errors import CitelabError, ConfigError, WorkerLost
from citelab.evals.dataset import Case
from citelab.evals.execution._local import answer_here
from citelab.evals.execution._protocol import AnswerFigures, Answering
from citelab.evals.execution._scoring import PortableScoring, ScoringJob
from citelab.evals.records import CaseRecord
from citelab.evals.results import ScoredRows, score_rows
from citelab.evals.scorers import Scorer

__all__ = ["ProcessExecutor", "cpus", "refuse_model_judges", "start_method"]


def cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - not on Linux


def start_method() -> str:
    """How worker processes start: ``forkserver`` where the platform has it, else ``spawn``."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


class ProcessExecutor:
    """Scores in ``workers`` processes beside this one (default: one per CPU but one, at
    least one); see the module docs."""

    name = "processes"

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise ConfigError(f"workers must be at least 1, got {workers}")
        self.workers = workers or max(1, cpus() - 1)
        self._pool: ProcessPoolExecutor | None = None
        self._scorers: PortableScoring | None = None

    async def answer(
        self,
        answering: Answering,
        indices: Sequence[int],
        keep: Callable[[CaseRecord], None],
        scoring: ScoringJob,
    ) -> AnswerFigures:
        self.prepare(scoring)  # a model judge is refused before any case runs
        return await answer_here(answering, indices, keep)

    def prepare(self, scoring: ScoringJob) -> None:
        """Start the workers now, so that they import and build the scorers while this
        process reads (or answers) the records."""
        pool = self._start(scoring)
        for future in [pool.submit(_ready) for _ in range(self.workers)]:
            future.add_done_callback(_quietly)

    def score(self, scoring: ScoringJob, records: Sequence[CaseRecord]) -> ScoredRows:
        if not records:
            return ScoredRows()
        pool = self._start(scoring)
        chunks = [records[start : start + CHUNK] for start in range(0, len(records), CHUNK)]
        queue = _Chunks(len(chunks), reserved=2 * self.workers)
        # The workers are fed from a thread of their own: starting a worker waits for the
        # process server, and this thread scores meanwhile.
        feeder = _Feeder(pool, chunks, scoring, 2 * self.workers, queue)
        feeder.start()
        rows: dict[int, ScoredRows] = {}
        try:
            while (index := queue.take(last=True)) is not None:
                with bulk_scoring():
                    rows[index] = score_rows(chunks[index], scoring.cases, scoring.scorers)
        except BaseException:
            queue.close()  # the workers stop too
            raise
        finally:
            feeder.join()
        rows.update(feeder.result())
        return ScoredRows.concat(rows[index] for index in range(len(chunks)))

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "workers": self.workers, "start_method": start_method()}

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
            self._scorers = None

    def _start(self, scoring: ScoringJob) -> ProcessPoolExecutor:
        refuse_model_judges(scoring)
        portable = scoring.portable()
        if self._pool is not None and portable != self._scorers:
            self.close()  # other scorers: workers of their own
        if self._pool is None:
            context = multiprocessing.get_context(start_method())
            if start_method() == "forkserver":
                # The server imports the scoring code once, NLTK's punkt splitter included
                # (most of a worker's start-up); each worker is a copy of it.
                context.set_forkserver_preload([__name__, *_PRELOAD])
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_set_up, initargs=(portable,)
            )
            self._scorers = portable
        return self._pool


CHUNK = 200
"""Records per chunk shared between the workers and this process."""

_PRELOAD = ("punkt",)
"""Modules every scoring worker needs that the scoring code imports only when first used."""


def refuse_model_judges(scoring: ScoringJob) -> None:
    """A model judge scores in one process (see the module docs): a clear error if any."""
    judges = scoring.judges()
    if judges:
        raise ConfigError(
            f"processes: a model judge ({judges[0].name}) scores in one process (its calls "
            "run concurrently in one event loop: see workers); score with the local executor"
        )


def _cases_of(
    records: Sequence[CaseRecord], cases: Mapping[tuple[str, str], Case]
) -> dict[tuple[str, str], Case]:
    wanted = {(record.dataset, record.case_id) for record in records}
    return {key: cases[key] for key in wanted if key in cases}


class _Chunks:
    """The indices of the chunks no one has taken yet: the workers take from the front, this
    process from the back but for the last ``reserved`` (the workers' share, so that a few
    records all go to the workers); once closed (an error, or this process stopped) no one
    takes."""

    def __init__(self, count: int, reserved: int) -> None:
        self._waiting = collections.deque(range(count))
        self._reserved = reserved
        self._lock = threading.Lock()

    def take(self, *, last: bool = False) -> int | None:
        with self._lock:
            if len(self._waiting) <= (self._reserved if last else 0):
                return None
            return self._waiting.pop() if last else self._waiting.popleft()

    def close(self) -> None:
        with self._lock:
            self._waiting.clear()


class _Feeder(threading.Thread):
    """Keeps each worker ``held`` chunks ahead (one scoring, one waiting to be), collects
    their rows, and on a worker's error closes the queue (this process stops too)."""

    def __init__(
        self,
        pool: ProcessPoolExecutor,
        chunks: Sequence[Sequence[CaseRecord]],
        scoring: ScoringJob,
        held: int,
        queue: _Chunks,
    ) -> None:
        super().__init__(name="citelab-scoring-feeder", daemon=True)
        self._pool, self._chunks, self._scoring = pool, chunks, scoring
        self._held, self._queue = held, queue
        self._rows: dict[int, ScoredRows] = {}
        self._error: BaseException | None = None

    def run(self) -> None:
        held: dict[Future[ScoredRows], int] = {}
        try:
            while True:
                while len(held) < self._held and (index := self._queue.take()) is not None:
                    part = self._chunks[index]
                    lines = [record.model_dump_json().encode() for record in part]
                    cases = _cases_of(part, self._scoring.cases)
                    held[self._pool.submit(_score_slice, lines, cases)] = index
                if not held:
                    return
                done, _ = wait(held, return_when=FIRST_COMPLETED)
                for future in done:
                    self._rows[held.pop(future)] = _result(future)
        except BaseException as exc:  # raised in the calling thread by result()
            self._error = exc
            self._queue.close()
            for future in held:
                future.cancel()

    def result(self) -> dict[int, ScoredRows]:
        """The workers' rows by chunk (after :meth:`join`), or the error one of them raised."""
        if self._error is not None:
            raise self._error
        return self._rows


def _result(future: Future[ScoredRows]) -> ScoredRows:
    try:
        return future.result()
    except BrokenProcessPool as exc:
        raise WorkerLost(f"a scoring process died (killed, or out of memory): {exc}") from exc


def _quietly(future: Future[Any]) -> None:
    """A warm-up's outcome is not needed: a failure shows again when the scoring starts."""
    future.exception()


# --- in the worker processes ----------------------------------------------------------------

_SCORERS: list[Scorer] = []
_FAILED: list[CitelabError] = []


def _set_up(portable: PortableScoring) -> None:
    """Build the scorers once per worker (a failure is raised by the first slice). A worker
    ignores Ctrl-C: a terminal sends it to every process of the command, and this process
    answers it (stops the pool, says what is kept) without a traceback from each worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _SCORERS[:] = portable.build()
    except CitelabError as exc:
        _FAILED.append(exc)


def _ready() -> None:
    return None


def _score_slice(lines: list[bytes], cases: dict[tuple[str, str], Case]) -> ScoredRows:
    if _FAILED:
        raise _sendable(_FAILED[0])
    try:
        with bulk_scoring():  # see citelab._collector
            records = [CaseRecord.model_validate_json(line) for line in lines]
            return score_rows(records, cases, _SCORERS)
    except Exception as exc:
        raise _sendable(exc) from None


def _sendable(exc: Exception) -> Exception:
    """``exc`` if it survives the way back to the caller (pickled there and back), else a
    :class:`~citelab.CitelabError` with its type and message: an exception whose class
    cannot be rebuilt from its arguments would break the pool instead."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return CitelabError(f"{type(exc).__name__}: {exc}")
    return exc
