"""The Ray executor's figures (issue #17), measured side by side in one run.

1. Model-bound sweep: 2,000 cases (``--cases``) against ``citelab serve-model`` in its own
   process (the extractive model behind the OpenAI API, every call taking 200 ms), the model
   cache off, at ``--concurrency`` cases per worker: local (one process) against Ray with 1
   and 2 workers. Each line gives achieved against ideal wall time (the ideal is the runner's
   schedule with nothing but the latency, over every slot: concurrency × workers), the CPU
   per case (driver and workers) and the load average. Ray's overhead per case is Ray with
   one worker against local at the same concurrency, in wall and in CPU milliseconds.
2. CPU-bound sweep: rescoring 20,000 recorded cases (``--rescore-cases``; real records of the
   bundled suite, replicated under new case ids) with every scorer of the bundled suite:
   local against 2 worker processes and against Ray with 2 workers on this 2-core machine.
   Given twice: the scoring itself (records in memory → scored rows; the part an executor
   runs), and ``rescore()`` end to end (reading records.jsonl, scoring, writing tables and
   report). The records go to the workers as their JSON lines. Then what bounds it: the CPU,
   measured in this process, of scoring a record against what a worker's path adds to it
   (the driver writing the record's line, the worker validating it and pickling its batch's
   columnar table; the driver unpickling and concatenating it), and the speed-up those costs
   allow on 2 cores.

The cluster: a local one (2 CPUs, loopback, no dashboard, auth and usage reports off, its
files in a temp dir) unless ``--address`` names one. Run:
``.venv/bin/python benchmarks/bench_ray.py [--quick] [--address HOST:PORT]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _common import served_model
from bench_evals import _questions, ideal_seconds
from citelab.evals import load_suite, plan_run, rescore, run
from citelab.evals.execution import (
    Executor,
    LocalExecutor,
    ProcessExecutor,
    RayExecutor,
    ScoringJob,
)
from citelab.evals.records import CaseRecord, read_records
from citelab.evals.results import ScoredRows, score_rows


@contextmanager
def _cluster(address: str | None) -> Iterator[None]:
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    with tempfile.TemporaryDirectory(prefix="ray-", dir="/tmp") as temp:
        if address:
            ray.init(address=address, logging_level="WARNING")
        else:
            # Ray gives its node a fixed time to start; on a loaded machine a retry rides it out.
            for attempt in (1, 2, 3):
                try:
                    ray.init(
                        num_cpus=2,
                        include_dashboard=False,
                        _temp_dir=f"{temp}/try{attempt}",
                        _node_ip_address="127.0.0.1",
                        logging_level="WARNING",
                    )
                    break
                except Exception as exc:
                    ray.shutdown()
                    if attempt == 3:
                        raise
                    print(f"  (Ray did not start, trying again: {exc})")
        try:
            yield
        finally:
            ray.shutdown()


def _load() -> float:
    return os.getloadavg()[0]


# --- 1. a model-bound sweep ---------------------------------------------------------------


def model_bound(cases: int, concurrency: int, latency_ms: float) -> None:
    latency = latency_ms / 1000
    print(
        f"model-bound sweep: {cases} cases, serve-model in its own process, every call taking "
        f"{latency_ms:.0f} ms, {concurrency} cases at a time per worker, cache off"
    )
    print(
        f"{'executor':<18}{'slots':>6}{'achieved s':>12}{'ideal s':>9}{'ideal/achieved':>16}"
        f"{'CPU ms/case':>13}{'server ms':>11}{'CPU floor s':>13}{'setup s':>9}{'load':>6}"
    )
    with (
        served_model("--latency-ms", str(latency_ms)) as server,
        tempfile.TemporaryDirectory() as folder,
    ):
        root = Path(folder)
        (root / "cases.jsonl").write_text(
            "".join(json.dumps(case) + "\n" for case in _questions(cases)), encoding="utf-8"
        )
        suite = root / "sweep.toml"
        suite.write_text(
            f'name = "sweep"\ndatasets = ["cases.jsonl"]\nconcurrency = {concurrency}\n'
            'scorers = ["no_answer"]\nmodels = [{ spec = "openai:extractive", '
            f'label = "served", options = {{ base_url = "{server.base_url}" }} }}]\n',
            encoding="utf-8",
        )
        # Warm-up: first imports, index files and connections are one-time costs.
        run(suite, out_dir=root / "warm", progress=False, cache=False, limit=concurrency)
        lines: dict[str, dict[str, float]] = {}
        for label, executor, workers in (
            ("local", "local", 1),
            ("ray, 1 worker", "ray", 1),
            ("ray, 2 workers", "ray", 2),
        ):
            out = root / label.replace(" ", "").replace(",", "-")
            options: dict[str, Any] = {} if executor == "local" else {"workers": workers}
            served_before = server.cpu_seconds() or 0.0
            result = run(
                suite,
                out_dir=out,
                progress=False,
                cache=False,
                executor=executor,
                **options,
            )
            log = json.loads((out / "run.json").read_text(encoding="utf-8"))
            order = result.turns.assign(index=result.turns["case_id"].str[1:].astype(int))
            rounds = order.groupby("index")["rounds"].sum().sort_index().tolist()
            slots = concurrency * workers
            served = (server.cpu_seconds() or 0.0) - served_before
            figure = {
                "achieved": float(log["execution_seconds"]),
                "ideal": ideal_seconds(rounds, slots, latency),
                "cpu": float(log["execution_cpu_seconds"]),
                "setup": float(log["setup_seconds"]),
                "served": served,
            }
            lines[label] = figure
            # Below this no run can go: all the CPU it took, spread over every core.
            floor = (figure["cpu"] + served) / (os.cpu_count() or 1)
            print(
                f"{label:<18}{slots:>6}{figure['achieved']:>12.2f}{figure['ideal']:>9.2f}"
                f"{figure['ideal'] / figure['achieved']:>16.2f}"
                f"{figure['cpu'] * 1000 / cases:>13.2f}{served * 1000 / cases:>11.2f}"
                f"{floor:>13.2f}{figure['setup']:>9.2f}{_load():>6.1f}"
            )
    local, ray1 = lines["local"], lines["ray, 1 worker"]
    wall = (ray1["achieved"] - local["achieved"]) * 1000 / cases
    cpu = (ray1["cpu"] - local["cpu"]) * 1000 / cases
    print(
        f"  Ray overhead per case (1 worker against local, same slots): {wall:+.2f} ms wall, "
        f"{cpu:+.2f} ms CPU (driver + workers)\n"
        f"  achieved: execution time from run.json, without set-up (setup s: Ray's includes "
        f"starting the actors); CPU ms/case: driver + workers; server ms: serve-model's CPU "
        f"per case (set-up and warm-up runs in the set-up and the first line); CPU floor: "
        f"(CPU + server CPU) / {os.cpu_count()} cores, not counting Ray's daemons; load: "
        f"1-minute load average"
    )


# --- 2. a CPU-bound sweep: rescoring ------------------------------------------------------


def _replicated_suite(root: Path, copies: int) -> Path:
    """The bundled suite over its datasets, each case repeated ``copies`` times."""
    bundled = load_suite("default")
    names = []
    for path in bundled.dataset_paths():
        lines = path.read_text(encoding="utf-8").splitlines()
        out = root / path.name
        with out.open("w", encoding="utf-8") as sink:
            for copy in range(copies):
                for line in lines:
                    if line.strip():
                        case = json.loads(line)
                        case["id"] = f"{case['id']}.r{copy}"
                        sink.write(json.dumps(case) + "\n")
        names.append(str(out))
    assert bundled.path is not None
    text = bundled.path.read_text(encoding="utf-8")
    start = text.index("datasets = [")
    end = text.index("]", start) + 1
    text = text[:start] + f"datasets = {json.dumps(names)}" + text[end:]
    suite = root / "rescore.toml"
    suite.write_text(text.replace('name = "default"', 'name = "rescore"'), encoding="utf-8")
    return suite


def _record_sweep(root: Path, target: int) -> tuple[Path, Path, int]:
    """Run the bundled suite once, then write its records again under the replicated cases'
    keys until there are about ``target`` of them. Returns (suite, output folder, count)."""
    first = root / "bundled"
    run("default", out_dir=first, progress=False)
    recorded = read_records(first / "records.jsonl")
    by_case = {(r.variant, r.model, r.dataset, r.case_id): r for r in recorded.values()}
    copies = math.ceil(target / len(by_case))
    suite = _replicated_suite(root, copies)
    plan = plan_run(load_suite(suite))
    out = root / "replicated"
    out.mkdir()
    with (out / "records.jsonl").open("w", encoding="utf-8") as sink:
        for unit in plan.units[:target]:
            original = unit.case.id.rsplit(".r", 1)[0]
            record = by_case[(unit.variant.name, unit.model.name, unit.dataset.name, original)]
            copy = record.model_copy(update={"key": unit.key, "case_id": unit.case.id})
            sink.write(copy.model_dump_json() + "\n")
    return suite, out, min(target, len(plan.units))


def _time_scoring(executor: Executor, suite: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds (this process's, which for workers is the driver's) of scoring
    every recorded case, after a warm-up that starts the workers."""
    plan = plan_run(load_suite(suite))
    records = list(read_records(out / "records.jsonl").values())
    job = ScoringJob(plan.cases, plan.scorers)
    executor.score(job, records[:50])  # start the workers (once per run), warm them up
    began, cpu = time.perf_counter(), time.process_time()
    executor.score(job, records)
    return time.perf_counter() - began, time.process_time() - cpu


