"""The ``ray`` executor: a run's cases on a Ray cluster (``citelab[ray]``).

How a run goes:

- The driver (the process that called :func:`~citelab.evals.run`) connects to the cluster at
  ``address``, or to the one it is already connected to, or starts a local one for the run;
  it puts the worker settings in Ray's object store once and starts ``workers`` actors (one
  CPU each).
- Each actor (:class:`_Worker`) builds its answering (the runner's services, search indexes
  and model clients, from :meth:`~citelab.evals.execution.Answering.portable`) once and
  keeps it for the run, and rebuilds the scorers from their configurations.
- The pending cases go out in small batches, a few per actor in flight, so every worker keeps
  its ``concurrency`` slots busy (the bound is per worker, as a local run's is per process).
  An actor scores each record where it answered it (judges run where the answers are) and
  sends back the record with its table rows (:class:`~citelab.evals.results.ScoredRows`).
  The driver gives every record to the runner as it arrives (which writes it to
  ``records.jsonl`` and moves the one progress bar); the rows are put together in the
  records' order, so the results are the same as local (timing columns aside).
- Scoring recorded cases (``rescore``, and cases a run resumed): the records go out as their
  JSON lines in batches of at most :data:`_SCORE_BATCH`, each worker scores a batch into one
  columnar table and the driver only concatenates the tables in order.
- Model-call cache: every worker reads and writes the run's cache folder
  (``<out>/cache/models``), so on a cluster of several machines the output folder must be on
  a shared file system (as must corpora given by path).
- A worker that dies: Ray starts its actor again (which builds its services again) and re-runs
  the batches it held, up to :data:`RETRIES` times, then :class:`~citelab.WorkerLost`.
  Nothing of a batch is kept before it comes back, so no case is lost or written twice; a
  killed driver resumes from ``records.jsonl`` as a local run does.
- A case whose turn fails is recorded once, with its error, as in a local run; any other
  exception in a worker ends the run with that exception, as it would locally.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from citelab._errors import ConfigError, MissingDependency, WorkerLost
from citelab.evals.dataset import Case
from citelab.evals.execution._protocol import AnswerFigures, Answering
from citelab.evals.execution._scoring import PortableScoring, ScoringJob, concurrent_judges
from citelab.evals.judges import score_deferring
from citelab.evals.records import CaseRecord
from citelab.evals.results import ScoredRows, score_record, score_rows

__all__ = ["RETRIES", "RayExecutor"]

RETRIES = 3
"""How many times a dead worker's actor is started again and its batches re-run."""
_CALLS_PER_ACTOR = 1000
"""Ray's bound on an actor's concurrent calls; the real bound is the run's concurrency."""
_SCORE_BATCH = 200
"""Records per scoring batch at most: a batch's rows come back while the worker scores the
next."""
_SCORE_DEPTH = 2
"""Scoring batches in flight per worker: one scoring, one waiting (sent while it scores)."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingDependency("ray", "The Ray executor", extra="ray") from exc
    return ray


@dataclasses.dataclass(frozen=True)
class _Settings:
    """What every worker is given, once (through Ray's object store)."""

    scoring: PortableScoring
    cases: Mapping[tuple[str, str], Case]
    answering: Callable[[], Answering] | None = None
    """Builds the worker's answering; None for workers that only score."""
    indices: tuple[int, ...] = ()
    """The cases the run answers (what the answering sets up for)."""


class _Worker:
    """A Ray actor: one worker's answering (services, indexes, model clients) and scorers,
    built once."""

    def __init__(self, settings: _Settings) -> None:
        self.settings = settings
        self.cases = settings.cases
        self.scorers = settings.scoring.build()
        self.judges = concurrent_judges(self.scorers)
        """Model judges (the LLM judge): their questions are asked concurrently (see
        :meth:`_scored`), at most each judge's ``concurrency`` in flight in this worker."""
        self.scoring = asyncio.Semaphore(max((j.concurrency for j in self.judges), default=1))
        self.answering: Answering | None = None
        self.ready: asyncio.Future[Answering] | None = None
        self.gate: asyncio.Semaphore | None = None
        self.setup_seconds = 0.0
        self.cpu = time.process_time()

    async def set_up(self) -> int:
        """Build the answering (once; later calls wait for the first); returns the pid."""
        if self.ready is None:
            self.ready = asyncio.ensure_future(self._build())
        await self.ready
        return os.getpid()

    async def run(self, indices: list[int]) -> list[tuple[CaseRecord, ScoredRows]]:
        """Answer the cases at ``indices`` (at most ``concurrency`` at once in this worker,
        across batches) and score each record."""
        await self.set_up()
        return list(await asyncio.gather(*(self._one(index) for index in indices)))

    async def score(self, lines: list[bytes]) -> ScoredRows:
        """Score records given as their JSON ``lines``; their rows in one table, in order."""
        records = [CaseRecord.model_validate_json(line) for line in lines]
        if not self.judges:
            return score_rows(records, self.cases, self.scorers)
        parts = await asyncio.gather(*(self._scored(record) for record in records))
        return ScoredRows.concat(parts)

    async def stats(self) -> dict[str, Any]:
        answering = self.answering
        return {
            "pid": os.getpid(),
            "setup_seconds": self.setup_seconds,
            "cpu_seconds": time.process_time() - self.cpu,
            "cache": answering.model_calls() if answering is not None else {},
            "streaming": dict(answering.streaming) if answering is not None else {},
        }

    async def close(self) -> None:
        """Close the model clients' and judges' connections (they belong to this actor's
        event loop)."""
        if self.answering is not None:
            await self.answering.aclose()
        for judge in self.judges:
            await judge.aclose()

    async def _one(self, index: int) -> tuple[CaseRecord, ScoredRows]:
        assert self.answering is not None
        assert self.gate is not None
        async with self.gate:
            record = await self.answering.answer(index)
        return record, await self._scored(record)

    async def _scored(self, record: CaseRecord) -> ScoredRows:
        """Every scorer on ``record``. With a model judge, as the local executor scores:
        deferring, each unknown verdict asked in this actor's event loop while other records
        score, at most the judges' largest ``concurrency`` records at once in this worker
        (and each judge's own bound on its calls in flight)."""
        if not self.judges:
            return score_record(record, self.cases, self.scorers)
        async with self.scoring:
            return await score_deferring(lambda: score_record(record, self.cases, self.scorers))

    async def _build(self) -> Answering:
        began = time.perf_counter()
        if self.settings.answering is None:
            raise ConfigError("this Ray worker was started to score only")
        answering = self.settings.answering()
        await answering.set_up(self.settings.indices)
        self.gate = asyncio.Semaphore(answering.concurrency)
        self.setup_seconds = time.perf_counter() - began
        self.cpu = time.process_time()  # the run's CPU, without the set-up's
        self.answering = answering
        return answering


class RayExecutor:
    """Answers and scores on Ray actors; see the module docs."""

    name = "ray"

    def __init__(self, *, address: str | None = None, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise ConfigError(f"workers must be at least 1, got {workers}")
        self.ray = _import_ray()
        self.address = address
        self.workers = workers
        self.started = False
        """Whether this executor started the (local) cluster, and so shuts it down."""
        self.batch_size = 0
        self._actors: list[Any] = []
        self._scored: dict[str, ScoredRows] = {}
        self._stats: list[dict[str, Any]] = []
        self._pids: list[int] = []
        self._shared: Any = None
        self._connect()
        self.count = self._worker_count()
        """How many actors the run uses (checked against the cluster's CPUs up front)."""

    # -- the Executor protocol --------------------------------------------------------------

    async def answer(
        self,
        answering: Answering,
        indices: Sequence[int],
        keep: Callable[[CaseRecord], None],
        scoring: ScoringJob,
    ) -> AnswerFigures:
        # The driver's own model clients only answered the preflight: close them here.
        await answering.aclose()
        figures = AnswerFigures()
        began = time.perf_counter()
        settings = _Settings(scoring.portable(), scoring.cases, answering.portable(), (*indices,))
        actors = self._start(settings)
        self._pids = list(await asyncio.gather(*(_wait(a.set_up.remote()) for a in actors)))
        figures.setup_seconds = time.perf_counter() - began
        began, cpu = time.perf_counter(), time.process_time()
        await self._dispatch(answering, indices, keep, answering.concurrency)
        figures.seconds = time.perf_counter() - began
        self._stats = list(await asyncio.gather(*(_wait(a.stats.remote()) for a in actors)))
        workers_cpu = sum(stats["cpu_seconds"] for stats in self._stats)
        figures.cpu_seconds = time.process_time() - cpu + workers_cpu
        figures.model_calls = self._model_calls()
        for stats in self._stats:
            figures.streaming.update(stats["streaming"])
        return figures

    def score(self, scoring: ScoringJob, records: Sequence[CaseRecord]) -> ScoredRows:
        # The records this run's workers scored as they answered them are kept; the others
        # (all of a rescore's, those a run resumed) go out in batches that each cover
        # consecutive records, so the tables come back in the records' order.
        missing = [i for i, record in enumerate(records) if record.key not in self._scored]
        batches: dict[int, ScoredRows] = {}
        if missing:
            actors = self._start(_Settings(scoring.portable(), scoring.cases))
            size = max(1, min(_SCORE_BATCH, math.ceil(len(missing) / (len(actors) * 4))))
            batches = self._score_batches(actors, records, _batch_starts(missing, size))
        parts: list[ScoredRows] = []
        index = 0
        while index < len(records):
            if index in batches:
                part = batches[index]
                index += len(part.keys)
            else:
                part = self._scored[records[index].key]
                index += 1
            parts.append(part)
        return ScoredRows.concat(parts)

    def prepare(self, scoring: ScoringJob) -> None:
        self._start(_Settings(scoring.portable(), scoring.cases))

    def config(self) -> dict[str, Any]:
        restarted = sum(
            1
            for before, stats in zip(self._pids, self._stats, strict=False)
            if stats["pid"] != before
        )
        return {
            "name": self.name,
            "address": self.address,
            "local_cluster": self.started,
            "workers": self.count,
            "batch_size": self.batch_size,
            "restarted_workers": restarted,
            "ray": str(getattr(self.ray, "__version__", "unknown")),
        }

    def close(self) -> None:
        ray = self.ray
        if self._actors:
            # Closing connections is a courtesy: an actor that is gone has none to close.
            with contextlib.suppress(Exception):
                ray.get([actor.close.remote() for actor in self._actors], timeout=30)
            for actor in self._actors:
                ray.kill(actor)
            self._actors = []
            self._shared = None
        if self.started and ray.is_initialized():
            ray.shutdown()
            self.started = False

    # -- running ----------------------------------------------------------------------------

    def _start(self, settings: _Settings) -> list[Any]:
        """Connect to the cluster and start the actors (once per run)."""
        if self._actors:
            return self._actors
        ray = self.ray
        worker = ray.remote(_Worker).options(
            num_cpus=1,
            max_restarts=RETRIES,
            max_task_retries=RETRIES,
            max_concurrency=_CALLS_PER_ACTOR,
        )
        # Held for the run: an actor started again reads its settings from this object.
        self._shared = ray.put(settings)
        self._actors = [worker.remote(self._shared) for _ in range(self.count)]
        return self._actors

    def _worker_count(self) -> int:
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        count = self.workers or max(1, cpus)
        if count > cpus:
            self.close()
            raise ConfigError(
                f"{count} Ray workers need {count} CPUs; the cluster has {cpus} "
                "(use fewer workers, or add nodes)"
            )
        return count

    def _connect(self) -> None:
        ray = self.ray
        if ray.is_initialized():
            return
        try:
            if self.address is not None:
                ray.init(address=self.address, logging_level="WARNING")
            else:
                # A local cluster is this machine's own business: no usage report goes out.
                os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
                ray.init(
                    num_cpus=self.workers,
                    include_dashboard=False,
                    logging_level="WARNING",
                )
                self.started = True
        except ConnectionError as exc:
            raise WorkerLost(f"cannot reach the Ray cluster at {self.address}: {exc}") from exc

    def _model_calls(self) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {}
        for stats in self._stats:
            for name, calls in stats["cache"].items():
                entry = counts.setdefault(name, {"hits": 0, "misses": 0})
                entry["hits"] += calls["hits"]
                entry["misses"] += calls["misses"]
        return counts

    async def _dispatch(
        self,
        answering: Answering,
        indices: Sequence[int],
        keep: Callable[[CaseRecord], None],
        concurrency: int,
    ) -> None:
        """Keep a few batches in flight per actor; give each record to ``keep`` as its batch
        comes back, and send that actor the next batch."""
        size = self.batch_size = max(1, min(16, concurrency // 2))
        batches = deque(list(indices[i : i + size]) for i in range(0, len(indices), size))
        depth = math.ceil(concurrency / size) + 1
        running: dict[asyncio.Future[Any], tuple[int, list[int]]] = {}

        def submit(slot: int) -> None:
            if batches:
                batch = batches.popleft()
                running[_wait(self._actors[slot].run.remote(batch))] = (slot, batch)

        for slot in range(len(self._actors)):
            for _ in range(depth):
                submit(slot)
        try:
            while running:
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    slot, batch = running.pop(future)
                    for record, scored in self._outcome(future, batch, answering):
                        self._scored[record.key] = scored
                        keep(record)
                    submit(slot)
        finally:
            for future in running:
                future.cancel()

    def _outcome(
        self, future: asyncio.Future[Any], batch: list[int], answering: Answering
    ) -> list[tuple[CaseRecord, ScoredRows]]:
        try:
            result: list[tuple[CaseRecord, ScoredRows]] = future.result()
        except self.ray.exceptions.RayTaskError as exc:
            raise exc.as_instanceof_cause() from None
        except self.ray.exceptions.RayActorError as exc:
            cases = [answering.key(index) for index in batch]
            raise WorkerLost(
                f"a Ray worker died {RETRIES + 1} times running cases {cases[:3]}…; the cases "
                f"finished so far are in records.jsonl (run again to resume): {exc}"
            ) from exc
        return result

    def _score_batches(
        self, actors: list[Any], records: Sequence[CaseRecord], starts: list[tuple[int, int]]
    ) -> dict[int, ScoredRows]:
        """Score ``records[start:stop]`` for every ``(start, stop)`` of ``starts``: start →
        its table. A batch goes out when its worker has room for it, and the next goes to a
        worker before the driver reads what came back, so the driver's work overlaps the
        workers'."""
        ray = self.ray
        queue = deque(starts)
        running: dict[Any, tuple[int, int]] = {}
        tables: dict[int, ScoredRows] = {}

        def submit(slot: int) -> None:
            if not queue:
                return
            start, stop = queue.popleft()
            lines = [record.model_dump_json().encode() for record in records[start:stop]]
            running[actors[slot].score.remote(lines)] = (slot, start)

        for _ in range(_SCORE_DEPTH):
            for slot in range(len(actors)):
                submit(slot)
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            slot, start = running.pop(done[0])
            submit(slot)
            tables[start] = self._get(done)[0]
        return tables

    def _get(self, refs: list[Any]) -> list[Any]:
        ray = self.ray
        try:
            return list(ray.get(refs))
        except ray.exceptions.RayTaskError as exc:
            raise exc.as_instanceof_cause() from None
        except ray.exceptions.RayActorError as exc:
            raise WorkerLost(f"a Ray worker died {RETRIES + 1} times while scoring: {exc}") from exc


def _batch_starts(indices: list[int], size: int) -> list[tuple[int, int]]:
    """``(start, stop)`` batches of at most ``size`` over ascending ``indices``, each of
    consecutive indices only."""
    batches: list[tuple[int, int]] = []
    for index in indices:
        if batches and batches[-1][1] == index and index - batches[-1][0] < size:
            batches[-1] = (batches[-1][0], index + 1)
        else:
            batches.append((index, index + 1))
    return batches


def _wait(ref: Any) -> asyncio.Future[Any]:
    """An asyncio future for a Ray object reference."""
    return asyncio.wrap_future(ref.future())
