"""What the answer pipeline costs around the model, measured side by side in one run.

1. Pipeline overhead per answer (everything but the model: validation, forced retrieval,
   source processing, prompt building, hooks, finalize, anchors, the contract message, logs,
   the conversation store), on the three fixture corpora with about 10 held sources:
   - extractive: the offline model, its own time measured around every delta and subtracted;
   - instant: a model that answers at once citing [1]..[10] (no subtraction needed);
   each with in-memory stores and with the default SQLite stores. Median and p99.
2. 200 concurrent answers through the service (issue #4) against ``serve-model`` (the
   extractive model in its own process, over loopback HTTP, the real ``openai`` SDK) with
   200 ms of latency added to every model call: wall time versus the ideal, as a ratio. All
   answers start at once, so the ideal is the longest critical path: the most model rounds
   any answer needed x the latency. Side by side: model calls streamed (the default) and
   whole (``model_options = {"stream": false}``, for answers nobody watches token by token),
   and the same first-round calls alone through the adapter (no pipeline). Each line gives
   the client's CPU per answer, its CPU floor (the client's CPU seconds over the ideal: the
   ratio one core could not beat even with every wait overlapped), the server's CPU per call
   and the load average when it was taken.

    .venv/bin/python benchmarks/bench_pipeline.py [--quick] [--repeat N]
    .venv/bin/python benchmarks/bench_pipeline.py --before CHECKOUT [--rounds N] [--quick]

``--before /path/to/other/checkout`` measures figure 1 only, side by side: each checkout's
code (its ``src/``, same interpreter and packages) in a fresh process, the two taking turns
``N`` times; the median of each row per checkout, and the after/before ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import ServedModel, ms_each, served_model
from citelab._paths import fixtures_dir
from citelab.agent import AgentConfig
from citelab.answers import (
    AnswerService,
    MemoryConversationStore,
    MemoryLogStore,
    SQLiteConversationStore,
    SQLiteLogStore,
)
from citelab.corpus import load_corpus
from citelab.models import (
    ExtractiveModel,
    FinishDelta,
    Message,
    Model,
    ModelDelta,
    OpenAIModel,
    TextDelta,
    ToolChoice,
    ToolSpec,
    collect,
)
from citelab.sources import RetrievalSettings

CORPORA = ("university", "helpcentre", "intranet")
TEN_SOURCES = RetrievalSettings(max_results=50, entity_cap=10)


class TimedModel:
    """Wraps a model and adds up the time spent inside it (creating and advancing streams)."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        started = time.perf_counter()
        deltas = self.inner.stream(messages, tools, tool_choice=tool_choice, seed=seed)
        self.seconds += time.perf_counter() - started
        while True:
            started = time.perf_counter()
            try:
                delta = await anext(deltas)
            except StopAsyncIteration:
                self.seconds += time.perf_counter() - started
                return
            self.seconds += time.perf_counter() - started
            yield delta


class InstantModel:
    """Answers at once, citing every number 1..10, in ten pieces."""

    name = "instant"

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelDelta]:
        for number in range(1, 11):
            yield TextDelta(text=f"Claim number {number} holds [{number}]. ")
        yield FinishDelta(reason="stop")


def questions(corpus_name: str, count: int) -> list[str]:
    """Questions naming three of the corpus's own titles, so retrieval finds many sources."""
    corpus = load_corpus(fixtures_dir() / "corpora" / f"{corpus_name}.jsonl")
    titles = [doc.translation("en")[1].title for doc in corpus if doc.access.public]
    picks = [[titles[(i + step * 7) % len(titles)] for step in range(3)] for i in range(count)]
    return [f"What do {a}, {b} and {c} have in common?" for a, b, c in picks]


def agents(model: str) -> dict[str, AgentConfig]:
    return {
        name: AgentConfig(name=name, corpus=name, model=model, retrieval=TEN_SOURCES)
        for name in CORPORA
    }


def stores(kind: str, folder: Path) -> dict[str, Any]:
    if kind == "memory":
        return {"store": MemoryConversationStore(), "logs": MemoryLogStore()}
    database = folder / f"{kind}-{time.monotonic_ns()}.sqlite3"
    return {"store": SQLiteConversationStore(database), "logs": SQLiteLogStore(database)}


async def overhead(kind: str, model_name: str, count: int, folder: Path) -> dict[str, float]:
    timed = TimedModel(ExtractiveModel() if model_name == "extractive" else InstantModel())
    service = AnswerService(
        agents(model_name),
        models={model_name: timed},
        index_dir=folder / "indexes",
        **stores(kind, folder),
    )
    for corpus in CORPORA:  # warm up: indexes, corpora, imports
        await service.answer(corpus, questions(corpus, 1)[0])
    costs, held, rounds = [], [], []
    for corpus in CORPORA:
        for question in questions(corpus, count):
            timed.seconds = 0.0
            started = time.perf_counter()
            answer = await service.answer(corpus, question)
            costs.append(time.perf_counter() - started - timed.seconds)
            held.append(len(answer.forced[0].returned) if answer.forced else 0)
            rounds.append(len(answer.rounds))
    for closable in (service.store, service.logs):
        if isinstance(closable, SQLiteConversationStore | SQLiteLogStore):
            closable.close()
    costs.sort()
    return {
        "median_ms": statistics.median(costs) * 1000,
        "p99_ms": costs[min(len(costs) - 1, int(len(costs) * 0.99))] * 1000,
        "sources": statistics.mean(held),
        "rounds": statistics.mean(rounds),
        "answers": len(costs),
    }