def _costs(suite: Path, out: Path, count: int = 4000) -> dict[str, float]:
    """CPU ms per record, in this process, of scoring and of each thing a worker's path adds:
    the record's line written (driver) and validated (worker), its batch's table pickled
    (worker), unpickled and concatenated (driver). Measured after one pass has warmed the
    caches."""
    plan = plan_run(load_suite(suite))
    cases = plan.cases
    path = out / "records.jsonl"
    lines = path.read_bytes().splitlines()[:count]
    records = [CaseRecord.model_validate_json(line) for line in lines]
    batches = [records[i : i + 200] for i in range(0, len(records), 200)]

    def cpu_ms(work: Any) -> tuple[float, Any]:
        began = time.process_time()
        result = work()
        return (time.process_time() - began) * 1000 / len(records), result

    [score_rows(batch, cases, plan.scorers) for batch in batches]
    scoring, tables = cpu_ms(lambda: [score_rows(b, cases, plan.scorers) for b in batches])
    dump, _ = cpu_ms(lambda: [record.model_dump_json().encode() for record in records])
    validate, _ = cpu_ms(lambda: [CaseRecord.model_validate_json(line) for line in lines])
    pickling, data = cpu_ms(lambda: [pickle.dumps(table, protocol=5) for table in tables])
    unpickling, back = cpu_ms(lambda: [pickle.loads(one) for one in data])
    concat, _ = cpu_ms(lambda: ScoredRows.concat(back))
    return {
        "scoring": scoring,
        "dump": dump,
        "validate": validate,
        "pickle": pickling,
        "unpickle": unpickling,
        "concat": concat,
        "bytes": sum(map(len, data)) / len(records),
    }


