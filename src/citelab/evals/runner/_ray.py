"""The Ray executor: an evaluation's cases on a Ray cluster (``executor="ray"``, ``citelab[ray]``).

How a run goes:

- The driver (the process that called :func:`~citelab.evals.run`) connects to the cluster at
  ``address``, or to the one it is already connected to, or starts a local one for the run;
  it puts the plan in Ray's object store once and starts ``workers`` actors (one CPU each).
- Each actor (:class:`_Worker`) builds its services, search indexes and model clients once,
  with the local runner's own code, and keeps them for the run.
- The pending cases go out in small batches, a few per actor in flight, so every worker keeps
  its ``concurrency`` slots busy (the bound is per worker, as a local run's is per process).
  An actor scores each record where it answered it (judges run where the answers are) and
  sends back the record with its table rows
  (:class:`~citelab.evals.results.ScoredRows`). The driver writes every record to
  ``records.jsonl`` as it arrives, moves the one progress bar and writes the same tables and
  report as a local run: the rows are put together in the plan's order, so the results are
  the same (timing columns aside).
- Scoring recorded cases (``rescore``, and cases a run resumed): the records go out in
  batches of at most :data:`_SCORE_BATCH`, each worker scores a batch into one columnar
  table (a few lists per column) and the driver only concatenates the tables in order. In a
  rescore the workers read their batches' records from ``records.jsonl`` themselves (by byte
  span) when they see the very file the driver read (same size and modification time);
  otherwise (and for the cases a run resumed) the driver sends the records' lines.
- Model-call cache: every worker reads and writes the run's cache folder
  (``<out>/cache/models``), so on a cluster of several machines the output folder must be on
  a shared file system (as must corpora given by path); there the workers also read
  ``records.jsonl`` themselves.
- A worker that dies: Ray starts its actor again (which builds its services again) and re-runs
  the batches it held, up to :data:`RETRIES` times. Nothing of a batch is written before it
  comes back, so no case is lost or written twice; a killed driver resumes from
  ``records.jsonl`` as a local run does.
- A case whose turn fails is recorded once, with its error, as in a local run; any other
  exception in a worker ends the run with that exception, as it would locally.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import math
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citelab._errors import ConfigError, MissingDependency, WorkerLost
from citelab._memory import paused_garbage_collection
from citelab.evals.judges import Judge, build_judge, score_deferring
from citelab.evals.records import CaseRecord, RecordsFile
from citelab.evals.results import ScoredRows, concurrent_judges, score_record, score_rows
from citelab.evals.runner._batch import BatchRunner
from citelab.evals.scorers import Scorer, build_scorers

if TYPE_CHECKING:
    from citelab.evals.runner._plan import RunPlan, Unit

__all__ = ["RETRIES", "RayExecutor"]

RETRIES = 3
"""How many times a dead worker's actor is started again and its batches re-run."""
_CALLS_PER_ACTOR = 1000
"""Ray's bound on an actor's concurrent calls; the real bound is the run's concurrency."""
_SCORE_BATCH = 200
"""Records per scoring batch at most: a Ray call costs about a millisecond, scoring 200
records about a hundred, and a batch's rows come back while the worker scores the next."""
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

    plan: RunPlan
    """The plan without its scorers (they are rebuilt from ``scorers`` on the worker)."""
    scorers: list[dict[str, Any]]
    cache_dir: str | None
    """The run's model-call cache folder (``<out>/cache/models``); None to score only."""
    concurrency: int = 8
    cache: bool = True
    stream_calls: bool = False
    judges: tuple[int | None, ...] = ()
    """For each scorer, which of the plan's judges it used (:func:`_judge_groups`): scorers
    that shared a judge in the driver share one on the worker, so an LLM judge's verdicts
    (its memo) serve all of them, as in a local run."""


