"""The runner: every variant × model × dataset case through the answer service, then scores.

``run(suite)`` (or ``await run_async(suite)``):

1. loads the datasets, the agents and the corpora; builds each variant's agents by applying
   its overrides (a bad override names the suite file, the variant and the key);
2. runs every unit of work — one case (all its turns, one conversation) under one variant and
   one model — at most ``concurrency`` at a time, with a tqdm progress bar. Model calls go
   through a disk cache under the output folder, keyed by the request, so a re-run never
   re-queries a model; every finished unit is appended to ``records.jsonl`` at once, so an
   interrupted run resumes where it stopped (finished units are not run again unless their
   configuration changed). Nothing watches an evaluation's tokens, so models that can answer
   in one piece (the OpenAI adapter) are asked for whole completions unless ``stream_calls``
   (or the model's own ``stream`` option) says otherwise: a streamed call costs the client
   several times the CPU of a whole one, and the deltas come to the same turn;
3. scores every recorded turn and writes the tables, ``run.json`` (configuration, package
   versions, counts) and ``report.html``.

``rescore(out_dir, suite)`` scores the recorded units again (new scorers or judges) without
running any model.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import gc
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from citelab._errors import CitelabError, ConfigError
from citelab.agent import AgentConfig, default_agents, load_agents, resolve_corpus_path
from citelab.answers import Answer, AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.corpus import Corpus, Reader, load_corpus
from citelab.evals._versions import versions as _versions
from citelab.evals.dataset import Case, Dataset, load_dataset
from citelab.evals.judges import build_judge
from citelab.evals.records import (
    CaseRecord,
    RestrictedEntity,
    RoundRecord,
    SourceRecord,
    TurnRecord,
    read_records,
    read_records_file,
)
from citelab.evals.report import write_outputs
from citelab.evals.results import EvalResult, result_of
from citelab.evals.runner._cache import CachedModel
from citelab.evals.runner._executors import Executor, LocalExecutor, get_executor
from citelab.evals.runner._suite import ModelSpec, Suite, Variant, load_suite
from citelab.evals.runner._variant_notes import variant_notes
from citelab.evals.scorers import Scorer, accepts_argument, build_scorers, scorer_names
from citelab.models import Model, OpenAIModel, current_view, get_model

__all__ = [
    "BatchRunner",
    "Resume",
    "ResumePolicy",
    "RunPlan",
    "default_output_dir",
    "earlier_numbers",
    "model_endpoint",
    "plan_run",
    "record_failed",
    "rescore",
    "resume_units",
    "run",
    "run_async",
    "turn_record",
]

_RECORDS = "records.jsonl"


@dataclass(frozen=True)
class _Unit:
    """One case under one variant and model: what gets run and recorded as one line."""

    variant: Variant
    model: ModelSpec
    dataset: Dataset
    case: Case
    agent: AgentConfig
    """The case's agent as the variant configures it."""
    seed: int
    endpoint: str | None = None
    """Where the model's calls go when that is configured outside the spec (the
    ``OPENAI_BASE_URL`` of an ``openai:`` model): another endpoint is another model."""

    @functools.cached_property
    def key(self) -> str:
        """``variant|model|dataset|case|fingerprint``: a change to what runs re-runs it."""
        fingerprint: dict[str, Any] = {
            "agent": self.agent.model_dump(mode="json"),
            "model": self.model.model_dump(mode="json"),
            "case": self.case.model_dump(mode="json"),
            "seed": self.seed,
        }
        if self.endpoint is not None:
            fingerprint["endpoint"] = self.endpoint
        digest = hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()
        return "|".join([self.names, digest[:16]])

    @property
    def names(self) -> str:
        """``variant|model|dataset|case``: the key without the configuration's fingerprint."""
        return "|".join((self.variant.name, self.model.name, self.dataset.name, self.case.id))


