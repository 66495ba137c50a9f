"""How much each model layer costs per call, measured side by side in one run.

Compares, on the same invented sources and questions, one call after another:
  extractive (direct)              the offline model, streamed and collected in-process
  perturbed(extractive)            the fault injector wrapped around it
  SDK typed parse, SSE / JSON      the same model behind ``serve-model`` (its own process, over
                                   loopback HTTP), read through the ``openai`` SDK's own
                                   ``chat.completions.create`` (pydantic objects per chunk):
                                   how :class:`OpenAIModel` used to read answers
  OpenAIModel, SSE / JSON          the adapter as it is: the SDK sends, the body is parsed
                                   with ``json.loads`` (``stream=True`` / ``stream=False``)
Columns: wall ms per call, the client's CPU ms per call (this process) and the server's
(the serve-model process); the ratio is wall time against the direct extractive call.

    .venv/bin/python benchmarks/bench_models.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from _common import cpu_seconds, served_model
from citelab.models import (
    ExtractiveModel,
    Message,
    Model,
    OpenAIModel,
    PerturbedModel,
    collect,
)
from citelab.sources._block import BlockSource, NumberedSource, render_sources_block

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


def _sources(rng: random.Random, count: int) -> list[NumberedSource]:
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


@dataclass
class _Row:
    name: str
    wall: float
    client: float
    server: float | None


Call = Callable[[list[Message]], Awaitable[Any]]


async def _per_call(name: str, call: Call, conversations: list[list[Message]], pid: int) -> _Row:
    for messages in conversations[:2]:  # warm: imports, the connection
        await call(messages)
    client, server = time.process_time(), cpu_seconds(pid)
    began = time.perf_counter()
    for messages in conversations:
        await call(messages)
    wall = time.perf_counter() - began
    client = time.process_time() - client
    after = cpu_seconds(pid)
    served = None if server is None or after is None else (after - server) / len(conversations)
    return _Row(name, wall / len(conversations), client / len(conversations), served)


def _model_call(model: Model) -> Call:
    return lambda messages: collect(model.stream(messages))


def _sdk_call(client: Any, *, stream: bool) -> Call:
    """The SDK's own typed parse: ``chat.completions.create`` and its pydantic objects."""

    async def call(messages: list[Message]) -> str:
        if not stream:
            completion = await client.chat.completions.create(model="extractive", messages=messages)
            return str(completion.choices[0].message.content)
        pieces: list[str] = []
        chunks = await client.chat.completions.create(
            model="extractive", messages=messages, stream=True
        )
        async with chunks:
            async for chunk in chunks:
                pieces.extend(c.delta.content or "" for c in chunk.choices)
        return "".join(pieces)

    return call


async def _measure(calls: int, sources: int) -> list[_Row]:
    import openai

    conversations = _conversations(calls, sources)
    extractive = ExtractiveModel()
    perturbed = PerturbedModel(extractive, {"wrong": 0.1, "dropped": 0.1}, seed=1)
    own = os.getpid()
    rows = [
        await _per_call("extractive (direct)", _model_call(extractive), conversations, own),
        await _per_call("perturbed(extractive)", _model_call(perturbed), conversations, own),
    ]
    with served_model() as served:
        sdk = openai.AsyncOpenAI(base_url=served.base_url, api_key="local", max_retries=0)
        for label, streaming in (("SSE", True), ("JSON", False)):
            name = f"SDK typed parse, {label}"
            call = _sdk_call(sdk, stream=streaming)
            rows.append(await _per_call(name, call, conversations, served.pid))
        await sdk.close()
        for label, streaming in (("SSE", True), ("JSON", False)):
            async with OpenAIModel(
                "extractive", base_url=served.base_url, stream=streaming, max_retries=0
            ) as model:
                name = f"OpenAIModel, {label}"
                rows.append(await _per_call(name, _model_call(model), conversations, served.pid))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run (a few seconds)")
    args = parser.parse_args()
    calls, sources = (20, 5) if args.quick else (200, 20)
    rows = asyncio.run(_measure(calls, sources))
    base = rows[0].wall
    print(f"{calls} calls one after another, {sources} sources of 6 sentences each")
    print(f"{'layer':30} {'ms/call':>9} {'client ms':>10} {'server ms':>10} {'ratio':>7}")
    for row in rows:
        server = (
            "-"
            if row.server is None or row.name.startswith(("extr", "pert"))
            else (f"{row.server * 1000:.2f}")
        )
        print(
            f"{row.name:30} {row.wall * 1000:9.2f} {row.client * 1000:10.2f} {server:>10} "
            f"{row.wall / base:6.2f}x"
        )
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
