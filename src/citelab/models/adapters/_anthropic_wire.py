"""Anthropic Messages API shapes ⇄ citelab's chat-completions messages, both ways.

The adapter (:mod:`citelab.models.adapters._anthropic`) writes requests with
:func:`to_messages_request` and reads streamed events with :class:`EventReader`; ``citelab
serve-model``'s ``/v1/messages`` route reads requests with :func:`from_messages_request` and
writes events with :class:`EventWriter` (or one message with :func:`message_body`).

Mapping: system messages join into ``system``; an assistant's tool calls are ``tool_use``
blocks (arguments parsed to ``input``); tool messages are ``tool_result`` blocks in a user
turn (consecutive ones share it, as the API requires strictly alternating roles);
``tool_choice`` ``auto``/``required``/``none``/named ↔ ``auto``/``any``/``none``/``tool``;
stop reasons ``end_turn``/``tool_use``/``max_tokens`` ↔ ``stop``/``tool_calls``/``length``.
A request's ``document`` blocks (text and content sources) are shown to the model as numbered
documents, and with citations enabled the answer comes back as cited text blocks (see
:mod:`citelab.models.adapters._anthropic_citations`). Images, PDFs, thinking blocks and server tools
are not carried (text only). ``usage`` is estimated (see :mod:`citelab.models._usage`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from citelab._errors import InvalidInput
from citelab.models._types import (
    FinishDelta,
    FinishReason,
    Message,
    ModelDelta,
    ModelTurn,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
    ToolCallMessage,
    ToolChoice,
    ToolSpec,
    message_text,
)
from citelab.models._usage import Usage
from citelab.models.adapters._anthropic_citations import (
    RequestDocument,
    check_citation_settings,
    cited_blocks,
    document_prompt,
    read_document,
)
from citelab.models.adapters._sse import compact_json, sse_event

__all__ = [
    "EventReader",
    "EventWriter",
    "MessagesRequest",
    "error_event",
    "finish_reason",
    "from_messages_request",
    "message_body",
    "message_content",
    "to_messages_request",
]

_STOP_OUT: dict[str, str] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_STOP_IN: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


# --- citelab → Anthropic (the adapter's request) ---------------------------------------------


def finish_reason(stop_reason: Any) -> FinishReason:
    """citelab's finish reason for a Messages ``stop_reason`` (unknown ones: ``stop``)."""
    return _STOP_IN.get(str(stop_reason), "stop")


def to_messages_request(
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] | None,
    tool_choice: ToolChoice | None,
) -> dict[str, Any]:
    """``system``, ``messages``, and ``tools``/``tool_choice`` when tools are offered."""
    system = "\n\n".join(message_text(m) for m in messages if m["role"] == "system")
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "system":
            continue
        role = "assistant" if message["role"] == "assistant" else "user"
        blocks = _blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    request: dict[str, Any] = {"messages": turns}
    if system:
        request["system"] = system
    if tools:
        request["tools"] = [_tool(spec) for spec in tools]
        if tool_choice is not None:
            request["tool_choice"] = _tool_choice(tool_choice)
    return request


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message["role"] == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": message["content"],
            }
        ]
    blocks: list[dict[str, Any]] = []
    text = message_text(message)
    if text:
        blocks.append({"type": "text", "text": text})
    if message["role"] == "assistant":
        for call in message.get("tool_calls", []):
            blocks.append(_tool_use(call))
    return blocks or [{"type": "text", "text": ""}]


def _tool_use(call: ToolCallMessage) -> dict[str, Any]:
    try:
        arguments = json.loads(call["function"]["arguments"] or "{}")
    except ValueError:
        arguments = {}
    return {
        "type": "tool_use",
        "id": call["id"],
        "name": call["function"]["name"],
        "input": arguments if isinstance(arguments, dict) else {},
    }


def _tool(spec: ToolSpec) -> dict[str, Any]:
    function = spec["function"]
    tool: dict[str, Any] = {
        "name": function["name"],
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }
    if function.get("description"):
        tool["description"] = function["description"]
    return tool


