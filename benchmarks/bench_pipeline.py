"""What the answer pipeline costs around the model, measured side by side in one run.

1. Pipeline overhead per answer (everything but the model: validation, forced retrieval,
   source processing, prompt building, hooks, finalize, anchors, the contract message, logs,
   the conversation store), on the three fixture corpora with about 10 held sources:
   - extractive: the offline model, its own time measured around every delta and subtracted;
   - instant: a model that answers at once citing [1]..[10] (no subtraction needed);
   each with in-memory stores and with the default SQLite stores. Median and p99.
2. 200 concurrent answers through the service against ``serve-model`` (the extractive model
   over loopback HTTP, the real ``openai`` SDK) with 200 ms of latency added to every model
   call: wall time versus the ideal (the most model rounds any answer needed x the latency).

    .venv/bin/python benchmarks/bench_pipeline.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
    serve_in_thread,
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


async def raw_calls(base_url: str, shown: list[list[Message]]) -> float:
    """The same model calls (the messages the service sent) over the SDK, no pipeline."""
    model = OpenAIModel("extractive", base_url=base_url, api_key="local", max_retries=0)
    await collect(model.stream(shown[0]))
    started = time.perf_counter()
    await asyncio.gather(*(collect(model.stream(messages)) for messages in shown))
    elapsed = time.perf_counter() - started
    await model.aclose()
    return elapsed


@contextmanager
def model_server(where: str, latency_ms: float) -> Iterator[str]:
    """The extractive model behind ``serve-model``: in a thread of this process, or in a
    process of its own (so its CPU work does not compete with the client for one GIL)."""
    if where == "thread":
        with serve_in_thread(ExtractiveModel(), latency_ms=latency_ms) as server:
            yield server.base_url
        return
    command = [sys.executable, "-m", "citelab", "serve-model", "--port", "0"]
    command += ["--latency-ms", str(latency_ms)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        announced = process.stdout.readline()  # "... serving model 'extractive' at <url>"
        yield announced.rsplit(" at ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


async def concurrent(count: int, latency_ms: float, folder: Path, where: str) -> dict[str, float]:
    with model_server(where, latency_ms) as base_url:
        agent = AgentConfig(
            name="remote",
            corpus="university",
            model="openai:extractive",
            model_options={"base_url": base_url, "api_key": "local", "max_retries": 0},
            retrieval=RetrievalSettings(max_results=10, entity_cap=5),
        )
        database = folder / f"concurrent-{where}.sqlite3"
        async with AnswerService(
            {"remote": agent}, index_dir=folder / "indexes", database=database
        ) as service:
            await service.answer("remote", "What are the tuition fees?")  # warm up
            asked = questions("university", count)
            started = time.perf_counter()
            answers = await asyncio.gather(*(service.answer("remote", q) for q in asked))
            wall = time.perf_counter() - started
        raw = await raw_calls(base_url, [a.rounds[0].messages for a in answers])
    most_rounds = max(len(answer.rounds) for answer in answers)
    ideal = most_rounds * latency_ms / 1000
    return {
        "wall_s": wall,
        "ideal_s": ideal,
        "ratio": wall / ideal,
        "raw_s": raw,
        "raw_ratio": raw / (latency_ms / 1000),
        "most_rounds": most_rounds,
        "mean_rounds": statistics.mean(len(a.rounds) for a in answers),
    }


async def main(quick: bool) -> None:
    per_corpus = 10 if quick else 60
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"pipeline overhead per answer, model time excluded ({per_corpus} per corpus)")
        print(
            f"{'model':<12}{'stores':<8}{'median ms':>10}{'p99 ms':>10}{'sources':>9}{'rounds':>8}"
        )
        rows = {}
        for model_name in ("extractive", "instant"):
            for kind in ("memory", "sqlite"):
                row = await overhead(kind, model_name, per_corpus, folder)
                rows[(model_name, kind)] = row
                print(
                    f"{model_name:<12}{kind:<8}{row['median_ms']:>10.2f}{row['p99_ms']:>10.2f}"
                    f"{row['sources']:>9.1f}{row['rounds']:>8.2f}"
                )
        base = rows[("instant", "memory")]["median_ms"]
        sqlite = rows[("instant", "sqlite")]["median_ms"]
        print(f"sqlite / memory stores (instant model, median): {sqlite / base:.2f}x")
        count = 40 if quick else 200
        for where in ("thread", "process"):
            result = await concurrent(count, 200.0, folder, where)
            print(f"\n{count} concurrent answers, serve-model in a {where}, +200 ms per model call")
            print(
                f"  service:  wall {result['wall_s']:.2f} s vs ideal {result['ideal_s']:.2f} s "
                f"({result['most_rounds']:.0f} round(s) max, {result['mean_rounds']:.2f} mean) "
                f"-> ratio {result['ratio']:.2f}x"
            )
            print(
                f"  bare SDK: the same {count} first-round calls alone {result['raw_s']:.2f} s "
                f"vs ideal 0.20 s -> ratio {result['raw_ratio']:.2f}x (model + HTTP only)"
            )
            print(f"  service / bare SDK: {result['wall_s'] / result['raw_s']:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run")
    asyncio.run(main(parser.parse_args().quick))