@dataclass
class RunPlan:
    """Everything a run needs, resolved from a suite (see :func:`plan_run`)."""

    suite: Suite
    datasets: list[Dataset]
    agents: dict[str, dict[str, AgentConfig]]
    """Variant name → the agents as that variant configures them."""
    models: list[ModelSpec]
    scorers: list[Scorer]
    units: list[_Unit] = field(default_factory=list)

    @property
    def cases(self) -> dict[tuple[str, str], Case]:
        return {(d.name, c.id): c for d in self.datasets for c in d}


def plan_run(
    suite: Suite,
    *,
    models: Sequence[str] | None = None,
    limit: int | None = None,
) -> RunPlan:
    """Resolve a suite: datasets (at most ``limit`` cases each), variants' agents, scorers.

    ``models`` replaces the suite's models by specs (``extractive``, ``openai:<model>``…).
    """
    cap = limit if limit is not None else suite.limit
    datasets = [_limited(load_dataset(path), cap) for path in suite.dataset_paths()]
    agents_file = suite.agents_path()
    base = load_agents(agents_file) if agents_file is not None else default_agents()
    _check_agents(suite, datasets, base)
    variants = suite.expanded_variants()
    _check_findings(suite, variants)
    specs = [ModelSpec(spec=m) for m in models] if models else list(suite.models)
    agents = {v.name: _variant_agents(suite, v, base) for v in variants}
    plan = RunPlan(suite, datasets, agents, specs, build_scorers(_scorer_specs(suite)))
    endpoints = {spec.name: model_endpoint(spec) for spec in specs}
    plan.units = [
        _Unit(
            variant,
            spec,
            dataset,
            case,
            agents[variant.name][case.agent],
            suite.seed,
            endpoints[spec.name],
        )
        for variant in variants
        for spec in specs
        for dataset in datasets
        for case in dataset
    ]
    return plan


def model_endpoint(spec: ModelSpec) -> str | None:
    """The endpoint an ``openai:`` spec calls (its ``base_url`` option, else
    ``OPENAI_BASE_URL``, else OpenAI's); None for models that call no endpoint."""
    if not spec.spec.startswith("openai:"):
        return None
    configured = spec.options.get("base_url") or os.environ.get("OPENAI_BASE_URL")
    return str(configured or "https://api.openai.com/v1")


def default_output_dir(suite: Suite) -> Path:
    """``evaluations/reports/<name>/`` beside the suite's ``suites`` folder (else under cwd)."""
    if suite.path is not None and suite.path.parent.name == "suites":
        return suite.path.parent.parent / "reports" / suite.name
    return Path.cwd() / "evaluations" / "reports" / suite.name


def run(
    suite: Suite | str | Path,
    *,
    out_dir: str | Path | None = None,
    models: Sequence[str] | None = None,
    limit: int | None = None,
    concurrency: int | None = None,
    progress: bool = True,
    cache: bool = True,
    stream_calls: bool = False,
    rerun_failed: bool = True,
    reuse_changed: bool = False,
    preflight: bool = True,
    executor: str | Executor = "local",
    address: str | None = None,
    workers: int | None = None,
) -> EvalResult:
    """Run a suite (an object, a name in ``evaluations/suites/`` or a path); see the module docs.

    ``cache=False`` asks the models every time (for timing them); finished cases still resume.
    ``stream_calls=True`` streams the calls of models that can answer whole (a model spec's
    own ``stream`` option wins either way). Inside a running event loop (Jupyter) the run
    happens in a worker thread.

    Resuming: a recorded case with a failed turn is run again unless ``rerun_failed=False``;
    a case recorded under another configuration (agent settings, model spec or endpoint,
    the case itself, the seed) is run again unless ``reuse_changed=True`` keeps the old
    record. ``preflight`` asks every model that can tell (an OpenAI-compatible endpoint)
    whether it answers and serves the model before any case runs, so a wrong URL or model
    name raises :class:`~citelab.ModelError` at once. Failed turns do not raise: see
    :meth:`EvalResult.errors` (``citelab eval`` exits non-zero on them).

    ``executor="ray"`` runs the cases on a Ray cluster (``citelab[ray]``): the one at
    ``address``, else the one this process is connected to, else a local one started for the
    run, with ``workers`` actors (default: one per CPU). The results are the same as local.
    """
    call = run_async(
        suite,
        out_dir=out_dir,
        models=models,
        limit=limit,
        concurrency=concurrency,
        progress=progress,
        cache=cache,
        stream_calls=stream_calls,
        rerun_failed=rerun_failed,
        reuse_changed=reuse_changed,
        preflight=preflight,
        executor=executor,
        address=address,
        workers=workers,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(call)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, call).result()


