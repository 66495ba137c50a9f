"""Evaluation harness figures, measured side by side in one run.

1. Scoring throughput with the lexical judge: cases per second over generated cases (every
   built-in scorer, and the two citation scorers alone), with the ratio between them.
2. Runner efficiency against ``citelab serve-model`` (the extractive model behind the OpenAI
   API, in its own process, over real HTTP, 200 ms added to every call): achieved throughput
   over the ideal one (every call taking exactly the latency, ``concurrency`` calls always in
   flight), at concurrency 32 and 8. Beside it, the same number of bare model calls through
   the same adapter (no agent, no runner): the ceiling any runner can reach on this machine,
   and the runner's share of it.

Run: ``.venv/bin/python benchmarks/bench_evals.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from citelab.evals import (
    Case,
    CaseRecord,
    GoldClaim,
    GoldTurn,
    SourceRecord,
    TurnRecord,
    build_scorers,
    load_dataset,
    run,
    score_records,
)
from citelab.models import Message, OpenAIModel, collect

REPOSITORY = Path(__file__).resolve().parents[1]
_WORDS = [f"w{index}" for index in range(400)]


# --- 1. scoring throughput --------------------------------------------------------------------


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 14))).capitalize()


def _generated_case(index: int, rng: random.Random) -> tuple[CaseRecord, Case]:
    """One answered turn: 3-6 sources, 2-5 statements citing 1-2 of them (some wrongly)."""
    sources = [
        SourceRecord(
            number=n,
            uri=f"entity:doc/{index}-{n}",
            title=f"Doc {n}",
            content=" ".join(_sentence(rng) + "." for _ in range(4)),
        )
        for n in range(1, rng.randint(3, 6) + 1)
    ]
    statements = []
    for _ in range(rng.randint(2, 5)):
        cited = rng.sample(sources, k=rng.choice((1, 1, 2)))
        body = rng.choice(cited[0].content.split(". ")).rstrip(".")
        statements.append(body + " " + "".join(f"[{s.number}]" for s in cited) + ".")
    text = " ".join(statements)
    message = {"content": [{"type": "text", "text": text}]}
    turn = TurnRecord(
        text=text,
        raw_text=text,
        sources=sources,
        candidates=sources,
        message=message,
        mapping={s.number: s.number for s in sources},
    )
    gold = GoldTurn(
        question="q", claims=[GoldClaim(text=statements[0][:40], supported_by=[sources[0].uri])]
    )
    case_id = f"c{index}"
    record = CaseRecord(
        key=case_id, variant="v", model="m", dataset="d", case_id=case_id, turns=[turn]
    )
    return record, Case(id=case_id, turns=[gold])


def scoring_throughput(cases: int) -> None:
    rng = random.Random(0)
    generated = [_generated_case(index, rng) for index in range(cases)]
    records = [record for record, _ in generated]
    gold = {("d", case.id): case for _, case in generated}
    rates = {}
    for label, specs in (
        ("all scorers", None),
        ("recall+precision", ["citation_recall", "citation_precision"]),
    ):
        scorers = build_scorers(specs)
        began = time.perf_counter()
        result = score_records(records, gold, scorers, resamples=200)
        result.to_pandas("variant")
        seconds = time.perf_counter() - began
        rates[label] = cases / seconds
        print(
            f"scoring, lexical judge, {label:17s}: {cases} cases in {seconds:6.2f} s = "
            f"{rates[label]:8.0f} cases/s ({len(scorers)} scorers)"
        )
    ratio = rates["recall+precision"] / rates["all scorers"]
    print(f"  ratio (citation scorers alone / all scorers): {ratio:.2f}x")


# --- 2. runner efficiency ---------------------------------------------------------------------


def _questions(count: int) -> list[dict[str, object]]:
    """Single-turn cases from the bundled datasets' first questions, repeated as needed."""
    firsts = []
    for name in ("university", "helpcentre", "intranet"):
        for case in load_dataset(REPOSITORY / "fixtures" / "datasets" / f"{name}.jsonl"):
            reader = case.reader.model_dump(exclude_defaults=True)
            firsts.append(
                {
                    "agent": case.agent,
                    "reader": reader,
                    "turns": [{"question": case.turns[0].question}],
                }
            )
    return [{"id": f"q{i}", **firsts[i % len(firsts)]} for i in range(count)]