def _tool_choice(choice: ToolChoice) -> dict[str, Any]:
    if isinstance(choice, dict):
        return {"type": "tool", "name": choice["function"]["name"]}
    return {"type": {"auto": "auto", "required": "any", "none": "none"}[choice]}


class EventReader:
    """Turns streamed Messages events (dicts) into deltas; tool calls are numbered 0, 1, …"""

    def __init__(self) -> None:
        self._tool_index: dict[int, int] = {}
        self._arguments_sent: set[int] = set()
        self.finish: FinishReason | None = None
        self._tokens = {"input_tokens": 0, "output_tokens": 0}
        self._counted = False

    @property
    def usage(self) -> TokenUsage | None:
        """The call's tokens, as ``message_start`` and ``message_delta`` reported them."""
        return TokenUsage(**self._tokens) if self._counted else None

    def read(self, event: dict[str, Any]) -> list[ModelDelta]:
        kind = event.get("type")
        self._count(event)
        if kind == "content_block_start":
            return self._start(event)
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_stop":
            return self._stop(event)
        if kind == "message_delta":
            reason = (event.get("delta") or {}).get("stop_reason")
            if reason:
                self.finish = finish_reason(reason)
        return []

    def _count(self, event: dict[str, Any]) -> None:
        """Usage comes in ``message_start`` (the input) and ``message_delta`` (the output so
        far: a later count replaces an earlier one)."""
        message = event.get("message")
        usage = (message if isinstance(message, dict) else event).get("usage")
        if not isinstance(usage, dict):
            return
        for key in self._tokens:
            if isinstance(usage.get(key), int) and usage[key] >= 0:
                self._tokens[key] = usage[key]
                self._counted = True

    def _start(self, event: dict[str, Any]) -> list[ModelDelta]:
        block = event.get("content_block") or {}
        if block.get("type") == "text" and block.get("text"):
            return [TextDelta(text=str(block["text"]))]
        if block.get("type") != "tool_use":
            return []
        index = self._tool_index.setdefault(int(event.get("index", 0)), len(self._tool_index))
        return [ToolCallDelta(index=index, id=str(block["id"]), name=str(block["name"]))]

    def _delta(self, event: dict[str, Any]) -> list[ModelDelta]:
        delta = event.get("delta") or {}
        if delta.get("type") == "text_delta" and delta.get("text"):
            return [TextDelta(text=str(delta["text"]))]
        block = int(event.get("index", 0))
        if delta.get("type") == "input_json_delta" and block in self._tool_index:
            piece = str(delta.get("partial_json") or "")
            if not piece:
                return []
            self._arguments_sent.add(block)
            return [ToolCallDelta(index=self._tool_index[block], arguments=piece)]
        return []

    def _stop(self, event: dict[str, Any]) -> list[ModelDelta]:
        block = int(event.get("index", 0))
        if block in self._tool_index and block not in self._arguments_sent:
            return [ToolCallDelta(index=self._tool_index[block], arguments="{}")]
        return []


# --- Anthropic → citelab (the server's request) ----------------------------------------------


@dataclass
class MessagesRequest:
    """What a Messages API request asks, in citelab's terms."""

    messages: list[Message]
    tools: list[ToolSpec] | None = None
    tool_choice: ToolChoice | None = None
    documents: list[RequestDocument] = field(default_factory=list)
    """The request's ``document`` blocks, by ``document_index``."""


def from_messages_request(body: dict[str, Any]) -> MessagesRequest:
    """The messages, tools, tool choice and documents of a Messages API request body."""
    request = MessagesRequest([])
    system = _text_of(body.get("system"), "system")
    if system:
        request.messages.append({"role": "system", "content": system})
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns:
        raise InvalidInput("messages: must be a non-empty list")
    for position, turn in enumerate(turns):
        request.messages.extend(_turn(turn, f"messages.{position}", request.documents))
    check_citation_settings(request.documents)
    request.tools = _tools(body.get("tools"))
    request.tool_choice = _choice(body.get("tool_choice")) if request.tools else None
    return request


