"""The streaming model interface: chat messages in, deltas out (OpenAI chat-completions semantics).

Messages and tool specs are the plain dicts the OpenAI chat-completions API takes, typed as
``TypedDict``s so they pass unchanged to the ``openai`` SDK and over HTTP. What a model streams
back is a sequence of :data:`ModelDelta` values, pydantic models discriminated by ``type`` (so
a recorded stream can be cached as JSON and replayed)::

    TextDelta*, ToolCallDelta*   in any order, as the model produces them
    SuggestedRepliesDelta?       at most one, after the last text (never sent over HTTP)
    FinishDelta                  exactly one, always last

:func:`collect` assembles a stream into one :class:`ModelTurn`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any, Literal, NotRequired, Protocol, Required

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from citelab._errors import ModelError
from citelab.contract import SuggestedReply

__all__ = [
    "AssistantMessage",
    "FinishDelta",
    "FinishReason",
    "FunctionCall",
    "FunctionSpec",
    "Message",
    "Model",
    "ModelDelta",
    "ModelTurn",
    "NamedToolChoice",
    "SuggestedRepliesDelta",
    "SystemMessage",
    "TextDelta",
    "TokenUsage",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallMessage",
    "ToolChoice",
    "ToolMessage",
    "ToolSpec",
    "UserMessage",
    "collect",
    "message_text",
]


# --- messages and tools: OpenAI chat-completions dicts --------------------------------------


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str


class FunctionCall(TypedDict):
    name: str
    arguments: str
    """The arguments as a JSON text (exactly as the model wrote them)."""


class ToolCallMessage(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class AssistantMessage(TypedDict, total=False):
    role: Required[Literal["assistant"]]
    content: str | None
    tool_calls: list[ToolCallMessage]


class ToolMessage(TypedDict):
    role: Literal["tool"]
    content: str
    tool_call_id: str


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage
"""One chat message. Content is plain text (content-part lists are not used by citelab)."""


class FunctionSpec(TypedDict):
    name: str
    description: NotRequired[str]
    parameters: NotRequired[dict[str, Any]]
    """A JSON Schema object for the arguments."""


class ToolSpec(TypedDict):
    type: Literal["function"]
    function: FunctionSpec


class _NamedFunction(TypedDict):
    name: str


class NamedToolChoice(TypedDict):
    type: Literal["function"]
    function: _NamedFunction


ToolChoice = Literal["auto", "none", "required"] | NamedToolChoice
"""As in the OpenAI API: let the model choose, forbid tools, require one, or name one."""

FinishReason = Literal["stop", "tool_calls", "length", "content_filter"]
"""Why a turn ended: answered, wants tools run, hit the token limit, or was filtered."""


def message_text(message: Message) -> str:
    """The text of a message; ``""`` for an assistant message that only calls tools."""
    content = message.get("content")
    return content if isinstance(content, str) else ""


# --- deltas ----------------------------------------------------------------------------------


class TextDelta(BaseModel):
    """A piece of the answer text, in order."""

    model_config = ConfigDict(frozen=True)

    type: Literal["text"] = "text"
    text: str
    """The piece (a word with its whitespace, for offline models)."""


class ToolCallDelta(BaseModel):
    """A piece of a tool call; pieces with the same ``index`` belong to one call."""

    model_config = ConfigDict(frozen=True)

    type: Literal["tool_call"] = "tool_call"
    index: int = Field(ge=0)
    """Which call of this turn the piece belongs to."""
    id: str | None = None
    """The call id; sent once, normally with the first piece."""
    name: str | None = None
    """The function name; sent once, normally with the first piece."""
    arguments: str = ""
    """The next piece of the JSON arguments text."""


class SuggestedRepliesDelta(BaseModel):
    """Follow-up chips the model proposes; not part of the answer text."""

    model_config = ConfigDict(frozen=True)

    type: Literal["suggested_replies"] = "suggested_replies"
    replies: list[SuggestedReply]
    """Two or three replies, in the order to show them."""


class TokenUsage(BaseModel):
    """The tokens one model call read and wrote, as its API reported them (``usage``), or
    estimated when the model reports none (``estimated``: words and punctuation counted)."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = Field(default=0, ge=0)
    """Prompt tokens: everything the call was shown (messages and tool specs)."""
    output_tokens: int = Field(default=0, ge=0)
    """Completion tokens: the text and tool calls it wrote."""
    estimated: bool = False
    """True when citelab counted them (a model without ``usage``), not the model's API."""


