"""Evaluation harness figures, measured side by side in one run.

1. Scoring throughput with the lexical judge: cases per second over generated cases (every
   built-in scorer, and the two citation scorers alone), with the ratio between them.
2. Runner efficiency (issue #5) against ``citelab serve-model`` (the extractive model behind
   the OpenAI API, in its own process as a real endpoint would be, over real HTTP, every call
   taking 200 ms, the model's own time included), at concurrency 32 and 8: achieved wall
   time against the ideal one, as ``ideal / achieved`` (1.0 is perfect; the target is 0.9 at
   concurrency 32), over 1,024 cases (``--cases``): a throughput figure needs a run long
   enough that its start is not most of it (the first cases cannot all start at once: the
   client's CPU per case spreads them, and the spread stays to the end of the run).

   The ideal is the runner's own schedule with nothing but the latency: cases start in order
   as one of the ``concurrency`` slots frees, and a case holds its slot for one latency per
   model call it made (cases that search again make two). With equal rounds this is
   ceil(cases / concurrency) waves.

   Side by side: the runner with whole completions (its default, nothing watches an
   evaluation's tokens) and with streamed ones; and the same number of bare model calls
   through the same adapter (no agent, no runner), whole and streamed: the ceiling any
   runner can reach on this machine. Each line also gives the client's CPU per case (this
   process), the server's CPU per call, and the load average when the figure was taken:
   on two cores shared with other jobs, CPU per case is what decides the figure.

Run: ``.venv/bin/python benchmarks/bench_evals.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import json
import os
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import ServedModel, ms_each, served_model
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.evals import (
    Case,
    CaseRecord,
    GoldClaim,
    GoldTurn,
    build_scorers,
    load_dataset,
    run,
    score_records,
)
from citelab.evals.records import (
    SourceRecord,
    TurnRecord,
)
from citelab.models import ExtractiveModel, Message, OpenAIModel, collect

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


def ideal_seconds(rounds: Sequence[int], concurrency: int, latency: float) -> float:
    """The runner's schedule if every model call took exactly ``latency`` and nothing else
    took any time: units start in order as a slot frees, each holding it ``rounds`` calls."""
    free_at = [0.0] * min(concurrency, len(rounds))
    end = 0.0
    for count in rounds:
        start = heapq.heappop(free_at)
        finish = start + count * latency
        heapq.heappush(free_at, finish)
        end = max(end, finish)
    return end


@dataclass
class _Figure:
    """One measured line: what ran, how long it took against the ideal, and the CPU it cost."""

    what: str
    concurrency: int
    cases: int
    calls: int
    seconds: float
    ideal: float
    client_cpu: float
    server_cpu: float | None
    load: float = field(default_factory=lambda: os.getloadavg()[0])

    @property
    def efficiency(self) -> float:
        return self.ideal / self.seconds

    def line(self) -> str:
        server = ms_each(self.server_cpu, self.calls)
        return (
            f"{self.what:<27}{self.concurrency:>5}{self.cases or '-':>7}{self.calls:>7}"
            f"{self.seconds:>10.2f}{self.ideal:>8.2f}{self.efficiency:>8.2f}"
            f"{self.client_cpu * 1000 / (self.cases or self.calls):>11.2f}"
            f"{server:>11}{self.client_cpu / self.seconds:>7.2f}{self.load:>7.1f}"
        )


_HEADER = (
    f"{'what':<27}{'conc':>5}{'cases':>7}{'calls':>7}{'achieved':>10}{'ideal':>8}{'eff.':>8}"
    f"{'client ms':>11}{'server ms':>11}{'busy':>7}{'load':>7}\n"
    f"{'':<27}{'':>5}{'':>7}{'':>7}{'s':>10}{'s':>8}{'':>8}{'per case*':>11}{'per call':>11}"
    f"{'client':>7}{'1 min':>7}"
)


class _Runs:
    """The suite runs against one served model, in one folder of cases."""

    def __init__(self, root: Path, server: ServedModel, cases: int) -> None:
        self.root = root
        self.server = server
        self.cases = cases
        (root / "cases.jsonl").write_text(
            "".join(json.dumps(case) + "\n" for case in _questions(cases)), encoding="utf-8"
        )
        self.runs = 0
        self.setups: list[float] = []
        """Each run's set-up time (corpora, indexes, model clients): not in its figure."""

    def suite(self, concurrency: int, *, stream_calls: bool, latency: float) -> _Figure:
        self.runs += 1
        name = f"run{self.runs}"
        suite = self.root / f"{name}.toml"
        suite.write_text(
            f'name = "{name}"\ndatasets = ["cases.jsonl"]\nconcurrency = {concurrency}\n'
            'scorers = ["no_answer"]\nmodels = [{ spec = "openai:extractive", '
            f'label = "served", options = {{ base_url = "{self.server.base_url}" }} }}]\n',
            encoding="utf-8",
        )
        out = self.root / f"out-{name}"
        server = self.server.cpu_seconds()
        result = run(suite, out_dir=out, progress=False, cache=False, stream_calls=stream_calls)
        # The server's CPU while the whole run ran: it has no work but the model calls.
        server_cpu = _delta(server, self.server.cpu_seconds())
        log = json.loads((out / "run.json").read_text(encoding="utf-8"))
        rounds = result.turns.assign(order=result.turns["case_id"].str[1:].astype(int))
        per_case = rounds.groupby("order")["rounds"].sum().sort_index().tolist()
        self.setups.append(float(log["setup_seconds"]))
        return _Figure(
            f"runner, {'streamed' if stream_calls else 'whole'} calls",
            concurrency,
            self.cases,
            sum(per_case),
            float(log["execution_seconds"]),
            ideal_seconds(per_case, concurrency, latency),
            float(log["execution_cpu_seconds"]),
            server_cpu,
        )


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


