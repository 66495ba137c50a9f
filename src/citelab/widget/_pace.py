"""Paced streaming: the demo pace shows an answer arriving token by token.

The offline model answers at once, so a demo sees the whole answer land in one frame. A
paced turn queues what the service streams (``references`` and tokens, in order) and
replays it with ``seconds`` between tokens; the turn ends once the queue is empty.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Literal

from citelab._errors import InvalidInput

__all__ = ["DEMO_SECONDS_PER_TOKEN", "Pace", "Pacer", "pace_seconds"]

Pace = Literal["live", "demo"] | float
"""``"live"`` (as fast as the model), ``"demo"`` or seconds between tokens."""

DEMO_SECONDS_PER_TOKEN = 0.04
"""The demo pace: 25 tokens per second, about reading speed."""


def pace_seconds(pace: Pace) -> float:
    """Seconds between tokens for ``pace``; refuses anything else, naming it."""
    if pace == "live":
        return 0.0
    if pace == "demo":
        return DEMO_SECONDS_PER_TOKEN
    if isinstance(pace, bool) or not isinstance(pace, int | float):
        raise InvalidInput(f"pace: expected 'live', 'demo' or seconds per token, not {pace!r}")
    if not math.isfinite(pace) or not 0 <= pace <= 5:
        raise InvalidInput(f"pace: seconds per token must be between 0 and 5, got {pace!r}")
    return float(pace)


class Pacer:
    """Replays queued actions in order, waiting ``seconds`` after each token."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._queue: asyncio.Queue[tuple[Callable[[], None], bool]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def put(self, action: Callable[[], None], *, token: bool) -> None:
        """Queue ``action`` (a token's when ``token``: the pace applies after it)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._replay())
        self._queue.put_nowait((action, token))

    async def drain(self) -> None:
        """Wait until every queued action has run."""
        await self._queue.join()

    def close(self) -> None:
        """Stop replaying (what is still queued is dropped)."""
        if self._task is not None:
            self._task.cancel()

    async def _replay(self) -> None:
        while True:
            action, token = await self._queue.get()
            try:
                action()
                if token:
                    await asyncio.sleep(self.seconds)
            finally:
                self._queue.task_done()
