"""The runner: every variant × model × dataset case through the answer service, then scores.

``run(suite)`` (or ``await run_async(suite)``):

1. loads the datasets, the agents and the corpora; builds each variant's agents by applying
   its overrides (a bad override names the suite file, the variant and the key);
2. runs every unit of work — one case (all its turns, one conversation) under one variant and
   one model — at most ``concurrency`` at a time, where the executor says (this process by
   default; see :mod:`citelab.evals.execution`), with a tqdm progress bar. Model calls go
   through a disk cache under the output folder, keyed by the request, so a re-run never
   re-queries a model; every finished unit is appended to ``records.jsonl`` at once, so an
   interrupted run resumes where it stopped (finished units are not run again unless their
   configuration changed). The answers with ALCE's prompt of the suite's ``[[alce]]`` entries
   go to the same executor (their result files under ``alce/``). Nothing watches an
   evaluation's tokens, so models that can answer in one piece (the OpenAI adapter) are
   asked for whole completions unless ``stream_calls`` (or the model's own ``stream``
   option) says otherwise: a streamed call costs the client several times the CPU of a
   whole one, and the deltas come to the same turn;
3. scores every recorded turn and writes the tables, ``run.json`` (configuration, package
   versions, counts) and ``report.html``.

``rescore(out_dir, suite)`` scores the recorded units again (new scorers or judges) without
running any model. :class:`RunOptions` holds every option of a run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citelab._async import run_blocking
from citelab._errors import ConfigError
from citelab.evals._versions import versions as _versions
from citelab.evals.cards import JudgeCard, load_cards
from citelab.evals.execution import AnswerFigures, Executor, ScoringJob, get_executor
from citelab.evals.labels import LabelSet, load_label_set
from citelab.evals.records import CaseRecord, read_records
from citelab.evals.report import write_outputs
from citelab.evals.results import EvalResult, ModelPrice, check_cards, result_of
from citelab.evals.runner._alce import AlceSuiteRun, alce_recorded_records
from citelab.evals.runner._batch import BatchRunner
from citelab.evals.runner._plan import RunPlan, Unit, plan_run
from citelab.evals.runner._suite import ModelSpec, Suite, load_suite
from citelab.evals.runner._variant_notes import variant_notes
from citelab.evals.scorers import Scorer, with_judge_scores

__all__ = [
    "Resume",
    "ResumePolicy",
    "RunOptions",
    "default_output_dir",
    "record_failed",
    "rescore",
    "resume_units",
    "run",
    "run_async",
]

_RECORDS = "records.jsonl"


def default_output_dir(suite: Suite) -> Path:
    """``evaluations/reports/<name>/`` beside the suite's ``suites`` folder (else under cwd)."""
    if suite.path is not None and suite.path.parent.name == "suites":
        return suite.path.parent.parent / "reports" / suite.name
    return Path.cwd() / "evaluations" / "reports" / suite.name


