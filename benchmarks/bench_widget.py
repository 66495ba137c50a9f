"""The chat widget's comm traffic: tokens coalesced (the default) vs one message per token.

A fast scripted model streams an answer of N pieces through ``citelab.Chat`` over a comm
that only counts what would cross it (no kernel). Measured side by side in one run, per
setting: custom messages, JSON bytes, and the turn's wall time; then the ratios.
``--quick`` streams 1,000 pieces instead of 6,000.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

import comm
from comm.base_comm import BaseComm

from citelab.agent import AgentConfig
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.models import ScriptedModel
from citelab.sources import RetrievalSettings
from citelab.widget import Chat


class CountingComm(BaseComm):
    """Counts the messages and JSON bytes a widget would publish."""

    def __init__(self, **kwargs: Any) -> None:
        self.messages = 0
        self.bytes = 0
        super().__init__(**kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, *args: Any, **keys: Any) -> None:
        self.messages += 1
        self.bytes += len(json.dumps(data or {}))


def make_chat(pieces: int, interval: float) -> Chat:
    text = [f"w{i} " for i in range(pieces)] + ["[1]."]
    agent = AgentConfig(name="bench", model="bench", retrieval=RetrievalSettings(max_results=3))
    service = AnswerService(
        {"bench": agent},
        store=MemoryConversationStore(),
        logs=MemoryLogStore(),
        models={"bench": ScriptedModel([{"text": text}] * 50, name="bench")},
    )
    return Chat(service, agent="bench", token_interval=interval, update_outputs=False)


async def one_turn(chat: Chat) -> tuple[int, int, float]:
    counter = chat.comm
    assert isinstance(counter, CountingComm)
    before = (counter.messages, counter.bytes)
    start = time.perf_counter()
    await chat.ask("What does a semester cost?")
    seconds = time.perf_counter() - start
    return counter.messages - before[0], counter.bytes - before[1], seconds


async def measure(pieces: int, repeats: int) -> dict[str, tuple[int, int, float]]:
    chats = {"coalesced": make_chat(pieces, 0.02), "per token": make_chat(pieces, 0.0)}
    for chat in chats.values():
        await one_turn(chat)  # warm-up: index build, imports
    results: dict[str, list[tuple[int, int, float]]] = {name: [] for name in chats}
    for _ in range(repeats):
        for name, chat in chats.items():  # interleaved, so both see the same machine
            results[name].append(await one_turn(chat))
    return {
        name: (runs[-1][0], runs[-1][1], statistics.median(run[2] for run in runs))
        for name, runs in results.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 pieces instead of 6,000")
    args = parser.parse_args()
    pieces = 1_000 if args.quick else 6_000
    comm.create_comm = lambda *a, **k: CountingComm(**k)
    found = asyncio.run(measure(pieces, repeats=3 if args.quick else 5))
    print(f"answer of {pieces + 1} pieces, median of the turn times")
    for name, (messages, size, seconds) in found.items():
        print(
            f"  {name:>9}: {messages:6d} messages  {size / 1024:8.1f} KiB  {seconds * 1000:7.1f} ms"
        )
    (m1, b1, t1), (m0, b0, t0) = found["coalesced"], found["per token"]
    print(
        f"per token / coalesced: messages {m0 / m1:.1f}x, bytes {b0 / b1:.2f}x, time {t0 / t1:.2f}x"
    )


if __name__ == "__main__":
    main()