async def run_async(
    suite: Suite | str | Path,
    *,
    out_dir: str | Path | None = None,
    models: Sequence[str] | None = None,
    limit: int | None = None,
    concurrency: int | None = None,
    progress: bool = True,
    cache: bool = True,
    stream_calls: bool = False,
    rerun_failed: bool = True,
    reuse_changed: bool = False,
    preflight: bool = True,
    executor: str | Executor = "local",
    address: str | None = None,
    workers: int | None = None,
) -> EvalResult:
    """The coroutine behind :func:`run`."""
    suite = suite if isinstance(suite, Suite) else load_suite(suite)
    started = time.time()
    plan = plan_run(suite, models=models, limit=limit)
    out = Path(out_dir) if out_dir is not None else default_output_dir(suite)
    out.mkdir(parents=True, exist_ok=True)
    backend = get_executor(executor, address=address, workers=workers)
    try:
        runner = _Executor(
            plan,
            out,
            concurrency or suite.concurrency,
            progress,
            cache,
            stream_calls=stream_calls,
            policy=ResumePolicy(rerun_failed=rerun_failed, reuse_changed=reuse_changed),
            preflight=preflight,
            backend=backend,
        )
        records = await runner.run()
        result = result_of(
            backend.score(plan, records),
            records,
            plan.cases,
            plan.scorers,
            config=_run_config(plan, runner, started),
            seed=suite.seed,
            resamples=suite.resamples,
        )
    finally:
        if isinstance(executor, str):
            backend.close()
    write_outputs(result, out, suite.findings, title=suite.name)
    return result


def rescore(
    out_dir: str | Path,
    suite: Suite | str | Path,
    *,
    executor: str | Executor = "local",
    address: str | None = None,
    workers: int | None = None,
) -> EvalResult:
    """Score the units recorded in ``out_dir`` again with the suite's scorers (no model runs).

    ``executor``, ``address`` and ``workers`` say where the scorers run (see :func:`run`).
    """
    suite = suite if isinstance(suite, Suite) else load_suite(suite)
    plan = plan_run(suite)
    out = Path(out_dir)
    backend = get_executor(executor, address=address, workers=workers)
    try:
        backend.prepare(plan)  # Ray's workers start while the records are read
        recorded, source = read_records_file(out / _RECORDS)
        # In the plan's order, as a run gives them: the tables and intervals come out the same.
        records = [recorded[unit.key] for unit in plan.units if unit.key in recorded]
        scored = backend.score(plan, records, source)
        config = {**_static_config(plan), "rescored_at": _now(), "executor": backend.config()}
    finally:
        if isinstance(executor, str):
            backend.close()
    result = result_of(
        scored,
        records,
        plan.cases,
        plan.scorers,
        config=config,
        seed=suite.seed,
        resamples=suite.resamples,
    )
    write_outputs(result, out, suite.findings, title=suite.name)
    return result


# --- planning ------------------------------------------------------------------------------


def _limited(dataset: Dataset, cap: int | None) -> Dataset:
    if cap is None or len(dataset) <= cap:
        return dataset
    return Dataset(dataset.name, dataset.cases[:cap], dataset.path)