class RunOptions(BaseModel):
    """How :func:`run` runs a suite: every option of a run, in one frozen object.

    ``run(suite, RunOptions(limit=5))`` and ``run(suite, limit=5)`` are the same run; keywords
    given beside an options object replace its fields.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    out_dir: Path | None = None
    """The output folder (default: ``evaluations/reports/<suite>/`` beside the suite's
    ``suites`` folder, else under the current folder)."""
    models: tuple[str, ...] | None = None
    """Model specs to run instead of the suite's (``extractive``, ``openai:<model>``…)."""
    limit: int | None = Field(default=None, ge=1)
    """At most this many cases per dataset."""
    concurrency: int | None = Field(default=None, ge=1)
    """Cases answered at once, per process (default: the suite's)."""
    progress: bool = True
    """Show a progress bar."""
    cache: bool = True
    """Answer model calls from the disk cache; False asks the models every time (to time
    them). Finished cases resume either way."""
    stream_calls: bool = False
    """Stream the calls of models that can answer whole (a model spec's own ``stream``
    option wins either way)."""
    rerun_failed: bool = True
    """Run a recorded case again when a turn of it failed."""
    reuse_changed: bool = False
    """Keep a recorded case made under another configuration (agent settings, model spec or
    endpoint, the case itself, the seed) instead of running it again."""
    preflight: bool = True
    """Ask every model that can tell (an OpenAI-compatible endpoint) whether it answers and
    serves the model before any case runs, so a wrong URL or model name raises
    :class:`~citelab.ModelError` at once."""
    executor: str | Executor = "local"
    """Where the work runs (``local``, ``processes``, ``ray``, or an executor object): see
    :mod:`citelab.evals.execution`."""
    address: str | None = None
    """The Ray cluster's address (``executor="ray"``; default: the cluster this process is
    connected to, else a local one started for the run)."""
    workers: int | None = Field(default=None, ge=1)
    """Ray actors (default: one per CPU), or worker processes beside this one (default: one
    per CPU but one)."""
    judge_cards: tuple[str | Path | JudgeCard, ...] = ()
    """Cards (or card files) that describe the run's judges, beside the suite's
    ``judge_cards`` and citelab's shipped cards."""
    prices: Mapping[str, ModelPrice] = Field(default_factory=dict)
    """Model name → price per million tokens, beside (and over) the suite's ``prices``."""
    allow_in_sample: bool = False
    """Accept a card made on labels its judge was trained on (refused otherwise)."""
    labels: str | Path | LabelSet | None = None
    """People's labels of this run's units (a labels file or set keyed by pair ids; default:
    the suite's ``labels``): :meth:`EvalResult.corrected` gains ``ppi`` and ``labels`` rows."""
    label_map: Mapping[str, str] | None = None
    """The labels file's own spellings read as grades (``{"attributable": "supported"}``;
    :func:`~citelab.evals.labels.parse_label_map` reads the CLI's ``--label-map``)."""

    @classmethod
    def of(cls, options: RunOptions | None, overrides: Mapping[str, Any]) -> RunOptions:
        """``options`` (default: the defaults) with ``overrides``' fields replaced."""
        base = options if options is not None else cls()
        if not overrides:
            return base
        unknown = sorted(set(overrides) - set(cls.model_fields))
        if unknown:
            raise TypeError(
                f"run: unknown option(s) {', '.join(unknown)}; the options are "
                f"{', '.join(cls.model_fields)}"
            )
        try:
            return cls.model_validate({**dict(base), **overrides})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, error['loc']))}: {error['msg']}" for error in exc.errors()
            )
            raise ConfigError(f"run: {problems}") from None


def run(
    suite: Suite | str | Path, options: RunOptions | None = None, /, **overrides: Any
) -> EvalResult:
    """Run a suite (an object, a name in ``evaluations/suites/`` or a path) and write its
    outputs; see the module docs.

    ``options`` (:class:`RunOptions`) says how, and so does any of its fields given as a
    keyword (``run(suite, out_dir=..., limit=5)``). Inside a running event loop (Jupyter)
    the run happens in a worker thread; ``await run_async(...)`` there instead.

    Resuming: a recorded case with a failed turn is run again unless ``rerun_failed=False``;
    a case recorded under another configuration is run again unless ``reuse_changed=True``
    keeps the old record. Failed turns do not raise: see :meth:`EvalResult.errors`
    (``citelab eval`` exits non-zero on them).

    ``executor="ray"`` runs the cases on a Ray cluster (``citelab[ray]``): the one at
    ``address``, else the one this process is connected to, else a local one started for the
    run, with ``workers`` actors (default: one per CPU); ``executor="processes"`` scores in
    worker processes. The results are the same as local. Any executor in
    :data:`~citelab.evals.execution.EXECUTORS` (or ``module:attr``) may be named, or an
    :class:`Executor` given; one built from a name is closed when the run ends.

    ``judge_cards`` (cards or card files) join the suite's ``judge_cards`` to describe the
    run's judges (see :meth:`EvalResult.judges`); one that describes none of them raises
    :class:`~citelab.InvalidInput` before any case runs. ``labels`` (a labels file or set
    keyed by :func:`~citelab.evals.label_pairs` ids; default: the suite's ``labels``) adds
    the estimates from the run's own labels; a label naming no scored unit raises
    :class:`~citelab.InvalidInput` once the cases are scored (their records are kept).
    """
    return run_blocking(run_async(suite, options, **overrides))


async def run_async(
    suite: Suite | str | Path, options: RunOptions | None = None, /, **overrides: Any
) -> EvalResult:
    """The coroutine behind :func:`run` (same arguments)."""
    opts = RunOptions.of(options, overrides)
    suite = suite if isinstance(suite, Suite) else load_suite(suite)
    started = time.time()
    plan = plan_run(suite, models=opts.models, limit=opts.limit)
    cards = _cards(suite, plan.scorers, opts.judge_cards, opts.allow_in_sample)
    labels = _labels(suite, opts.labels, opts.label_map)
    plan = _scoring_for(plan, labels)
    out = opts.out_dir if opts.out_dir is not None else default_output_dir(suite)
    out.mkdir(parents=True, exist_ok=True)
    executor = get_executor(opts.executor, address=opts.address, workers=opts.workers)
    try:
        driver = _RunDriver(plan, out, opts, executor)
        records = await driver.run()
        records += driver.alce.finish()
        result = result_of(
            executor.score(driver.scoring, records),
            records,
            plan.cases,
            plan.scorers,
            config=_run_config(plan, driver, started, records),
            seed=suite.seed,
            resamples=suite.resamples,
            judge_cards=cards,
        )
        result.labels = labels
    finally:
        if isinstance(opts.executor, str):
            executor.close()
    write_outputs(result, out, suite.findings, title=suite.name, gates=suite.gates)
    return result


