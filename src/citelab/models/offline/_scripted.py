"""A model that replays given rounds: for tests, teaching, and reproducing a bug exactly.

Each call to :meth:`ScriptedModel.stream` plays the next round and records what it was shown
(``seen``: the messages, ``seen_tools``: the tools). Rounds may be given as dicts (from a
configuration file) and are validated::

    ScriptedModel([
        {"tool_calls": [{"name": "rag_search", "arguments": {"query": "fees"}}]},
        {"text": ["Fees are due in ", "March [1]."]},
        {"text": ["Half an ans"], "error_after": 1},        # raises ModelError mid-stream
    ])
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from citelab._errors import InvalidInput, ModelError
from citelab.contract import SuggestedReply
from citelab.models._types import (
    FinishDelta,
    FinishReason,
    Message,
    ModelDelta,
    SuggestedRepliesDelta,
    TextDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
)
from citelab.models._version import source_version
from citelab.models.offline._pieces import tool_call_deltas

__all__ = ["ScriptedModel", "ScriptedRound", "ScriptedToolCall"]


class ScriptedToolCall(BaseModel):
    """A tool call a round makes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    """The function to call."""
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """Arguments as a dict (written as JSON) or as the exact JSON text to send."""
    id: str | None = None
    """The call id; default ``call_<round>_<index>``."""


class ScriptedRound(BaseModel):
    """What one call streams: text chunks, tool calls, then a finish (or an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: list[str] = []
    """Text chunks, streamed one delta each (a single string is one chunk)."""
    tool_calls: list[ScriptedToolCall] = []
    """Tool calls, streamed after the text."""
    finish_reason: FinishReason | None = None
    """Default: ``tool_calls`` when the round calls tools, else ``stop``."""
    suggested_replies: list[SuggestedReply] = []
    """Sent as a :class:`SuggestedRepliesDelta` before the finish, when not empty."""
    error_after: int | None = Field(default=None, ge=0)
    """Raise ``ModelError(error)`` after this many deltas instead of finishing."""
    error: str = "scripted model error"
    """The message of that error."""

    @field_validator("text", mode="before")
    @classmethod
    def _one_chunk(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class ScriptedModel:
    """Replays ``rounds`` one per call; a call past the last round is a ``ModelError``."""

    def __init__(
        self,
        rounds: Sequence[ScriptedRound | dict[str, Any]],
        *,
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.rounds = [_validated(i, r) for i, r in enumerate(rounds)]
        self.seen: list[list[Message]] = []
        """The messages each round was shown, deep-copied at the call."""
        self.seen_tools: list[list[ToolSpec]] = []
        """The tools each round was offered."""

    @property
    def code_version(self) -> str:
        """Its module and citelab's version (see :mod:`citelab.models._version`)."""
        return source_version(__name__)

    @property
    def calls(self) -> int:
        """How many rounds were played (started) so far."""
        return len(self.seen)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        """Play the next round; ``tool_choice`` and ``seed`` are ignored."""
        number = len(self.seen)
        if number >= len(self.rounds):
            raise ModelError(
                f"scripted model {self.name!r} has no round {number + 1} "
                f"(it was given {len(self.rounds)})"
            )
        self.seen.append(copy.deepcopy(list(messages)))
        self.seen_tools.append(copy.deepcopy(list(tools or [])))
        played = self.rounds[number]
        for count, delta in enumerate(_deltas(number, played)):
            if played.error_after is not None and count == played.error_after:
                raise ModelError(played.error)
            await asyncio.sleep(0)
            yield delta
        if played.error_after is not None:  # asked to fail after the round's last delta
            raise ModelError(played.error)
        yield FinishDelta(reason=played.finish_reason or _default_finish(played))


def _validated(index: int, value: ScriptedRound | dict[str, Any]) -> ScriptedRound:
    if isinstance(value, ScriptedRound):
        return value
    try:
        return ScriptedRound.model_validate(value)
    except ValidationError as exc:
        raise InvalidInput(f"scripted round {index + 1} is not valid:\n{exc}") from exc


def _deltas(
    number: int, played: ScriptedRound
) -> list[TextDelta | ToolCallDelta | SuggestedRepliesDelta]:
    deltas: list[TextDelta | ToolCallDelta | SuggestedRepliesDelta] = [
        TextDelta(text=chunk) for chunk in played.text
    ]
    for index, call in enumerate(played.tool_calls):
        arguments = call.arguments
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call_id = call.id or f"call_{number + 1}_{index}"
        deltas.extend(tool_call_deltas(index, call_id, call.name, text))
    if played.suggested_replies:
        deltas.append(SuggestedRepliesDelta(replies=played.suggested_replies))
    return deltas


def _default_finish(played: ScriptedRound) -> FinishReason:
    return "tool_calls" if played.tool_calls else "stop"