def _check_agents(suite: Suite, datasets: list[Dataset], agents: Mapping[str, Any]) -> None:
    for dataset in datasets:
        missing = sorted(set(dataset.agents) - set(agents))
        if missing:
            raise ConfigError(
                f"{suite.path}: dataset {dataset.name} names agent(s) {missing} that the agents "
                f"configuration does not define (known: {sorted(agents)})"
            )


def _check_findings(suite: Suite, variants: list[Variant]) -> None:
    names = {v.name for v in variants}
    for index, finding in enumerate(suite.findings):
        for role in ("baseline", "variant"):
            name = getattr(finding, role)
            if name is None or name == "*":
                continue
            if name not in names:
                raise ConfigError(
                    f"{suite.path}: key findings.{index}.{role}: no variant named {name!r} "
                    f"(variants: {sorted(names)})"
                )


def _variant_agents(
    suite: Suite, variant: Variant, base: Mapping[str, AgentConfig]
) -> dict[str, AgentConfig]:
    agents = {}
    for name, config in base.items():
        data = config.model_dump()
        for dotted, value in variant.set.items():
            _assign(data, dotted, value, suite, variant)
        try:
            agents[name] = AgentConfig.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
            )
            raise ConfigError(
                f"{suite.path}: variant {variant.name!r}: agent {name!r} rejects the overrides "
                f"({problems})"
            ) from exc
    return agents


def _assign(data: dict[str, Any], dotted: str, value: Any, suite: Suite, variant: Variant) -> None:
    parts = dotted.split(".")
    target: Any = data
    for index, part in enumerate(parts[:-1]):
        if not isinstance(target, dict) or part not in target:
            raise ConfigError(
                f"{suite.path}: variant {variant.name!r}: key set.{dotted}: "
                f"{'.'.join(parts[: index + 1])} is not an agent setting"
            )
        if target[part] is None:
            target[part] = {}
        target = target[part]
    if not isinstance(target, dict) or parts[-1] not in target:
        known = ", ".join(sorted(target)) if isinstance(target, dict) else "none"
        raise ConfigError(
            f"{suite.path}: variant {variant.name!r}: key set.{dotted}: no such agent setting "
            f"(known here: {known})"
        )
    target[parts[-1]] = value


def _scorer_specs(suite: Suite) -> list[str | dict[str, Any]]:
    specs: list[str | dict[str, Any]] = list(suite.scorers or scorer_names())
    if suite.judge is None:
        return specs
    judged: list[str | dict[str, Any]] = []
    # One judge for all the scorers: an LLM judge's verdicts (its memo) are then shared.
    judge = build_judge(suite.judge)
    for spec in specs:
        config: dict[str, Any] = {"name": spec} if isinstance(spec, str) else dict(spec)
        if "judge" not in config and accepts_argument(str(config.get("name")), "judge"):
            config["judge"] = judge
        judged.append(config)
    return judged


# --- running -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResumePolicy:
    """Which recorded units a run keeps (see :func:`run`)."""

    rerun_failed: bool = True
    """Run a unit again when a turn of its record failed."""
    reuse_changed: bool = False
    """Keep a unit's record even when it was made under another configuration."""


@dataclass
class Resume:
    """What :func:`resume_units` decided: the records kept and the units still to run."""

    done: dict[str, CaseRecord]
    """Unit key → the record kept for it."""
    pending: list[_Unit]
    resumed: int = 0
    """Units whose record was kept."""
    failed: int = 0
    """Units run again because their record had a failed turn."""
    changed: int = 0
    """Units run again because their record was made under another configuration."""


def resume_units(
    units: Sequence[_Unit], recorded: Mapping[str, CaseRecord], policy: ResumePolicy
) -> Resume:
    """Split ``units`` into the records to keep and the units to run (see :func:`run`)."""
    by_names = {key.rpartition("|")[0]: record for key, record in recorded.items()}
    resume = Resume(done={}, pending=[])
    for unit in units:
        record = recorded.get(unit.key)
        if record is None and policy.reuse_changed:
            record = by_names.get(unit.names)
        if record is None:
            resume.changed += unit.names in by_names
            resume.pending.append(unit)
        elif policy.rerun_failed and record_failed(record):
            resume.failed += 1
            resume.pending.append(unit)
        else:
            resume.done[unit.key] = record
    resume.resumed = len(resume.done)
    return resume