def _cards(
    suite: Suite,
    scorers: Sequence[Scorer],
    given: Sequence[str | Path | JudgeCard],
    allow_in_sample: bool = False,
) -> list[JudgeCard]:
    """The suite's judge cards and the ``given`` ones, each checked to describe a judge (and
    not to be in sample, unless ``allow_in_sample``)."""
    cards = load_cards([*suite.card_paths(), *given])
    check_cards(scorers, cards, allow_in_sample=allow_in_sample)
    return cards


def _labels(
    suite: Suite, given: str | Path | LabelSet | None, label_map: Mapping[str, str] | None = None
) -> LabelSet | None:
    """The given labels, else the suite's labels file, read with ``label_map`` (None: no
    labels)."""
    chosen = given if given is not None else suite.labels_path()
    if chosen is None or isinstance(chosen, LabelSet):
        return chosen
    return load_label_set(Path(chosen), label_map=label_map)


def _scoring_for(plan: RunPlan, labels: LabelSet | None) -> RunPlan:
    """The plan, its citation recall recording the judge's scores when the run has labels
    (PPI++ then reads them: ``docs/corrected-metrics.md``); as it is without labels."""
    if labels is None:
        return plan
    return replace(plan, scorers=with_judge_scores(plan.scorers))


def rescore(
    out_dir: str | Path,
    suite: Suite | str | Path,
    *,
    executor: str | Executor = "local",
    address: str | None = None,
    workers: int | None = None,
    judge_cards: Sequence[str | Path | JudgeCard] = (),
    allow_in_sample: bool = False,
    labels: str | Path | LabelSet | None = None,
    label_map: Mapping[str, str] | None = None,
) -> EvalResult:
    """Score the units recorded in ``out_dir`` again with the suite's scorers (no model runs).
    The plan is the recorded run's: the models and the ``limit`` it was given (from its
    ``run.json``), so the same units are scored. The answers made with ALCE's prompt are read
    back from the run's ALCE result files.

    ``executor``, ``address`` and ``workers`` say where the scorers run (see :class:`RunOptions`);
    ``judge_cards``, ``allow_in_sample``, ``labels`` and ``label_map`` as for :func:`run`.
    """
    suite = suite if isinstance(suite, Suite) else load_suite(suite)
    out = Path(out_dir)
    plan = _recorded_plan(suite, out)
    cards = _cards(suite, plan.scorers, judge_cards, allow_in_sample)
    label_set = _labels(suite, labels, label_map)
    plan = _scoring_for(plan, label_set)
    backend = get_executor(executor, address=address, workers=workers)
    scoring = ScoringJob(plan.cases, plan.scorers)
    try:
        backend.prepare(scoring)  # workers start while the records are read
        recorded = read_records(out / _RECORDS)
        # In the plan's order, as a run gives them: the tables and intervals come out the same.
        records = [recorded[unit.key] for unit in plan.units if unit.key in recorded]
        records += alce_recorded_records(suite, plan.models, out)
        scored = backend.score(scoring, records)
        config = {
            **_static_config(plan, records),
            "rescored_at": _now(),
            "executor": backend.config(),
        }
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
        judge_cards=cards,
    )
    result.labels = label_set
    write_outputs(result, out, suite.findings, title=suite.name, gates=suite.gates)
    return result


def _recorded_plan(suite: Suite, out: Path) -> RunPlan:
    """The plan of the run recorded in ``out``: the suite's, with the models and the
    ``limit`` that run was given (its ``run.json``), so a model's seeded sample of each
    dataset is drawn from the same cases as in the run. Without a ``run.json`` (or one from
    before runs recorded their limit), the suite's own plan."""
    log = out / "run.json"
    if not log.is_file():
        return plan_run(suite)
    try:
        recorded = json.loads(log.read_text(encoding="utf-8"))
        models = [ModelSpec.model_validate(m) for m in recorded.get("models") or []]
        limit = recorded.get("limit")
    except (ValueError, ValidationError) as exc:
        raise ConfigError(f"{log}: not a run log this rescore can read ({exc})") from None
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise ConfigError(f"{log}: limit must be a number of cases, got {limit!r}")
    return plan_run(suite, models=models or None, limit=limit)


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
    pending: list[Unit]
    resumed: int = 0
    """Units whose record was kept."""
    failed: int = 0
    """Units run again because their record had a failed turn."""
    changed: int = 0
    """Units run again because their record was made under another configuration."""