class _Worker:
    """A Ray actor: one worker's services, indexes, model clients and scorers, built once."""

    def __init__(self, settings: _Settings) -> None:
        self.settings = settings
        scorers = _rebuilt_scorers(settings.scorers, settings.judges)
        self.plan = dataclasses.replace(settings.plan, scorers=scorers)
        self.cases = self.plan.cases
        self.judges = concurrent_judges(scorers)
        """Model judges (the LLM judge): their questions are asked concurrently (see
        :meth:`_scored`), at most each judge's ``concurrency`` in flight in this worker."""
        self.scoring = asyncio.Semaphore(max((j.concurrency for j in self.judges), default=1))
        self.runner: BatchRunner | None = None
        self.ready: asyncio.Future[BatchRunner] | None = None
        self.gate = asyncio.Semaphore(settings.concurrency)
        self.setup_seconds = 0.0
        self.cpu = time.process_time()

    async def set_up(self) -> int:
        """Build the services (once; later calls wait for the first); returns the pid."""
        if self.ready is None:
            self.ready = asyncio.ensure_future(self._build())
        await self.ready
        return os.getpid()

    async def run(self, indices: list[int]) -> list[tuple[CaseRecord, ScoredRows]]:
        """Run the plan's units at ``indices`` (at most ``concurrency`` at once in this
        worker, across batches) and score each record."""
        await self.set_up()
        assert self.runner is not None
        units = [self.plan.units[index] for index in indices]
        return list(await asyncio.gather(*(self._one(self.runner, unit) for unit in units)))

    async def reads(self, path: str, size: int, mtime_ns: int) -> bool:
        """Whether this worker sees the file the driver read (same size and modification
        time), so it can read records from it (:meth:`score`)."""
        return _unchanged(path, size, mtime_ns)

    async def score(
        self,
        lines: list[bytes] | None = None,
        path: str | None = None,
        spans: list[tuple[int, int]] | None = None,
    ) -> ScoredRows:
        """Score records given as their JSON ``lines``, or read from the byte ``spans`` of
        the file at ``path``; their rows in one table, in order."""
        if lines is None:
            if path is None or spans is None:
                raise ConfigError("score needs lines, or a path and spans")
            lines = _read_spans(path, spans)
        with paused_garbage_collection():
            records = [CaseRecord.model_validate_json(line) for line in lines]
            if not self.judges:
                return score_rows(records, self.cases, self.plan.scorers)
        parts = await asyncio.gather(*(self._scored(record) for record in records))
        return ScoredRows.concat(parts)

    async def stats(self) -> dict[str, Any]:
        runner = self.runner
        models = runner.models if runner is not None else {}
        return {
            "pid": os.getpid(),
            "setup_seconds": self.setup_seconds,
            "cpu_seconds": time.process_time() - self.cpu,
            "cache": {name: [model.hits, model.misses] for name, model in models.items()},
            "streaming": dict(runner.streaming) if runner is not None else {},
        }

    async def close(self) -> None:
        """Close the model clients' and judges' connections (they belong to this actor's
        event loop)."""
        if self.runner is not None:
            for model in self.runner.models.values():
                await model.aclose()
        for judge in self.judges:
            await judge.aclose()

    async def _one(self, runner: BatchRunner, unit: Unit) -> tuple[CaseRecord, ScoredRows]:
        async with self.gate:
            record = await runner._run_unit(unit)
        return record, await self._scored(record)

    async def _scored(self, record: CaseRecord) -> ScoredRows:
        """Every scorer on ``record``. With a model judge, as the local executor scores:
        deferring (:func:`~citelab.evals.judges.score_deferring`), each unknown verdict
        asked in this actor's event loop while other records score, at most the judges'
        largest ``concurrency`` records at once in this worker (and each judge's own bound
        on its calls in flight)."""
        if not self.judges:
            return score_record(record, self.cases, self.plan.scorers)
        async with self.scoring:
            return await score_deferring(
                lambda: score_record(record, self.cases, self.plan.scorers)
            )

    async def _build(self) -> BatchRunner:
        began = time.perf_counter()
        settings = self.settings
        if settings.cache_dir is None:
            raise ConfigError("this Ray worker was started to score only")
        runner = BatchRunner(
            self.plan,
            Path(settings.cache_dir),
            concurrency=settings.concurrency,
            cache=settings.cache,
            stream_calls=settings.stream_calls,
        )
        runner._load_corpora()
        await runner._prepare(self.plan.units)
        # What exists now lives as long as the actor: keep the collector off it (see the
        # runner's _long_lived_frozen).
        gc.freeze()
        self.setup_seconds = time.perf_counter() - began
        self.cpu = time.process_time()  # the run's CPU, without the set-up's
        self.runner = runner
        return runner