def record_failed(record: CaseRecord) -> bool:
    """True when a turn of ``record`` failed (an error instead of an answer)."""
    return any(turn.error is not None for turn in record.turns)


class _Executor:
    """Runs the plan's pending units on its executor (this process by default), with a
    progress bar, appending each record as it comes."""

    def __init__(
        self,
        plan: RunPlan,
        out: Path,
        concurrency: int,
        progress: bool,
        cache: bool,
        *,
        stream_calls: bool = False,
        policy: ResumePolicy | None = None,
        preflight: bool = True,
        backend: Executor | None = None,
    ) -> None:
        self.plan = plan
        self.backend: Executor = backend or LocalExecutor()
        """Where the pending units run (see :mod:`citelab.evals.runner._executors`)."""
        self.out = out
        self.progress = progress
        self.policy = policy or ResumePolicy()
        self.preflight = preflight
        self.batch = BatchRunner(
            plan,
            out / "cache" / "models",
            concurrency=concurrency,
            cache=cache,
            stream_calls=stream_calls,
        )
        self.resume = Resume(done={}, pending=[])
        self.ran = 0

    async def run(self) -> list[CaseRecord]:
        from tqdm.auto import tqdm

        self.resume = resume_units(self.plan.units, read_records(self.out / _RECORDS), self.policy)
        done, pending = self.resume.done, self.resume.pending
        if not pending:
            return [done[unit.key] for unit in self.plan.units]
        if self.preflight:
            await self.batch.check_models(pending)
        bar = tqdm(
            total=len(pending),
            desc=f"eval {self.plan.suite.name}",
            unit="case",
            disable=not self.progress,
        )
        with bar, (self.out / _RECORDS).open("a", encoding="utf-8") as sink:

            def keep(record: CaseRecord) -> None:
                # Written at once, so an interrupted run resumes after it.
                sink.write(record.model_dump_json() + "\n")
                sink.flush()
                done[record.key] = record
                self.ran += 1
                bar.update(1)

            await self.backend.execute(self, pending, keep)
        return [done[unit.key] for unit in self.plan.units]