def cpu_bound(target: int, end_to_end: bool = True) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        suite, out, count = _record_sweep(root, target)
        scorers = len(load_suite(suite).scorers or [])
        print(
            f"\nCPU-bound sweep: rescoring {count} recorded cases (the bundled suite's records, "
            f"replicated) with its {scorers} scorers and lexical judge"
        )
        print(
            f"{'what':<40}{'local s':>9}{'x2 s':>10}{'speed-up':>10}{'driver CPU s':>14}{'load':>6}"
        )
        local, _ = _time_scoring(LocalExecutor(), suite, out)
        workers: list[tuple[str, Any]] = [
            ("scoring, 2 worker processes", lambda: ProcessExecutor(2)),
            ("scoring, Ray with 2 workers", lambda: RayExecutor(workers=2)),
        ]
        for what, build in workers:
            executor = build()
            try:
                elsewhere, driver = _time_scoring(executor, suite, out)
            finally:
                executor.close()
            print(
                f"{what:<40}{local:>9.2f}{elsewhere:>10.2f}{local / elsewhere:>9.2f}x"
                f"{driver:>14.2f}{_load():>6.1f}"
            )
        if end_to_end:
            began = time.perf_counter()
            rescore(out, suite)
            local_all = time.perf_counter() - began
            for name in ("processes", "ray"):
                began = time.perf_counter()
                rescore(out, suite, executor=name, workers=2)
                elsewhere_all = time.perf_counter() - began
                what = f"rescore() end to end, {name}"
                print(
                    f"{what:<40}{local_all:>9.2f}{elsewhere_all:>10.2f}"
                    f"{local_all / elsewhere_all:>9.2f}x{'':>14}{_load():>6.1f}"
                )
            print(
                "  end to end adds what stays on the driver either way: reading records.jsonl, "
                "the tables, bootstrap intervals and report.html, and starting the workers"
            )
        costs = _costs(suite, out)
        added = (
            costs["dump"]
            + costs["validate"]
            + costs["pickle"]
            + costs["unpickle"]
            + costs["concat"]
        )
        ceiling = 2 * costs["scoring"] / (costs["scoring"] + added)
        print(
            f"  what bounds it, CPU ms per record (this process, {costs['bytes'] / 1000:.1f} kB "
            f"of rows each): scoring {costs['scoring']:.3f}; a worker's path adds "
            f"{costs['dump']:.3f} to write the record's line + {costs['validate']:.3f} to "
            f"validate it + {costs['pickle']:.3f} "
            f"to pickle its rows + {costs['unpickle']:.3f} to unpickle them + "
            f"{costs['concat']:.3f} to concatenate them = {added:.3f} "
            f"({added / costs['scoring']:.0%} of the scoring)\n"
            f"  so 2 cores shared by the driver and 2 workers allow at most "
            f"2 x {costs['scoring']:.3f} / {costs['scoring'] + added:.3f} = {ceiling:.2f}x "
            f"(before the workers' own start-up and per-call costs)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--cases", type=int, default=None, help="cases of the model sweep")
    parser.add_argument("--concurrency", type=int, default=32, help="cases at once per worker")
    parser.add_argument("--rescore-cases", type=int, default=None, help="records to rescore")
    parser.add_argument(
        "--scoring-only", action="store_true", help="skip rescore() end to end (slow: the report)"
    )
    parser.add_argument("--address", default=None, help="a running Ray cluster (HOST:PORT)")
    parser.add_argument(
        "--only", choices=("model", "cpu"), default=None, help="one of the two sweeps"
    )
    args = parser.parse_args()
    with _cluster(args.address):
        if args.only in (None, "model"):
            model_bound(args.cases or (256 if args.quick else 2000), args.concurrency, 200.0)
        if args.only in (None, "cpu"):
            cpu_bound(args.rescore_cases or (2000 if args.quick else 20_000), not args.scoring_only)


if __name__ == "__main__":
    main()