def resume_units(
    units: Sequence[Unit], recorded: Mapping[str, CaseRecord], policy: ResumePolicy
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


class _RunDriver:
    """Drives a run: decides which units are pending (resuming from ``records.jsonl``), has
    its executor answer them with a progress bar, and appends each record as it comes. The
    answers with ALCE's prompt still to make go to the executor beside them, so they run
    where the units run; each is kept in its ALCE result's partial file instead."""

    def __init__(self, plan: RunPlan, out: Path, options: RunOptions, executor: Executor) -> None:
        self.plan = plan
        self.out = out
        self.options = options
        self.executor = executor
        self.policy = ResumePolicy(
            rerun_failed=options.rerun_failed, reuse_changed=options.reuse_changed
        )
        self.alce = AlceSuiteRun(plan.suite, plan.models, out)
        self.batch = BatchRunner(
            plan,
            out / "cache" / "models",
            concurrency=options.concurrency or plan.suite.concurrency,
            cache=options.cache,
            stream_calls=options.stream_calls,
            alce=self.alce.pending(),
        )
        self.scoring = ScoringJob(plan.cases, plan.scorers)
        self.resume = Resume(done={}, pending=[])
        self.figures = AnswerFigures()
        self.ran = 0

    async def run(self) -> list[CaseRecord]:
        from tqdm.auto import tqdm

        self.resume = resume_units(self.plan.units, read_records(self.out / _RECORDS), self.policy)
        done, pending = self.resume.done, self.resume.pending
        jobs = len(self.batch.alce)
        if not pending and not jobs:
            return [done[unit.key] for unit in self.plan.units]
        if self.options.preflight:
            await self.batch.check_models(pending)
        position = {unit.key: index for index, unit in enumerate(self.plan.units)}
        bar = tqdm(
            total=len(pending) + jobs,
            desc=f"eval {self.plan.suite.name}",
            unit="case",
            disable=not self.options.progress,
        )
        with bar, (self.out / _RECORDS).open("a", encoding="utf-8") as sink:

            def keep(record: CaseRecord) -> None:
                bar.update(1)
                if self.alce.keep(record):
                    return
                # Written at once, so an interrupted run resumes after it.
                sink.write(record.model_dump_json() + "\n")
                sink.flush()
                done[record.key] = record
                self.ran += 1

            indices = [position[unit.key] for unit in pending]
            indices += range(len(self.plan.units), len(self.plan.units) + jobs)
            self.figures = await self.executor.answer(self.batch, indices, keep, self.scoring)
        return [done[unit.key] for unit in self.plan.units]


# --- the run's log -------------------------------------------------------------------------


def _run_config(
    plan: RunPlan, driver: _RunDriver, started: float, records: Sequence[CaseRecord]
) -> dict[str, Any]:
    batch, figures = driver.batch, driver.figures
    return {
        **_static_config(plan, records),
        "started_at": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "finished_at": _now(),
        "seconds": round(time.time() - started, 2),
        "limit": driver.options.limit,
        "units": {
            "total": len(plan.units),
            "ran": driver.ran,
            "resumed": driver.resume.resumed,
            "rerun_failed": driver.resume.failed,
            "rerun_changed": driver.resume.changed,
        },
        "resume_policy": {
            "rerun_failed": driver.policy.rerun_failed,
            "reuse_changed": driver.policy.reuse_changed,
        },
        "setup_seconds": round(figures.setup_seconds, 3),
        "execution_seconds": round(figures.seconds, 3),
        "execution_cpu_seconds": round(figures.cpu_seconds, 3),
        "concurrency": batch.concurrency,
        "model_cache_enabled": batch.cache,
        "model_cache": figures.model_calls,
        "executor": driver.executor.config(),
        "stream_calls": batch.stream_calls,
        "model_streaming": dict(figures.streaming),
        "prices": {
            name: price.model_dump(mode="json") for name, price in driver.options.prices.items()
        },
    }


def _static_config(plan: RunPlan, records: Sequence[CaseRecord]) -> dict[str, Any]:
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
        "variant_notes": variant_notes(variants, plan.models, records),
        "models": [m.model_dump(mode="json") for m in plan.models],
        "scorers": [scorer.config() for scorer in plan.scorers],
        "versions": _versions(),
    }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