class BatchRunner:
    """Runs units of a plan and returns their records: the part of a run any executor needs.

    It loads the corpora, opens one answer service per (variant, model) with its model behind
    the disk cache in ``cache_dir``, and runs at most ``concurrency`` units at once. The local
    executor gives it every pending unit; another executor can give each worker its own
    ``BatchRunner`` and a batch of units (records are plain data and pickle).
    """

    def __init__(
        self,
        plan: RunPlan,
        cache_dir: Path,
        *,
        concurrency: int,
        cache: bool = True,
        stream_calls: bool = False,
    ) -> None:
        self.plan = plan
        self.cache_dir = cache_dir
        self.cache = cache
        self.concurrency = concurrency
        self.corpora: dict[str, Corpus] = {}
        self.models: dict[str, CachedModel] = {}
        self.services: dict[tuple[str, str], AnswerService] = {}
        self.setup_seconds = 0.0
        """Wall time spent loading what the units need (corpora, search indexes, model
        clients) before the first one started."""
        self.seconds = 0.0
        """Wall time spent running units (models, retrieval, finalize), without set-up or
        scoring."""
        self.cpu_seconds = 0.0
        """CPU time this process spent meanwhile: against ``seconds``, how busy the run kept
        it (a run whose client is busy all the time is bound by its CPU, not the models)."""
        self.stream_calls = stream_calls
        """Stream the calls of models that can also answer whole (see :func:`run`)."""
        self.streaming: dict[str, bool] = {}
        """Model name → whether its calls stream, for the models that have the choice."""
        self._readable: dict[tuple[str, Reader], str] = {}

    async def check_models(self, units: Sequence[_Unit]) -> None:
        """Preflight: every model the units use that can tell says it answers (else a
        :class:`~citelab.ModelError` naming the model, the endpoint and the cause)."""
        seen: dict[str, ModelSpec] = {unit.model.name: unit.model for unit in units}
        for spec in seen.values():
            await self._model(spec).check_available()

    async def run_batch(
        self, units: Sequence[_Unit], keep: Callable[[CaseRecord], None] | None = None
    ) -> list[CaseRecord]:
        """Set up (timed on its own), then run ``units``; each record goes to ``keep`` as it
        finishes, and all of them are returned in the order of ``units``."""
        records: dict[str, CaseRecord] = {}

        def collect(record: CaseRecord) -> None:
            records[record.key] = record
            if keep is not None:
                keep(record)

        began = time.perf_counter()
        self._load_corpora()
        try:
            await self._prepare(units)
            self.setup_seconds += time.perf_counter() - began
            began, cpu = time.perf_counter(), time.process_time()
            with _long_lived_frozen():
                await self._run_units(units, collect)
            self.seconds += time.perf_counter() - began
            self.cpu_seconds += time.process_time() - cpu
        finally:
            # Connections belong to this event loop: close them before it ends.
            for model in self.models.values():
                await model.aclose()
        return [records[unit.key] for unit in units]

    async def _prepare(self, units: Sequence[_Unit]) -> None:
        """Open every service the units use, with their agents' indexes and models."""
        for variant, spec, agents in _services_used(units):
            await self._service(variant, spec).prepare(agents)

    async def _run_units(self, units: Sequence[_Unit], keep: Callable[[CaseRecord], None]) -> None:
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(unit: _Unit) -> None:
            async with semaphore:
                record = await self._run_unit(unit)
            keep(record)

        await asyncio.gather(*(one(unit) for unit in units))

    async def _run_unit(self, unit: _Unit) -> CaseRecord:
        service = self._service(unit.variant, unit.model)
        config = self.plan.agents[unit.variant.name][unit.case.agent]
        corpus = self.corpora[config.corpus]
        reader = unit.case.reader.to_reader()
        readable = self._readable_for(config.corpus, reader)
        turns: list[TurnRecord] = []
        conversation: str | None = None
        for index, gold in enumerate(unit.case.turns):
            restricted = _restricted(corpus, reader, readable + "\n" + gold.question.casefold())
            if turns and turns[-1].error is not None:
                turns.append(
                    TurnRecord(
                        turn=index,
                        question=gold.question,
                        error="not run: an earlier turn of the case failed",
                    )
                )
                continue
            began = time.perf_counter()
            try:
                answer = await service.answer(
                    unit.case.agent,
                    gold.question,
                    conversation,
                    reader,
                    seed=self.plan.suite.seed,
                )
            except CitelabError as exc:
                turns.append(
                    TurnRecord(
                        turn=index, question=gold.question, error=f"{type(exc).__name__}: {exc}"
                    )
                )
                continue
            conversation = answer.conversation_id
            turns.append(
                turn_record(
                    answer,
                    index,
                    gold.question,
                    restricted=restricted,
                    canaries=unit.case.canaries,
                    seconds=time.perf_counter() - began,
                    earlier=earlier_numbers(turns),
                )
            )
        return CaseRecord(
            key=unit.key,
            variant=unit.variant.name,
            model=unit.model.name,
            dataset=unit.dataset.name,
            case_id=unit.case.id,
            tags=list(unit.case.tags),
            turns=turns,
        )

    def _readable_for(self, corpus: str, reader: Reader) -> str:
        key = (corpus, reader)
        if key not in self._readable:
            self._readable[key] = _readable_text(self.corpora[corpus], reader)
        return self._readable[key]

    def _load_corpora(self) -> None:
        names = {c.corpus for agents in self.plan.agents.values() for c in agents.values()}
        for name in sorted(names):
            self.corpora[name] = load_corpus(resolve_corpus_path(name))

    def _service(self, variant: Variant, spec: ModelSpec) -> AnswerService:
        key = (variant.name, spec.name)
        if key not in self.services:
            label = f"eval-model-{spec.name}"
            agents = {
                name: config.model_copy(update={"model": label})
                for name, config in self.plan.agents[variant.name].items()
            }
            self.services[key] = AnswerService(
                agents,
                store=MemoryConversationStore(),
                logs=MemoryLogStore(),
                models={label: self._model(spec)},
                corpora=self.corpora,
                # Nothing but model calls waits on this loop: a search in a worker thread
                # would only add two thread hops per call (the GIL serializes it anyway).
                tool_threads=False,
            )
        return self.services[key]

    def _model(self, spec: ModelSpec) -> CachedModel:
        if spec.name not in self.models:
            inner: Model = get_model(spec.spec, **spec.options)
            if isinstance(inner, OpenAIModel):
                if "stream" not in spec.options:
                    inner.streaming = self.stream_calls
                self.streaming[spec.name] = inner.streaming
            identity: dict[str, Any] = spec.model_dump(mode="json")
            endpoint = model_endpoint(spec)
            if endpoint is not None:  # answers of another endpoint are another model's
                identity["endpoint"] = endpoint
            namespace = json.dumps(identity, sort_keys=True)
            self.models[spec.name] = CachedModel(
                inner, self.cache_dir, namespace, enabled=self.cache
            )
        return self.models[spec.name]


