"""Models that misbehave on purpose, and the agents that use them, for the HTTP tests.

They wrap the offline extractive model, so ordinary questions get ordinary cited answers and
only questions holding a trigger word fail (or wait), exactly where the test wants.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

from citelab.agent import AgentConfig, default_agents
from citelab.models import (
    ExtractiveModel,
    Message,
    ModelDelta,
    TextDelta,
    ToolChoice,
    ToolSpec,
    message_text,
)

CRASH_AT_ONCE = "CRASH-AT-ONCE"
"""A question holding this makes the model raise before writing anything."""
CRASH_MIDWAY = "CRASH-MIDWAY"
"""A question holding this makes the model raise after its first text piece."""
CRASH_HARD = "CRASH-HARD"
"""A question holding this makes the model raise a BaseException (as a native panic does)."""
SECRET = "db-password=hunter2"
"""Text the crash carries: it must reach the log and never a client."""
WAIT_FOR_GATE = "WAIT-FOR-GATE"
"""A question holding this makes the model wait for the gate before writing."""


class SimulatedPanic(BaseException):
    """What a panic in a native extension looks like from Python: not an Exception."""


def _question(messages: Sequence[Message]) -> str:
    users = [m for m in messages if m["role"] == "user"]
    return message_text(users[-1]) if users else ""


class TripwireModel:
    """The extractive model, except for questions holding a trigger word."""

    name = "tripwire"

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.inner = ExtractiveModel()
        self.gate = gate or threading.Event()

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        question = _question(messages)
        if CRASH_AT_ONCE in question:
            raise RuntimeError(f"model backend exploded ({SECRET})")
        pieces = 0
        async for delta in self.inner.stream(messages, tools, tool_choice=tool_choice, seed=seed):
            if isinstance(delta, TextDelta):
                if WAIT_FOR_GATE in question and pieces == 0:
                    await asyncio.to_thread(self.gate.wait, 30)
                if CRASH_MIDWAY in question and pieces == 1:
                    raise RuntimeError(f"stream broke midway ({SECRET})")
                if CRASH_HARD in question and pieces == 1:
                    raise SimulatedPanic(SECRET)
                pieces += 1
            yield delta


def server_agents() -> dict[str, AgentConfig]:
    """The bundled agents plus ``tripwire``, ``disabled``, ``no_feedback`` and ``paced``."""
    agents = default_agents()
    base: dict[str, Any] = {"corpus": "university", "prompt": "You answer about Hollin."}
    extra = [
        AgentConfig(name="tripwire", model="tripwire", **base),
        AgentConfig(name="disabled", enabled=False, **base),
        AgentConfig(name="no_feedback", feedback_enabled=False, **base),
        AgentConfig(name="paced", model_options={"piece_delay": 0.03}, **base),
    ]
    return {**agents, **{agent.name: agent for agent in extra}}