class FinishDelta(BaseModel):
    """The end of the stream."""

    model_config = ConfigDict(frozen=True)

    type: Literal["finish"] = "finish"
    reason: FinishReason
    """Why the turn ended."""
    usage: TokenUsage | None = None
    """The call's tokens, when the model's API reported them."""


ModelDelta = Annotated[
    TextDelta | ToolCallDelta | SuggestedRepliesDelta | FinishDelta,
    Field(discriminator="type"),
]
"""One item of a model's stream."""


# --- the assembled turn ----------------------------------------------------------------------


class ToolCall(BaseModel):
    """A complete tool call, assembled from its deltas."""

    model_config = ConfigDict(frozen=True)

    id: str
    """The call id, echoed by the tool message that answers it."""
    name: str
    """The function to call."""
    arguments: str
    """The JSON arguments text, as the model wrote it."""

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; a text that is not a JSON object is a ``ModelError``."""
        try:
            value = json.loads(self.arguments or "{}")
        except ValueError as exc:
            raise ModelError(
                f"tool call {self.name!r} ({self.id}): arguments are not JSON: {exc}"
            ) from exc
        if not isinstance(value, dict):
            raise ModelError(
                f"tool call {self.name!r} ({self.id}): arguments must be a JSON object, "
                f"got {type(value).__name__}"
            )
        return value

    def to_message(self) -> ToolCallMessage:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class ModelTurn(BaseModel):
    """Everything one model call produced."""

    model_config = ConfigDict(frozen=True)

    text: str = ""
    """The full text, all pieces joined."""
    tool_calls: list[ToolCall] = []
    """Assembled tool calls, ordered by their index."""
    finish_reason: FinishReason
    """Why the turn ended."""
    suggested_replies: list[SuggestedReply] = []
    """Follow-up chips, when the model proposed some."""
    usage: TokenUsage | None = None
    """The call's tokens, when the model reported them (its finish delta's ``usage``)."""

    def to_message(self) -> AssistantMessage:
        """The assistant message to append to the conversation before running tools."""
        message: AssistantMessage = {"role": "assistant"}
        if self.tool_calls:
            message["content"] = self.text or None
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        else:
            message["content"] = self.text
        return message


# --- the protocol ----------------------------------------------------------------------------


class Model(Protocol):
    """A chat model that streams; every adapter and test double implements this.

    Optional: ``code_version`` (a string, or a method returning one) when the model's answers
    come from code rather than a vendor; the model-call cache keys by it (see
    :class:`citelab.evals.runner.CachedModel`)."""

    name: str
    """The name configuration files and logs use for this model."""

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        """Answer ``messages``; errors of the call are raised as ``ModelError``."""
        ...


class _CallParts:
    """Tool-call pieces for one index, merged as they arrive."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []

    def add(self, delta: ToolCallDelta) -> None:
        self.id = self.id or delta.id
        self.name = self.name or delta.name
        self.arguments.append(delta.arguments)

    def build(self) -> ToolCall:
        if not self.name:
            raise ModelError(f"malformed stream: tool call {self.index} has no function name")
        call_id = self.id or f"call_{self.index}"
        return ToolCall(id=call_id, name=self.name, arguments="".join(self.arguments))


async def collect(stream: AsyncIterator[ModelDelta]) -> ModelTurn:
    """Consume a stream and assemble it into one :class:`ModelTurn`.

    A stream must end with exactly one :class:`FinishDelta`; anything else is a malformed
    stream (``ModelError``). A tool call without an id gets ``call_<index>``.
    """
    pieces: list[str] = []
    calls: dict[int, _CallParts] = {}
    replies: list[SuggestedReply] = []
    finish: FinishReason | None = None
    usage: TokenUsage | None = None
    async for delta in stream:
        if finish is not None:
            raise ModelError(f"malformed stream: {delta.type} delta after the finish")
        if isinstance(delta, TextDelta):
            pieces.append(delta.text)
        elif isinstance(delta, ToolCallDelta):
            calls.setdefault(delta.index, _CallParts(delta.index)).add(delta)
        elif isinstance(delta, SuggestedRepliesDelta):
            replies = list(delta.replies)
        else:
            finish, usage = delta.reason, delta.usage
    if finish is None:
        raise ModelError("malformed stream: it ended without a finish reason")
    return ModelTurn(
        text="".join(pieces),
        tool_calls=[calls[index].build() for index in sorted(calls)],
        finish_reason=finish,
        suggested_replies=replies,
        usage=usage,
    )