class _ServedModel:
    """``citelab serve-model`` in its own process (as a real endpoint would be), stopped by pid."""

    def __init__(self, latency_ms: float) -> None:
        command = [
            sys.executable,
            "-m",
            "citelab",
            "serve-model",
            "--port",
            "0",
            "--latency-ms",
            str(latency_ms),
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        found = re.search(r"(http://\S+)", self.process.stdout.readline())
        if found is None:
            self.process.terminate()
            raise RuntimeError("citelab serve-model did not announce its address")
        self.base_url = found.group(1)

    def __enter__(self) -> _ServedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


async def _raw_calls(base_url: str, calls: int, concurrency: int) -> float:
    """Seconds for ``calls`` bare model calls, ``concurrency`` at a time (no agent, no runner)."""
    model = OpenAIModel("extractive", base_url=base_url)
    messages: list[Message] = [
        {
            "role": "system",
            "content": '<sources>\n<source number="1" uri="entity:a/1" '
            'title="Fees">\nFees are due in May.\n</source>\n</sources>',
        },
        {"role": "user", "content": "When are fees due?"},
    ]
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            await collect(model.stream(messages))

    await asyncio.gather(*(one() for _ in range(concurrency)))  # warm the connections
    began = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(calls)))
    seconds = time.perf_counter() - began
    await model.aclose()
    return seconds


def runner_efficiency(cases: int, latency_ms: float, concurrencies: list[int]) -> None:
    with _ServedModel(latency_ms) as server, tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "cases.jsonl").write_text(
            "".join(json.dumps(case) + "\n" for case in _questions(cases)), encoding="utf-8"
        )
        # Warm up first: imports (the openai SDK), index loading and first connections are
        # one-time costs, not the runner's steady state.
        _run_suite(root, server.base_url, 4, "warmup")
        for concurrency in concurrencies:
            calls, seconds = _run_suite(root, server.base_url, concurrency, f"c{concurrency}")
            ideal = calls * latency_ms / 1000 / concurrency
            raw = asyncio.run(_raw_calls(server.base_url, calls, concurrency))
            print(
                f"runner, serve-model +{latency_ms:.0f} ms, concurrency {concurrency:2d}: {cases} "
                f"cases ({calls} model calls) in {seconds:5.2f} s, ideal {ideal:5.2f} s: "
                f"efficiency {ideal / seconds:.2f}"
            )
            print(
                f"  the same {calls} bare model calls (no agent, no runner): {raw:5.2f} s, "
                f"efficiency {ideal / raw:.2f}; runner / bare calls: {raw / seconds:.2f}"
            )
    print(f"  (load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def _run_suite(root: Path, base_url: str, concurrency: int, name: str) -> tuple[int, float]:
    suite = root / f"{name}.toml"
    suite.write_text(
        f'name = "{name}"\ndatasets = ["cases.jsonl"]\nconcurrency = {concurrency}\n'
        f'scorers = ["no_answer"]\nmodels = [{{ spec = "openai:extractive", label = "served", '
        f'options = {{ base_url = "{base_url}" }} }}]\n',
        encoding="utf-8",
    )
    out = root / f"out-{name}"
    result = run(suite, out_dir=out, progress=False, cache=False)
    log = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return int(result.turns["rounds"].sum()), float(log["execution_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    args = parser.parse_args()
    scoring_throughput(1_000 if args.quick else 10_000)
    runner_efficiency(64 if args.quick else 256, 200.0, [32, 8])


if __name__ == "__main__":
    main()
