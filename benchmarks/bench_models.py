"""How much each model layer costs per call, measured side by side in one run.

Compares, on the same invented sources and questions:
  extractive (direct)            the offline model, streamed and collected in-process
  perturbed(extractive)          the fault injector wrapped around it
  openai SDK -> serve-model      the same model over loopback HTTP, streamed (SSE)
  openai SDK -> serve-model      the same, non-streamed JSON
Ratios are against the direct extractive call.

    .venv/bin/python benchmarks/bench_models.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Awaitable, Callable

from citelab.models import (
    ExtractiveModel,
    Message,
    Model,
    OpenAIModel,
    PerturbedModel,
    collect,
    serve_in_thread,
)
from citelab.sources._block import BlockSource, render_sources_block

WORDS = [
    "library",
    "campus",
    "tuition",
    "enrolment",
    "thesis",
    "seminar",
    "deadline",
    "scholarship",
    "housing",
    "laptop",
    "semester",
    "lecture",
    "exam",
    "credit",
    "faculty",
    "advisor",
    "internship",
    "visa",
    "transcript",
    "parking",
]


def _sources(rng: random.Random, count: int) -> list[BlockSource]:
    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "."

    return [
        BlockSource(n, f"entity:page/{n}", f"Page {n}", " ".join(sentence() for _ in range(6)))
        for n in range(1, count + 1)
    ]


def _conversations(calls: int, sources: int) -> list[list[Message]]:
    rng = random.Random(7)
    block = render_sources_block(_sources(rng, sources))
    return [
        [
            {"role": "system", "content": "Answer with citations.\n" + block},
            {"role": "user", "content": " ".join(rng.sample(WORDS, 4)) + "?"},
        ]
        for _ in range(calls)
    ]


async def _per_call(model: Model, conversations: list[list[Message]]) -> float:
    started = time.perf_counter()
    for messages in conversations:
        await collect(model.stream(messages))
    return (time.perf_counter() - started) / len(conversations)


async def _measure(calls: int, sources: int) -> list[tuple[str, float]]:
    conversations = _conversations(calls, sources)
    extractive = ExtractiveModel()
    perturbed = PerturbedModel(extractive, {"wrong": 0.1, "dropped": 0.1}, seed=1)
    rows: list[tuple[str, Callable[[], Awaitable[float]]]] = [
        ("extractive (direct)", lambda: _per_call(extractive, conversations)),
        ("perturbed(extractive)", lambda: _per_call(perturbed, conversations)),
    ]
    results = [(name, await run()) for name, run in rows]
    with serve_in_thread(extractive) as server:
        for label, streaming in (("SSE", True), ("JSON", False)):
            async with OpenAIModel(
                "extractive", base_url=server.base_url, stream=streaming, max_retries=0
            ) as client:
                await _per_call(client, conversations[:2])  # warm the connection
                name = f"openai SDK -> serve-model ({label})"
                results.append((name, await _per_call(client, conversations)))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run (a few seconds)")
    args = parser.parse_args()
    calls, sources = (20, 5) if args.quick else (200, 20)
    results = asyncio.run(_measure(calls, sources))
    base = results[0][1]
    print(f"{calls} calls, {sources} sources of 6 sentences each")
    print(f"{'layer':42} {'ms/call':>9} {'ratio':>7}")
    for name, seconds in results:
        print(f"{name:42} {seconds * 1000:9.2f} {seconds / base:6.2f}x")


if __name__ == "__main__":
    main()