async def _first_round_prompts(count: int) -> list[list[Message]]:
    """What the runner's first model calls send: the same questions through the service."""
    questions = _questions(count)
    service = AnswerService(models={"extractive": ExtractiveModel()}, **_memory_stores())
    prompts: list[list[Message]] = []
    for case in questions[: min(count, 24)]:
        turns = case["turns"]
        assert isinstance(turns, list)
        answer = await service.answer(str(case["agent"]), str(turns[0]["question"]))
        prompts.append(answer.rounds[0].messages)
    await service.aclose()
    return prompts


def _memory_stores() -> dict[str, Any]:
    return {"store": MemoryConversationStore(), "logs": MemoryLogStore()}


async def _bare_calls(
    server: ServedModel,
    prompts: list[list[Message]],
    calls: int,
    concurrency: int,
    latency: float,
    *,
    stream: bool,
) -> _Figure:
    """``calls`` bare model calls, ``concurrency`` at a time (no agent, no runner)."""
    model = OpenAIModel("extractive", base_url=server.base_url, stream=stream)
    gate = asyncio.Semaphore(concurrency)

    async def one(index: int) -> None:
        async with gate:
            await collect(model.stream(prompts[index % len(prompts)]))

    await asyncio.gather(*(one(i) for i in range(concurrency)))  # open the connections
    client, server_cpu = time.process_time(), server.cpu_seconds()
    began = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(calls)))
    seconds = time.perf_counter() - began
    figure = _Figure(
        f"bare calls, {'streamed' if stream else 'whole'}",
        concurrency,
        0,
        calls,
        seconds,
        ideal_seconds([1] * calls, concurrency, latency),
        time.process_time() - client,
        _delta(server_cpu, server.cpu_seconds()),
    )
    await model.aclose()
    return figure


def runner_efficiency(cases: int, latency_ms: float, concurrencies: list[int], repeat: int) -> None:
    latency = latency_ms / 1000
    print(
        f"\nrunner efficiency: serve-model in its own process, every call taking "
        f"{latency_ms:.0f} ms; efficiency = ideal / achieved"
    )
    with (
        served_model("--latency-ms", str(latency_ms)) as server,
        tempfile.TemporaryDirectory() as folder,
    ):
        runs = _Runs(Path(folder), server, cases)
        prompts = asyncio.run(_first_round_prompts(cases))
        # Warm up: imports (the openai SDK), index loading and first connections are one-time
        # costs, not the runner's steady state.
        runs.suite(4, stream_calls=False, latency=latency)
        print(_HEADER)
        best: dict[tuple[str, int], _Figure] = {}
        for concurrency in concurrencies:
            for attempt in range(repeat):
                figures = [
                    runs.suite(concurrency, stream_calls=False, latency=latency),
                    runs.suite(concurrency, stream_calls=True, latency=latency),
                ]
                calls = figures[0].calls
                for stream in (False, True):
                    figures.append(
                        asyncio.run(
                            _bare_calls(server, prompts, calls, concurrency, latency, stream=stream)
                        )
                    )
                for figure in figures:
                    print(figure.line() + (f"   (run {attempt + 1})" if repeat > 1 else ""))
                    key = (figure.what, concurrency)
                    if key not in best or figure.efficiency > best[key].efficiency:
                        best[key] = figure
        if repeat > 1:
            print("best of each:")
            for figure in best.values():
                print(figure.line())
        setups = sorted(runs.setups[1:])  # the warm-up's includes first imports
    print(
        "  * bare calls: per call. busy: the share of one core the client used while it ran; "
        f"{os.cpu_count()} cores; load: the 1-minute load average when the line was taken.\n"
        "  achieved: the runner's execution time (run.json); its set-up before the first case "
        f"(corpora, indexes, model clients) took {setups[len(setups) // 2] * 1000:.0f} ms "
        "(median), outside the figure, as the bare calls' connection warm-up is."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--repeat", type=int, default=None, help="runs of each runner figure")
    parser.add_argument("--cases", type=int, default=None, help="cases per runner figure")
    args = parser.parse_args()
    scoring_throughput(1_000 if args.quick else 10_000)
    repeat = args.repeat or (1 if args.quick else 3)
    runner_efficiency(args.cases or (64 if args.quick else 1024), 200.0, [32, 8], repeat)


if __name__ == "__main__":
    main()
