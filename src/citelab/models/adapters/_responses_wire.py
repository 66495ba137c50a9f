"""OpenAI's Responses API shapes on ``serve-model``'s ``POST /v1/responses``.

Requests: ``input`` (a string, or a list of items: messages with ``role`` user, system,
developer or assistant and string or ``input_text``/``output_text`` content; ``function_call``
items; ``function_call_output`` items), ``instructions`` (a system message first), function
``tools`` (other tool types are not served and are a 400), ``tool_choice`` (``auto``,
``required``, ``none`` or ``{"type": "function", "name"}``) and ``stream``.

Answers: a ``response`` object whose ``output`` holds a ``message`` item (one ``output_text``
part, no annotations: the served model writes ``[n]`` markers in its text) and one
``function_call`` item per tool call, with ``usage`` (estimated, see
:mod:`citelab.models._usage`). Streamed, the events are the API's, each with its
``sequence_number``: ``response.created``, ``response.in_progress``, per item
``response.output_item.added``, text as ``response.content_part.added`` /
``response.output_text.delta`` … ``.done`` / ``response.content_part.done``, arguments as
``response.function_call_arguments.delta`` … ``.done``, ``response.output_item.done``, and
``response.completed`` with the whole response and its usage. A model failing mid-stream
ends the stream with an ``error`` event.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, cast

from citelab._errors import InvalidInput
from citelab.models._types import (
    FinishDelta,
    Message,
    ModelDelta,
    ModelTurn,
    TextDelta,
    ToolCallDelta,
    ToolCallMessage,
    ToolChoice,
    ToolSpec,
)
from citelab.models._usage import Usage
from citelab.models.adapters._sse import compact_json, sse_event

__all__ = ["ResponsesRequest", "ResponsesWriter", "from_responses_request", "response_body"]

_ROLES = {"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}


@dataclass
class ResponsesRequest:
    """What a Responses API request asks, in citelab's terms."""

    messages: list[Message]
    tools: list[ToolSpec] | None = None
    tool_choice: ToolChoice | None = None
    echo: dict[str, Any] = field(default_factory=dict)
    """Request fields the response repeats (``instructions``, ``tools``, ``tool_choice``)."""


def from_responses_request(body: dict[str, Any]) -> ResponsesRequest:
    """The messages, tools and tool choice of a Responses API request body."""
    request = ResponsesRequest([])
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise InvalidInput("instructions: must be a string")
    if instructions:
        request.messages.append({"role": "system", "content": instructions})
    request.messages.extend(_input(body.get("input")))
    if not any(message["role"] == "user" for message in request.messages):
        raise InvalidInput("input: needs a user message")
    request.tools = _tools(body.get("tools"))
    request.tool_choice = _choice(body.get("tool_choice")) if request.tools else None
    request.echo = {
        "instructions": instructions,
        "tools": body.get("tools") or [],
        "tool_choice": body.get("tool_choice") or "auto",
    }
    return request


def _input(value: Any) -> list[Message]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if not isinstance(value, list) or not value:
        raise InvalidInput("input: must be a string or a non-empty list of items")
    messages: list[Message] = []
    for position, item in enumerate(value):
        where = f"input.{position}"
        if not isinstance(item, dict):
            raise InvalidInput(f"{where}: must be an object")
        kind = item.get("type", "message")
        if kind == "message":
            messages.append(_message(item, where))
        elif kind == "function_call":
            _add_call(messages, item, where)
        elif kind == "function_call_output":
            output = item.get("output")
            if not isinstance(output, str):
                raise InvalidInput(f"{where}.output: must be a string")
            messages.append(
                {"role": "tool", "tool_call_id": str(item.get("call_id")), "content": output}
            )
        else:
            raise InvalidInput(f"{where}.type: {kind!r} items are not served here")
    return messages