def _turn(turn: Any, where: str, documents: list[RequestDocument]) -> list[Message]:
    if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
        raise InvalidInput(f"{where}: must be an object with role 'user' or 'assistant'")
    content = turn.get("content")
    if isinstance(content, str):
        return [cast(Message, {"role": turn["role"], "content": content})]
    if not isinstance(content, list):
        raise InvalidInput(f"{where}.content: must be a string or a list of content blocks")
    if turn["role"] == "assistant":
        return [_assistant(content, where)]
    return _user(content, where, documents)


def _assistant(blocks: list[Any], where: str) -> Message:
    text = "".join(
        b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )
    calls: list[ToolCallMessage] = [
        {
            "id": str(b.get("id")),
            "type": "function",
            "function": {"name": str(b.get("name")), "arguments": json.dumps(b.get("input") or {})},
        }
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    if calls:
        return {"role": "assistant", "content": text or None, "tool_calls": calls}
    return {"role": "assistant", "content": text}


def _user(blocks: list[Any], where: str, documents: list[RequestDocument]) -> list[Message]:
    out: list[Message] = []
    text: list[str] = []
    for position, block in enumerate(blocks):
        here = f"{where}.content.{position}"
        if not isinstance(block, dict):
            raise InvalidInput(f"{here}: must be a content block object")
        if block.get("type") == "tool_result":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(block.get("tool_use_id")),
                    "content": _text_of(block.get("content"), here),
                }
            )
        elif block.get("type") == "text":
            text.append(str(block.get("text", "")))
        elif block.get("type") == "document":
            document = read_document(block, len(documents), here)
            documents.append(document)
            text.append(document_prompt(document))
    if text:
        out.append({"role": "user", "content": "\n".join(text)})
    return out


def _text_of(value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            str(b.get("text", "")) for b in value if isinstance(b, dict) and b.get("type") == "text"
        )
    raise InvalidInput(f"{where}: must be a string or a list of text blocks")


def _tools(value: Any) -> list[ToolSpec] | None:
    if not value:
        return None
    if not isinstance(value, list):
        raise InvalidInput("tools: must be a list")
    specs: list[ToolSpec] = []
    for position, tool in enumerate(value):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise InvalidInput(f"tools.{position}: must be an object with a name")
        function: dict[str, Any] = {"name": tool["name"]}
        if tool.get("description"):
            function["description"] = str(tool["description"])
        if isinstance(tool.get("input_schema"), dict):
            function["parameters"] = tool["input_schema"]
        specs.append(cast(ToolSpec, {"type": "function", "function": function}))
    return specs


def _choice(value: Any) -> ToolChoice | None:
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "tool" and isinstance(value.get("name"), str):
        return {"type": "function", "function": {"name": value["name"]}}
    return {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))  # type: ignore[return-value]