class RayExecutor:
    """Runs a plan's cases on Ray actors; see the module docs."""

    name = "ray"

    def __init__(self, *, address: str | None = None, workers: int | None = None) -> None:
        self.ray = _import_ray()
        self.address = address
        self.workers = workers
        self.started = False
        """Whether this executor started the (local) cluster, and so shuts it down."""
        self.batch_size = 0
        self.records_from: str | None = None
        """How the workers got the recorded cases they scored: ``file`` (they read
        ``records.jsonl`` themselves) or ``sent``; None when they scored none."""
        self._actors: list[Any] = []
        self._scored: dict[str, ScoredRows] = {}
        self._stats: list[dict[str, Any]] = []
        self._pids: list[int] = []
        self._shared: Any = None
        self._connect()
        self.count = self._worker_count()
        """How many actors the run uses (checked against the cluster's CPUs up front)."""

    # -- the Executor protocol --------------------------------------------------------------

    async def execute(
        self, batch: BatchRunner, units: list[Unit], keep: Callable[[CaseRecord], None]
    ) -> None:
        # The driver's own model clients only answered the preflight: close them here.
        for model in batch.models.values():
            await model.aclose()
        began = time.perf_counter()
        actors = self._start(_settings(batch))
        self._pids = list(await asyncio.gather(*(_wait(a.set_up.remote()) for a in actors)))
        batch.setup_seconds = time.perf_counter() - began
        began, cpu = time.perf_counter(), time.process_time()
        await self._dispatch(batch, units, keep)
        batch.seconds = time.perf_counter() - began
        self._stats = list(await asyncio.gather(*(_wait(a.stats.remote()) for a in actors)))
        batch.cpu_seconds = time.process_time() - cpu + sum(s["cpu_seconds"] for s in self._stats)
        for stats in self._stats:
            batch.streaming.update(stats["streaming"])

    def score(
        self, plan: RunPlan, records: Sequence[CaseRecord], source: RecordsFile | None = None
    ) -> ScoredRows:
        # The records this run's workers scored as they answered them are kept; the others
        # (all of a rescore's, those a run resumed) go out in batches that each cover
        # consecutive records, so the tables come back in the records' order.
        missing = [i for i, record in enumerate(records) if record.key not in self._scored]
        batches: dict[int, ScoredRows] = {}
        if missing:
            actors = self._start(_scoring_settings(plan))
            size = max(1, min(_SCORE_BATCH, math.ceil(len(missing) / (len(actors) * 4))))
            starts = _batch_starts(missing, size)
            # What comes back stays alive: collections while it piles up would walk it all.
            with paused_garbage_collection():
                batches = self._score_batches(actors, records, starts, source)
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

    def prepare(self, plan: RunPlan) -> None:
        self._start(_scoring_settings(plan))

    def cache_counts(self, batch: BatchRunner) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {}
        for stats in self._stats:
            for name, (hits, misses) in stats["cache"].items():
                entry = counts.setdefault(name, {"hits": 0, "misses": 0})
                entry["hits"] += hits
                entry["misses"] += misses
        return counts

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
            "records_from": self.records_from,
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

    async def _dispatch(
        self, runner: BatchRunner, units: list[Unit], keep: Callable[[CaseRecord], None]
    ) -> None:
        """Keep a few batches in flight per actor; give each record to ``keep`` as its batch
        comes back, and send that actor the next batch."""
        position = {unit.key: index for index, unit in enumerate(runner.plan.units)}
        indices = [position[unit.key] for unit in units]
        concurrency = runner.concurrency
        size = self.batch_size = max(1, min(16, concurrency // 2))
        batches = deque(indices[i : i + size] for i in range(0, len(indices), size))
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
                    for record, scored in self._outcome(future, batch, runner):
                        self._scored[record.key] = scored
                        keep(record)
                    submit(slot)
        finally:
            for future in running:
                future.cancel()

    def _outcome(
        self, future: asyncio.Future[Any], batch: list[int], runner: BatchRunner
    ) -> list[tuple[CaseRecord, ScoredRows]]:
        try:
            result: list[tuple[CaseRecord, ScoredRows]] = future.result()
        except self.ray.exceptions.RayTaskError as exc:
            raise exc.as_instanceof_cause() from None
        except self.ray.exceptions.RayActorError as exc:
            cases = [runner.plan.units[index].key for index in batch]
            raise WorkerLost(
                f"a Ray worker died {RETRIES + 1} times running cases {cases[:3]}…; the cases "
                f"finished so far are in records.jsonl (run again to resume): {exc}"
            ) from exc
        return result

    def _score_batches(
        self,
        actors: list[Any],
        records: Sequence[CaseRecord],
        starts: list[tuple[int, int]],
        source: RecordsFile | None,
    ) -> dict[int, ScoredRows]:
        """Score ``records[start:stop]`` for every ``(start, stop)`` of ``starts``: start →
        its table. A batch goes out when its worker has room for it, and the next goes to a
        worker before the driver reads what came back, so the driver's work overlaps the
        workers'. Workers that see ``source`` read the records from it."""
        ray = self.ray
        readable = source is not None and all(
            self._get([actor.reads.remote(source.path, source.size, source.mtime_ns)])[0]
            for actor in actors
        )
        self.records_from = "file" if readable else "sent"
        queue = deque(starts)
        running: dict[Any, tuple[int, int, int]] = {}
        tables: dict[int, ScoredRows] = {}

        def submit(slot: int) -> None:
            if not queue:
                return
            start, stop = queue.popleft()
            batch = records[start:stop]
            if readable:
                assert source is not None
                spans = [source.spans[record.key] for record in batch]
                ref = actors[slot].score.remote(None, source.path, spans)
            else:
                ref = actors[slot].score.remote(_lines(batch, source))
            running[ref] = (slot, start, stop)

        for _ in range(_SCORE_DEPTH):
            for slot in range(len(actors)):
                submit(slot)
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            slot, start, stop = running.pop(done[0])
            submit(slot)
            table: ScoredRows = self._get(done)[0]
            if table.keys != [record.key for record in records[start:stop]]:
                raise ConfigError(
                    f"records.jsonl changed while it was scored (at {records[start].key})"
                )
            tables[start] = table
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


def _lines(records: Sequence[CaseRecord], source: RecordsFile | None) -> list[bytes]:
    """The records' JSON lines: as the file they were read from has them (unchanged since),
    else written out."""
    if (
        source is None
        or not _unchanged(source.path, source.size, source.mtime_ns)
        or any(record.key not in source.spans for record in records)
    ):
        return [record.model_dump_json().encode() for record in records]
    return _read_spans(source.path, [source.spans[record.key] for record in records])


def _unchanged(path: str, size: int, mtime_ns: int) -> bool:
    """Whether the file at ``path`` is there with this size and modification time."""
    try:
        stat = os.stat(path)
    except OSError:
        return False
    return stat.st_size == size and stat.st_mtime_ns == mtime_ns


def _read_spans(path: str, spans: Sequence[tuple[int, int]]) -> list[bytes]:
    with open(path, "rb") as file:
        lines = []
        for start, stop in spans:
            file.seek(start)
            lines.append(file.read(stop - start))
    return lines


def _wait(ref: Any) -> asyncio.Future[Any]:
    """An asyncio future for a Ray object reference."""
    return asyncio.wrap_future(ref.future())


def _settings(runner: BatchRunner) -> _Settings:
    plan = runner.plan
    return _Settings(
        _without_scorers(plan),
        _scorer_specs(plan),
        str(runner.cache_dir.resolve()),
        runner.concurrency,
        runner.cache,
        runner.stream_calls,
        _judge_groups(plan),
    )


def _scoring_settings(plan: RunPlan) -> _Settings:
    """Settings for workers that only score."""
    return _Settings(_without_scorers(plan), _scorer_specs(plan), None, judges=_judge_groups(plan))


def _without_scorers(plan: RunPlan) -> RunPlan:
    # Scorers may hold clients (an LLM judge's); their configuration rebuilds them.
    return dataclasses.replace(plan, scorers=[])


def _scorer_specs(plan: RunPlan) -> list[dict[str, Any]]:
    return [scorer.config() for scorer in plan.scorers]


def _judge_groups(plan: RunPlan) -> tuple[int | None, ...]:
    """For each scorer of ``plan``, a number naming the judge instance it holds (scorers
    holding the same instance get the same number), or None for a scorer without a judge."""
    seen: dict[int, int] = {}
    groups: list[int | None] = []
    for scorer in plan.scorers:
        judge = getattr(scorer, "judge", None)
        if judge is None or "judge" not in scorer.config():
            groups.append(None)
        else:
            groups.append(seen.setdefault(id(judge), len(seen)))
    return tuple(groups)


def _rebuilt_scorers(specs: Sequence[dict[str, Any]], groups: Sequence[int | None]) -> list[Scorer]:
    """The scorers from their configurations, one judge built per group (see
    :func:`_judge_groups`; no groups: each scorer builds its own, as its configuration says)."""
    judges: dict[int, Judge] = {}
    configs: list[dict[str, Any]] = []
    for index, spec in enumerate(specs):
        config = dict(spec)
        group = groups[index] if index < len(groups) else None
        if group is not None:
            judge = judges.get(group)
            if judge is None:
                judge = judges[group] = build_judge(config["judge"])
            config["judge"] = judge
        configs.append(config)
    return build_scorers(configs)