def _message(item: dict[str, Any], where: str) -> Message:
    role = _ROLES.get(str(item.get("role")))
    if role is None:
        raise InvalidInput(f"{where}.role: must be user, system, developer or assistant")
    content = item.get("content")
    if isinstance(content, list):
        parts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") in ("input_text", "output_text")
        ]
        content = "".join(parts)
    if not isinstance(content, str):
        raise InvalidInput(f"{where}.content: must be a string or a list of text parts")
    return cast(Message, {"role": role, "content": content})


def _add_call(messages: list[Message], item: dict[str, Any], where: str) -> None:
    """A ``function_call`` item joins the assistant message right before it (or opens one)."""
    if not isinstance(item.get("name"), str):
        raise InvalidInput(f"{where}.name: a function call needs a name")
    call: ToolCallMessage = {
        "id": str(item.get("call_id")),
        "type": "function",
        "function": {"name": item["name"], "arguments": str(item.get("arguments") or "{}")},
    }
    last = messages[-1] if messages else None
    if last is not None and last["role"] == "assistant":
        last.setdefault("tool_calls", []).append(call)
        return
    messages.append({"role": "assistant", "content": None, "tool_calls": [call]})


def _tools(value: Any) -> list[ToolSpec] | None:
    if not value:
        return None
    if not isinstance(value, list):
        raise InvalidInput("tools: must be a list")
    specs: list[ToolSpec] = []
    for position, tool in enumerate(value):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise InvalidInput(f"tools.{position}: only function tools are served here")
        if not isinstance(tool.get("name"), str):
            raise InvalidInput(f"tools.{position}.name: a function tool needs a name")
        function: dict[str, Any] = {"name": tool["name"]}
        if tool.get("description"):
            function["description"] = str(tool["description"])
        if isinstance(tool.get("parameters"), dict):
            function["parameters"] = tool["parameters"]
        specs.append(cast(ToolSpec, {"type": "function", "function": function}))
    return specs


def _choice(value: Any) -> ToolChoice | None:
    if value in ("auto", "required", "none"):
        return cast(ToolChoice, value)
    if isinstance(value, dict) and value.get("type") == "function" and value.get("name"):
        return {"type": "function", "function": {"name": str(value["name"])}}
    return None


# --- answers ---------------------------------------------------------------------------------


def _shell(model: str, request: ResponsesRequest, status: str) -> dict[str, Any]:
    return {
        "id": f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": status,
        "output": [],
        "error": None,
        "incomplete_details": None,
        "instructions": request.echo.get("instructions"),
        "parallel_tool_calls": True,
        "tool_choice": request.echo.get("tool_choice", "auto"),
        "tools": request.echo.get("tools", []),
        "text": {"format": {"type": "text"}},
        "usage": None,
    }


def _message_item(item_id: str, text: str, status: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}] if status else []
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": status or "in_progress",
        "content": content,
    }


