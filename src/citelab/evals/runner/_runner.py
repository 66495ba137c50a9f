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

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from citelab._async import run_blocking
from citelab.evals._versions import versions as _versions
from citelab.evals.records import CaseRecord, read_records, read_records_file
from citelab.evals.report import write_outputs
from citelab.evals.results import EvalResult, result_of
from citelab.evals.runner._batch import BatchRunner
from citelab.evals.runner._executors import Executor, LocalExecutor, get_executor
from citelab.evals.runner._plan import RunPlan, Unit, plan_run
from citelab.evals.runner._suite import Suite, load_suite
from citelab.evals.runner._variant_notes import variant_notes

__all__ = [
    "Resume",
    "ResumePolicy",
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
    return run_blocking(call)


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
        driver = _RunDriver(
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
        records = await driver.run()
        result = result_of(
            backend.score(plan, records),
            records,
            plan.cases,
            plan.scorers,
            config=_run_config(plan, driver, started),
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
    its executor run them (this process by default) with a progress bar, and appends each
    record as it comes."""

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

            await self.backend.execute(self.batch, pending, keep)
        return [done[unit.key] for unit in self.plan.units]


# --- the run's log -------------------------------------------------------------------------


def _run_config(plan: RunPlan, driver: _RunDriver, started: float) -> dict[str, Any]:
    batch = driver.batch
    return {
        **_static_config(plan),
        "started_at": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "finished_at": _now(),
        "seconds": round(time.time() - started, 2),
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
        "setup_seconds": round(batch.setup_seconds, 3),
        "execution_seconds": round(batch.seconds, 3),
        "execution_cpu_seconds": round(batch.cpu_seconds, 3),
        "concurrency": batch.concurrency,
        "model_cache_enabled": batch.cache,
        "model_cache": driver.backend.cache_counts(batch),
        "executor": driver.backend.config(),
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