@dataclass
class Burst:
    """One burst of concurrent answers (or bare calls): its wall time against the ideal."""

    what: str
    count: int
    calls: int
    wall: float
    ideal: float
    client_cpu: float
    server_cpu: float | None
    load: float = field(default_factory=lambda: os.getloadavg()[0])

    def line(self) -> str:
        server = ms_each(self.server_cpu, self.calls)
        return (
            f"{self.what:<26}{self.count:>6}{self.calls:>7}{self.wall:>9.2f}{self.ideal:>7.2f}"
            f"{self.wall / self.ideal:>8.2f}x{self.client_cpu * 1000 / self.count:>10.2f}"
            f"{self.client_cpu / self.ideal:>8.2f}x{server:>10}{self.client_cpu / self.wall:>7.2f}"
            f"{self.load:>6.1f}"
        )


BURST_HEADER = (
    f"{'what':<26}{'count':>6}{'calls':>7}{'wall':>9}{'ideal':>7}{'ratio':>9}{'client':>10}"
    f"{'CPU':>9}{'server':>10}{'busy':>7}{'load':>6}\n"
    f"{'':<26}{'':>6}{'':>7}{'s':>9}{'s':>7}{'':>9}{'ms/each':>10}{'floor':>9}{'ms/call':>10}"
    f"{'client':>7}{'1 min':>6}"
)


class Measured:
    """Client and server CPU spent between its creation and :meth:`stop`."""

    def __init__(self, server: ServedModel) -> None:
        self.server = server
        self.client = time.process_time()
        self.server_start = server.cpu_seconds()
        self.began = time.perf_counter()

    def stop(self) -> tuple[float, float, float | None]:
        wall = time.perf_counter() - self.began
        client = time.process_time() - self.client
        after = self.server.cpu_seconds()
        server = None if after is None or self.server_start is None else after - self.server_start
        return wall, client, server


async def answers_burst(
    service: AnswerService, server: ServedModel, asked: list[str], agent: str, latency: float
) -> tuple[Burst, list[list[Message]]]:
    """Every question at once through the service; also returns the first-round prompts."""
    measured = Measured(server)
    answers = await asyncio.gather(*(service.answer(agent, q) for q in asked))
    wall, client, server_cpu = measured.stop()
    calls = sum(len(answer.rounds) for answer in answers)
    ideal = max(len(answer.rounds) for answer in answers) * latency
    label = f"service, {agent} calls"
    burst = Burst(label, len(asked), calls, wall, ideal, client, server_cpu)
    return burst, [answer.rounds[0].messages for answer in answers]


async def bare_burst(
    server: ServedModel, shown: list[list[Message]], latency: float, *, stream: bool
) -> Burst:
    """The same first-round calls at once through the adapter alone (model + HTTP only)."""
    model = OpenAIModel("extractive", base_url=server.base_url, api_key="local", stream=stream)
    await asyncio.gather(*(collect(model.stream(messages)) for messages in shown))  # connect
    measured = Measured(server)
    await asyncio.gather(*(collect(model.stream(messages)) for messages in shown))
    wall, client, server_cpu = measured.stop()
    await model.aclose()
    label = f"bare calls, {'streamed' if stream else 'whole'}"
    return Burst(label, len(shown), len(shown), wall, latency, client, server_cpu)


def remote_agents(base_url: str) -> dict[str, AgentConfig]:
    """The university agent behind the served model, its calls streamed and whole."""
    return {
        name: AgentConfig(
            name=name,
            corpus="university",
            model="openai:extractive",
            model_options={"base_url": base_url, "api_key": "local", "stream": name == "streamed"},
            retrieval=RetrievalSettings(max_results=10, entity_cap=5),
        )
        for name in ("streamed", "whole")
    }


async def concurrent(count: int, latency_ms: float, folder: Path, repeat: int) -> list[Burst]:
    latency = latency_ms / 1000
    bursts: list[Burst] = []
    with served_model("--latency-ms", str(latency_ms)) as server:
        database = folder / "concurrent.sqlite3"
        async with AnswerService(
            remote_agents(server.base_url), index_dir=folder / "indexes", database=database
        ) as service:
            asked = questions("university", count)
            for agent in ("streamed", "whole"):  # warm up: imports, index, connections
                await answers_burst(service, server, asked, agent, latency)
            for _ in range(repeat):
                for agent in ("streamed", "whole"):
                    burst, shown = await answers_burst(service, server, asked, agent, latency)
                    bursts.append(burst)
                    print(burst.line())
                for stream in (True, False):
                    bursts.append(await bare_burst(server, shown, latency, stream=stream))
                    print(bursts[-1].line())
    return bursts