def _call_item(
    item_id: str, call_id: str, name: str, arguments: str, status: str
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def response_body(
    model: str, request: ResponsesRequest, turn: ModelTurn, usage: Usage
) -> dict[str, Any]:
    """One non-streamed response for ``turn``."""
    output = []
    if turn.text:
        output.append(_message_item(f"msg_{uuid.uuid4().hex}", turn.text, "completed"))
    for call in turn.tool_calls:
        item_id = f"fc_{uuid.uuid4().hex}"
        output.append(_call_item(item_id, call.id, call.name, call.arguments, "completed"))
    return {**_shell(model, request, "completed"), "output": output, "usage": usage.responses()}


@dataclass
class _Open:
    """The output item being written."""

    index: int
    item: dict[str, Any]
    text: list[str] = field(default_factory=list)


def _at(opened: _Open) -> dict[str, Any]:
    """Where a text event is: its item, the item's place in the output, the part."""
    return {"item_id": opened.item["id"], "output_index": opened.index, "content_index": 0}


class ResponsesWriter:
    """Writes a model's deltas as Responses API stream events (``event:``/``data:`` pairs)."""

    def __init__(self, model: str, request: ResponsesRequest, usage: Usage) -> None:
        self.usage = usage
        self._response = _shell(model, request, "in_progress")
        self._sequence = 0
        self._done: list[dict[str, Any]] = []
        self._open: _Open | None = None
        self._calls: dict[int, _Open] = {}

    def start(self) -> str:
        created = self._event("response.created", {"response": dict(self._response)})
        return created + self._event("response.in_progress", {"response": dict(self._response)})

    def of(self, delta: ModelDelta) -> str:
        if isinstance(delta, TextDelta):
            return self._text(delta.text)
        if isinstance(delta, ToolCallDelta):
            return self._call(delta)
        if isinstance(delta, FinishDelta):
            return self._finish()
        return ""  # suggested replies have no place in the Responses API

    def error(self, message: str) -> str:
        """A mid-stream ``error`` event (the SDK raises it)."""
        return self._event("error", {"code": "server_error", "message": message, "param": None})

    def _text(self, piece: str) -> str:
        head = ""
        opened = self._open
        if opened is None or opened.item["type"] != "message":
            head = self._close()
            item = _message_item(f"msg_{uuid.uuid4().hex}", "", "")
            opened = self._open = _Open(len(self._done), item)
            part = {"type": "output_text", "text": "", "annotations": []}
            head += self._added(opened)
            head += self._event("response.content_part.added", {**_at(opened), "part": part})
        opened.text.append(piece)
        self.usage.add_output(piece)
        return head + self._event(
            "response.output_text.delta", {**_at(opened), "delta": piece, "logprobs": []}
        )

    def _call(self, delta: ToolCallDelta) -> str:
        head = ""
        current = self._calls.get(delta.index)
        if current is None:
            head = self._close()
            call_id = delta.id or f"call_{uuid.uuid4().hex[:24]}"
            item = _call_item(
                f"fc_{uuid.uuid4().hex}", call_id, delta.name or "", "", "in_progress"
            )
            current = self._open = self._calls[delta.index] = _Open(len(self._done), item)
            head += self._added(current)
            self.usage.add_output(delta.name or "")
        if not delta.arguments:
            return head
        current.text.append(delta.arguments)
        self.usage.add_output(delta.arguments)
        body = {"item_id": current.item["id"], "output_index": current.index}
        return head + self._event(
            "response.function_call_arguments.delta", {**body, "delta": delta.arguments}
        )

    def _added(self, opened: _Open) -> str:
        body = {"output_index": opened.index, "item": dict(opened.item)}
        return self._event("response.output_item.added", body)

    def _close(self) -> str:
        opened, self._open = self._open, None
        if opened is None:
            return ""
        text = "".join(opened.text)
        if opened.item["type"] == "message":
            at = _at(opened)
            part = {"type": "output_text", "text": text, "annotations": []}
            events = self._event("response.output_text.done", {**at, "text": text, "logprobs": []})
            events += self._event("response.content_part.done", {**at, "part": part})
            item = _message_item(opened.item["id"], text, "completed")
        else:
            body = {"item_id": opened.item["id"], "output_index": opened.index}
            events = self._event(
                "response.function_call_arguments.done",
                {**body, "arguments": text, "name": opened.item["name"]},
            )
            item = {**opened.item, "arguments": text, "status": "completed"}
        self._done.append(item)
        body = {"output_index": opened.index, "item": item}
        return events + self._event("response.output_item.done", body)

    def _finish(self) -> str:
        closing = self._close()
        response = {
            **self._response,
            "status": "completed",
            "output": list(self._done),
            "usage": self.usage.responses(),
        }
        return closing + self._event("response.completed", {"response": response})

    def _event(self, kind: str, body: dict[str, Any]) -> str:
        data = {"type": kind, **body, "sequence_number": self._sequence}
        self._sequence += 1
        return sse_event(compact_json(data), kind)