def _services_used(units: Sequence[_Unit]) -> list[tuple[Variant, ModelSpec, list[str]]]:
    """Each (variant, model) pair the units run, with the agents its cases ask, in order."""
    used: dict[tuple[str, str], tuple[Variant, ModelSpec, dict[str, None]]] = {}
    for unit in units:
        key = (unit.variant.name, unit.model.name)
        entry = used.setdefault(key, (unit.variant, unit.model, {}))
        entry[2][unit.case.agent] = None
    return [(variant, spec, list(agents)) for variant, spec, agents in used.values()]


@contextlib.contextmanager
def _long_lived_frozen() -> Iterator[None]:
    """Keep the garbage collector off what existed before the run (corpora, indexes, modules,
    a notebook's data) until it ends. A run makes many objects that live until it ends (the
    records), so full collections come often, and each one walked all of memory: 10-30% of
    the client's CPU per case, measured. Unfrozen at the end, all of it is collected as before.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def turn_record(
    answer: Answer,
    index: int,
    question: str,
    *,
    restricted: Sequence[RestrictedEntity] = (),
    canaries: Sequence[str] = (),
    seconds: float = 0.0,
    earlier: Mapping[int, str] | None = None,
) -> TurnRecord:
    """What the scorers need of an :class:`~citelab.answers.Answer`; ``earlier`` is what
    :func:`earlier_numbers` says of the conversation's earlier turns."""
    held_numbers = {new: old for old, new in answer.mapping.items()}
    final = [_source_record(s.number, s) for s in answer.sources]
    candidates = [
        _source_record(held_numbers.get(s.number or 0, s.number), s) for s in answer.sources
    ]
    candidates += [_source_record(s.number, s) for s in answer.dropped]
    return TurnRecord(
        turn=index,
        question=question,
        text=answer.text,
        raw_text=answer.raw_text,
        sources=final,
        candidates=sorted(candidates, key=lambda s: s.number),
        seen=_seen(answer),
        message=answer.message.to_wire(),
        no_answer=answer.no_answer,
        rounds=[_round_record(r) for r in answer.rounds],
        forced_searches=len(answer.forced),
        mapping=dict(answer.mapping),
        keep=answer.keep,
        earlier=dict(earlier or {}),
        dangling=len(answer.dangling),
        restricted=list(restricted),
        canaries=[c for c in canaries if c.casefold() not in question.casefold()],
        seconds=seconds,
    )