OVERHEAD_HEADER = (
    f"{'model':<12}{'stores':<8}{'median ms':>10}{'p99 ms':>10}{'sources':>9}{'rounds':>8}"
)
KINDS = [(model, store) for model in ("extractive", "instant") for store in ("memory", "sqlite")]


def overhead_line(model_name: str, kind: str, row: dict[str, float]) -> str:
    return (
        f"{model_name:<12}{kind:<8}{row['median_ms']:>10.2f}{row['p99_ms']:>10.2f}"
        f"{row['sources']:>9.1f}{row['rounds']:>8.2f}"
    )


async def overheads(per_corpus: int, folder: Path) -> dict[str, dict[str, float]]:
    """Figure 1, one row per model and store kind (keys ``model/store``)."""
    return {
        f"{model}/{store}": await overhead(store, model, per_corpus, folder)
        for model, store in KINDS
    }


def overheads_by_turns(before: Path, per_corpus: int, rounds: int) -> None:
    """Figure 1 with this checkout's code and ``before``'s, in fresh processes by turns."""
    trees = [(f"code of {before}", before / "src"), ("this checkout", None)]
    runs: dict[str, list[dict[str, dict[str, float]]]] = {label: [] for label, _ in trees}
    print(f"pipeline overhead per answer, model time excluded ({per_corpus} per corpus), by turns")
    for _ in range(rounds):
        for label, source in trees:
            env = dict(os.environ)
            if source is not None:
                env["PYTHONPATH"] = str(source)
            command = [sys.executable, __file__, "--overhead-json", str(per_corpus)]
            done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
            if done.returncode != 0:
                raise SystemExit(f"the overhead run failed: {done.stderr}")
            runs[label].append(json.loads(done.stdout))
            print(f"  {label}: done, load {os.getloadavg()[0]:.2f}")
    medians = {}
    for label, _ in trees:
        print(f"{label}, median of {rounds}:\n{OVERHEAD_HEADER}")
        medians[label] = {}
        for model, store in KINDS:
            key = f"{model}/{store}"
            row = {
                field: statistics.median(run[key][field] for run in runs[label])
                for field in runs[label][0][key]
            }
            medians[label][key] = row["median_ms"]
            print(overhead_line(model, store, row))
    old, new = (medians[label] for label, _ in trees)
    ratios = ", ".join(f"{key} {new[key] / old[key]:.2f}x" for key in old)
    print(f"median ms per answer, after / before: {ratios}")


async def main(quick: bool, repeat: int) -> None:
    per_corpus = 10 if quick else 60
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"pipeline overhead per answer, model time excluded ({per_corpus} per corpus)")
        print(OVERHEAD_HEADER)
        found = await overheads(per_corpus, folder)
        rows = {}
        for model_name, kind in KINDS:
            rows[(model_name, kind)] = row = found[f"{model_name}/{kind}"]
            print(overhead_line(model_name, kind, row))
        base = rows[("instant", "memory")]["median_ms"]
        sqlite = rows[("instant", "sqlite")]["median_ms"]
        print(f"sqlite / memory stores (instant model, median): {sqlite / base:.2f}x")
        count = 40 if quick else 200
        print(
            f"\n{count} concurrent answers, serve-model in its own process, +200 ms per model "
            "call; ratio = wall / ideal"
        )
        print(BURST_HEADER)
        bursts = await concurrent(count, 200.0, folder, repeat)
        if repeat > 1:
            print("best of each:")
            for what in dict.fromkeys(burst.what for burst in bursts):
                print(min((b for b in bursts if b.what == what), key=lambda b: b.wall).line())
        print(
            "  client ms/each: CPU per answer (bare: per call); CPU floor: the client's CPU "
            "seconds / the ideal;\n  busy: the share of one core the client used; "
            f"{os.cpu_count()} cores; load: the 1-minute load average when the line was taken."
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run")
    parser.add_argument("--repeat", type=int, default=None, help="bursts of each kind")
    parser.add_argument(
        "--before",
        type=Path,
        metavar="CHECKOUT",
        help="figure 1 only, with another checkout's code (its src/) by turns",
    )
    parser.add_argument("--rounds", type=int, default=3, help="runs per code with --before")
    parser.add_argument("--overhead-json", type=int, metavar="N", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.overhead_json:  # one run of figure 1, as JSON (for --before)

        async def one_run(per_corpus: int) -> dict[str, dict[str, float]]:
            with tempfile.TemporaryDirectory() as tmp:
                return await overheads(per_corpus, Path(tmp))

        print(json.dumps(asyncio.run(one_run(arguments.overhead_json))))
    elif arguments.before is not None:
        per_corpus = 10 if arguments.quick else 60
        overheads_by_turns(arguments.before, per_corpus, max(1, arguments.rounds))
    else:
        asyncio.run(main(arguments.quick, arguments.repeat or (1 if arguments.quick else 3)))