class EventWriter:
    """Writes a model's deltas as Messages API stream events (``event:``/``data:`` pairs),
    counting the output tokens into ``usage`` as it goes."""

    def __init__(self, model: str, usage: Usage | None = None) -> None:
        self.model = model
        self.usage = usage or Usage(0)
        self._block: int = -1
        self._open: str | None = None
        self._tool_blocks: dict[int, int] = {}
        self._tools_seen = 0

    def start(self) -> str:
        message = _message_shell(self.model, self.usage)
        return _event("message_start", {"type": "message_start", "message": message})

    def of(self, delta: ModelDelta) -> str:
        if isinstance(delta, TextDelta):
            head = "" if self._open == "text" else self._open_block({"type": "text", "text": ""})
            self._open = "text"
            self.usage.add_output(delta.text)
            body = {"type": "text_delta", "text": delta.text}
            return head + self._block_delta(body)
        if isinstance(delta, ToolCallDelta):
            return self._tool(delta)
        if isinstance(delta, FinishDelta):
            return self._finish(delta.reason)
        return ""  # suggested replies have no place in the Messages API

    def whole(self, content: list[dict[str, Any]], reason: FinishReason) -> str:
        """The events of a finished message's ``content`` (text blocks with their
        citations, tool uses), then its end: each text block opens with its citations
        (``citations_delta``), then its text."""
        events = []
        for block in content:
            if block["type"] == "tool_use":
                events.append(self._open_block({**block, "input": {}}))
                self._open = "tool"
                arguments = json.dumps(block["input"], ensure_ascii=False)
                self.usage.add_output(block["name"] + arguments)
                events.append(
                    self._block_delta({"type": "input_json_delta", "partial_json": arguments})
                )
                continue
            citations = block.get("citations") or []
            shell: dict[str, Any] = {"type": "text", "text": ""}
            if citations:
                shell["citations"] = []
            events.append(self._open_block(shell))
            self._open = "text"
            for citation in citations:
                events.append(self._block_delta({"type": "citations_delta", "citation": citation}))
            self.usage.add_output(block["text"])
            events.append(self._block_delta({"type": "text_delta", "text": block["text"]}))
        return "".join(events) + self._finish(reason)

    def _tool(self, delta: ToolCallDelta) -> str:
        head = ""
        if delta.index not in self._tool_blocks:
            block = {
                "type": "tool_use",
                "id": delta.id or _tool_id(),
                "name": delta.name or "",
                "input": {},
            }
            head = self._open_block(block)
            self._tool_blocks[delta.index] = self._block
            self._open = "tool"
            self.usage.add_output(delta.name or "")
        if not delta.arguments:
            return head
        self.usage.add_output(delta.arguments)
        body = {"type": "input_json_delta", "partial_json": delta.arguments}
        return head + self._block_delta(body)

    def _open_block(self, block: dict[str, Any]) -> str:
        closing = self._close()
        self._block += 1
        start = {"type": "content_block_start", "index": self._block, "content_block": block}
        return closing + _event("content_block_start", start)

    def _close(self) -> str:
        if self._open is None:
            return ""
        self._open = None
        return _event("content_block_stop", {"type": "content_block_stop", "index": self._block})

    def _block_delta(self, delta: dict[str, Any]) -> str:
        body = {"type": "content_block_delta", "index": self._block, "delta": delta}
        return _event("content_block_delta", body)

    def _finish(self, reason: FinishReason) -> str:
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": _STOP_OUT[reason], "stop_sequence": None},
            "usage": {"output_tokens": self.usage.output_tokens},
        }
        stop = {"type": "message_stop"}
        return self._close() + _event("message_delta", delta) + _event("message_stop", stop)


def _event(name: str, data: dict[str, Any]) -> str:
    return sse_event(compact_json(data), name)


def error_event(message: str) -> str:
    """A mid-stream ``error`` event (the SDK raises it as an ``APIError``)."""
    return _event("error", {"type": "error", "error": {"type": "api_error", "message": message}})


def _tool_id() -> str:
    return f"toolu_{uuid.uuid4().hex[:24]}"


def _message_shell(model: str, usage: Usage) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage.anthropic(),
    }


def message_content(
    turn: ModelTurn, documents: Sequence[RequestDocument] = ()
) -> list[dict[str, Any]]:
    """The content blocks of ``turn``: its text (cited blocks when the request had documents,
    see :func:`~citelab.models.adapters._anthropic_citations.cited_blocks`), then its tool uses."""
    content: list[dict[str, Any]] = []
    if documents:
        content.extend(cited_blocks(turn.text, documents))
    elif turn.text:
        content.append({"type": "text", "text": turn.text})
    for call in turn.tool_calls:
        arguments = call.parsed_arguments()
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    return content


def message_body(
    model: str,
    turn: ModelTurn,
    usage: Usage | None = None,
    documents: Sequence[RequestDocument] = (),
) -> dict[str, Any]:
    """One non-streamed Messages API response for ``turn``."""
    return {
        **_message_shell(model, usage or Usage(0)),
        "content": message_content(turn, documents),
        "stop_reason": _STOP_OUT[turn.finish_reason],
    }