def earlier_numbers(turns: Sequence[TurnRecord]) -> dict[int, str]:
    """Number → URI as ``turns`` (a conversation's turns so far) used them in their final
    texts; the first use of a number wins."""
    earlier: dict[int, str] = {}
    for turn in turns:
        for source in turn.sources:
            earlier.setdefault(source.number, source.uri)
    return earlier


def _source_record(number: int | None, source: Any) -> SourceRecord:
    return SourceRecord(
        number=number or 0,
        uri=source.uri,
        title=source.title,
        content=source.content,
        langcode=source.langcode,
    )


def _round_record(record: Any) -> RoundRecord:
    added: dict[int, str] = {}
    for call in record.tool_calls:
        added.update(call.added)
    searches = sum(1 for call in record.tool_calls if call.error is None)
    return RoundRecord(
        index=record.index - 1,
        text=record.text,
        visible=dict(record.visible_numbering),
        searches=searches,
        added=added,
    )


def _seen(answer: Answer) -> list[SourceRecord]:
    seen: dict[str, SourceRecord] = {}
    for record in answer.rounds:
        for number, source in current_view(record.messages).items():
            seen.setdefault(
                source.uri,
                SourceRecord(
                    number=number, uri=source.uri, title=source.title, content=source.content
                ),
            )
    return list(seen.values())


def _restricted(corpus: Corpus, reader: Reader, visible: str) -> list[RestrictedEntity]:
    """Entities ``reader`` may not read, with the titles whose sight would be a leak.

    ``visible`` is everything the reader may see anyway (readable documents, the question),
    case-folded: a title found there proves nothing, so it is not a leak marker.
    """
    return [
        RestrictedEntity(
            uri=doc.uri,
            titles=sorted(
                {t.title for t in doc.translations.values() if t.title.casefold() not in visible}
            ),
        )
        for doc in corpus
        if not doc.readable_by(reader)
    ]


def _readable_text(corpus: Corpus, reader: Reader) -> str:
    parts = [
        f"{t.title}\n{t.content}"
        for doc in corpus
        if doc.readable_by(reader)
        for t in doc.translations.values()
    ]
    return "\n".join(parts).casefold()


# --- the run's log -------------------------------------------------------------------------


def _run_config(plan: RunPlan, executor: _Executor, started: float) -> dict[str, Any]:
    batch = executor.batch
    return {
        **_static_config(plan),
        "started_at": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "finished_at": _now(),
        "seconds": round(time.time() - started, 2),
        "units": {
            "total": len(plan.units),
            "ran": executor.ran,
            "resumed": executor.resume.resumed,
            "rerun_failed": executor.resume.failed,
            "rerun_changed": executor.resume.changed,
        },
        "resume_policy": {
            "rerun_failed": executor.policy.rerun_failed,
            "reuse_changed": executor.policy.reuse_changed,
        },
        "setup_seconds": round(batch.setup_seconds, 3),
        "execution_seconds": round(batch.seconds, 3),
        "execution_cpu_seconds": round(batch.cpu_seconds, 3),
        "concurrency": batch.concurrency,
        "model_cache_enabled": batch.cache,
        "model_cache": executor.backend.cache_counts(executor),
        "executor": executor.backend.config(),
        "stream_calls": batch.stream_calls,
        "model_streaming": dict(batch.streaming),
    }


def _static_config(plan: RunPlan) -> dict[str, Any]:
    suite = plan.suite
    variants = suite.expanded_variants()
    return {
        "suite": suite.model_dump(mode="json", exclude={"path"}),
        "suite_file": suite.path.name if suite.path else None,
        "datasets": {d.name: len(d) for d in plan.datasets},
        "variants": {
            variant.name: {"set": variant.set, "description": variant.description}
            for variant in variants
        },
        "variant_notes": variant_notes(variants, plan.models),
        "models": [m.model_dump(mode="json") for m in plan.models],
        "scorers": [scorer.config() for scorer in plan.scorers],
        "versions": _versions(),
    }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
