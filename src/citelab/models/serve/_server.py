"""Serve any model as an OpenAI- and Anthropic-compatible endpoint (Starlette + uvicorn).

Routes: ``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions`` (JSON, or
Server-Sent Events ending with ``data: [DONE]`` when ``"stream": true``; tool calls included;
``usage`` in the answer, and in a last chunk when ``stream_options.include_usage`` asks),
``POST /v1/completions`` (OpenAI's non-chat completions: the prompt as one user message, cut
at ``stop``),
OpenAI's ``POST /v1/responses`` (the Responses API, streamed or not, ``usage`` included; see
:mod:`citelab.models.adapters._responses_wire`), and Anthropic's ``POST /v1/messages`` (JSON, or its
named stream events; ``tool_use`` and ``tool_result`` blocks; ``document`` blocks answered
with cited text blocks as the Citations API does; see
:mod:`citelab.models.adapters._anthropic_wire` and
:mod:`citelab.models.adapters._anthropic_citations`), so the ``anthropic`` SDK can be pointed at it
too (``base_url`` without ``/v1``). Token counts are estimates (:mod:`citelab.models._usage`).
Errors use OpenAI's shape ``{"error": {"message", "type", "param", "code"}}``: a bad request is
400, an unknown model 404, a failing model 500 (mid-stream: an ``error`` event, which the
``openai`` SDK raises as ``APIError``). Suggested replies are not part of the OpenAI API and
are not sent. ``latency_ms`` is how long every call takes at least, as a remote endpoint's
latency would be: the answer (a stream's first event) is held until that long after the
request came in, the model's own time included, with an asynchronous sleep (for benchmarks
and timeout tests). Requests that arrive together are then answered together, however long
this one process took to compute them in turn, as a remote endpoint serving them in parallel
would. A stream sends one SSE event per delta, and the events the model makes at once share
one write (see :func:`_coalesced`).

:func:`serve_in_thread` runs the app on a free loopback port in a background thread and
returns a handle with the ``base_url`` to give the SDK (:func:`serve_app_in_thread` does the
same for any ASGI app).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from citelab._errors import InvalidInput, ModelError
from citelab._net import ServerThread, is_loopback, listening_socket, netloc, serve_forever
from citelab.models._types import (
    FinishDelta,
    Message,
    Model,
    ModelDelta,
    ModelTurn,
    TextDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    collect,
)
from citelab.models._usage import Usage, usage_of
from citelab.models.adapters import (
    EventWriter,
    ResponsesWriter,
    compact_json,
    error_event,
    from_messages_request,
    from_responses_request,
    message_body,
    message_content,
    response_body,
    sse_event,
)

__all__ = [
    "ChatRequest",
    "CompletionRequest",
    "RunningServer",
    "base_url",
    "build_app",
    "is_loopback",
    "listening_socket",
    "run_server",
    "serve_app_in_thread",
    "serve_in_thread",
]


class ChatRequest(BaseModel):
    """The part of a chat-completions request this server honours (other fields are ignored)."""

    model_config = ConfigDict(extra="ignore")

    model: str
    """Must be the served model's name."""
    messages: list[Annotated[Message, Field(discriminator="role")]] = Field(min_length=1)
    """The conversation; text content only (text content parts are joined)."""
    tools: list[ToolSpec] | None = None
    """Function tools the model may call."""
    tool_choice: ToolChoice | None = None
    """As in the OpenAI API."""
    stream: bool = False
    """Answer as Server-Sent Events."""
    stream_options: dict[str, Any] | None = None
    """``{"include_usage": true}`` ends a stream with a chunk carrying ``usage`` (and no
    choices), as the OpenAI API does."""
    seed: int | None = None
    """Passed to the model."""

    @field_validator("messages", mode="before")
    @classmethod
    def _join_text_parts(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [_joined(message) for message in value]


class CompletionRequest(BaseModel):
    """The part of a (non-chat) completions request this server honours (others are ignored)."""

    model_config = ConfigDict(extra="ignore")

    model: str
    """Must be the served model's name."""
    prompt: str | list[str]
    """The raw text, sent to the model as one user message (a list: exactly one prompt)."""
    stop: str | list[str] | None = None
    """The answer is cut before the first of these strings, as the OpenAI API does."""
    stream: bool = False
    """Answer as Server-Sent Events."""
    seed: int | None = None
    """Passed to the model."""

    def text(self) -> str:
        if isinstance(self.prompt, str):
            return self.prompt
        if len(self.prompt) != 1:
            raise InvalidInput(f"prompt: give one prompt, not {len(self.prompt)}")
        return self.prompt[0]

    def stops(self) -> list[str]:
        given = [self.stop] if isinstance(self.stop, str) else list(self.stop or [])
        return [stop for stop in given if stop]


def _joined(message: Any) -> Any:
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        parts = message["content"]
        text = "".join(p.get("text", "") for p in parts if isinstance(p, dict))
        return {**message, "content": text}
    return message


def build_app(model: Model, *, latency_ms: float = 0.0) -> Starlette:
    """A Starlette app serving ``model`` under its ``name``."""
    endpoint = _Endpoint(model, latency_ms / 1000.0)
    return Starlette(
        routes=[
            Route("/v1/models", endpoint.list_models, methods=["GET"]),
            Route("/v1/models/{model_id:path}", endpoint.get_model, methods=["GET"]),
            Route("/v1/chat/completions", endpoint.chat_completions, methods=["POST"]),
            Route("/v1/completions", endpoint.completions, methods=["POST"]),
            Route("/v1/responses", endpoint.responses, methods=["POST"]),
            Route("/v1/messages", endpoint.messages, methods=["POST"]),
        ]
    )


class _Endpoint:
    def __init__(self, model: Model, latency: float) -> None:
        self.model = model
        self.latency = latency

    def _card(self) -> dict[str, Any]:
        return {"id": self.model.name, "object": "model", "created": 0, "owned_by": "citelab"}

    async def list_models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [self._card()]})

    async def get_model(self, request: Request) -> Response:
        if request.path_params["model_id"] != self.model.name:
            return self._unknown_model(request.path_params["model_id"])
        return JSONResponse(self._card())

    async def chat_completions(self, request: Request) -> Response:
        began = time.perf_counter()
        try:
            chat = ChatRequest.model_validate(json.loads(await request.body()))
        except ValueError as exc:  # invalid JSON, or pydantic's ValidationError
            return _error(400, _describe(exc), "invalid_request_error")
        if chat.model != self.model.name:
            return self._unknown_model(chat.model)
        usage = usage_of(chat.messages, chat.tools)
        deltas = self.model.stream(
            chat.messages, chat.tools, tool_choice=chat.tool_choice, seed=chat.seed
        )
        include_usage = bool((chat.stream_options or {}).get("include_usage"))

        def streamed(first: ModelDelta, rest: AsyncIterator[ModelDelta]) -> Response:
            chunks = _Chunks(self.model.name, usage if include_usage else None)
            return _sse_response(chunks, first, rest)

        def whole(turn: ModelTurn) -> Response:
            usage.add_turn(turn)
            return JSONResponse(_completion(self.model.name, turn, usage))

        return await self._answer(deltas, began, streamed if chat.stream else None, whole, _OPENAI)

    async def completions(self, request: Request) -> Response:
        """OpenAI's (non-chat) completions API (``POST /v1/completions``): the prompt as one
        user message, the answer cut at the first ``stop``; a stream is written once the
        answer is whole (the cut needs it), as one text chunk and one finish chunk."""
        began = time.perf_counter()
        try:
            asked = CompletionRequest.model_validate(json.loads(await request.body()))
            messages: list[Message] = [{"role": "user", "content": asked.text()}]
        except ValueError as exc:  # invalid JSON, or pydantic's ValidationError
            return _error(400, _describe(exc), "invalid_request_error")
        except InvalidInput as exc:
            return _error(400, str(exc), "invalid_request_error")
        if asked.model != self.model.name:
            return self._unknown_model(asked.model)
        usage = usage_of(messages, None)
        deltas = self.model.stream(messages, seed=asked.seed)

        def whole(turn: ModelTurn) -> Response:
            text, reason = _cut(turn, asked.stops())
            usage.add_output(text)
            body = _text_completion(self.model.name, text, reason)
            if asked.stream:
                return _event_stream(_completion_events(body))
            return JSONResponse({**body, "usage": usage.chat()})

        return await self._answer(deltas, began, None, whole, _OPENAI)

    async def messages(self, request: Request) -> Response:
        """Anthropic's Messages API (``POST /v1/messages``), streamed or not, tools and
        documents (with citations) included."""
        began = time.perf_counter()
        try:
            body = json.loads(await request.body())
            if not isinstance(body, dict):
                raise InvalidInput("the request body must be a JSON object")
            asked = from_messages_request(body)
        except ValueError as exc:
            return _anthropic_error(
                400, f"the request body is not JSON: {exc}", "invalid_request_error"
            )
        except InvalidInput as exc:
            return _anthropic_error(400, str(exc), "invalid_request_error")
        if body.get("model") != self.model.name:
            served = self.model.name
            message = f"model: {body.get('model')!r} does not exist; this server serves {served!r}"
            return _anthropic_error(404, message, "not_found_error")
        usage = usage_of(asked.messages, asked.tools)
        deltas = self.model.stream(asked.messages, asked.tools, tool_choice=asked.tool_choice)
        writer = EventWriter(self.model.name, usage)

        def streamed(first: ModelDelta, rest: AsyncIterator[ModelDelta]) -> Response:
            return _wire_sse(writer, error_event, first, rest)

        def whole(turn: ModelTurn) -> Response:
            if body.get("stream"):  # cited blocks need the whole text: written at once
                return _messages_whole_sse(writer, message_content(turn, asked.documents), turn)
            usage.add_turn(turn)
            return JSONResponse(message_body(self.model.name, turn, usage, asked.documents))

        stream = body.get("stream") and not asked.documents
        return await self._answer(deltas, began, streamed if stream else None, whole, _ANTHROPIC)

    async def responses(self, request: Request) -> Response:
        """OpenAI's Responses API (``POST /v1/responses``), streamed or not, tools included."""
        began = time.perf_counter()
        try:
            body = json.loads(await request.body())
            if not isinstance(body, dict):
                raise InvalidInput("the request body must be a JSON object")
            asked = from_responses_request(body)
        except ValueError as exc:
            return _error(400, f"the request body is not JSON: {exc}", "invalid_request_error")
        except InvalidInput as exc:
            return _error(400, str(exc), "invalid_request_error")
        if body.get("model") != self.model.name:
            return self._unknown_model(str(body.get("model")))
        usage = usage_of(asked.messages, asked.tools)
        deltas = self.model.stream(asked.messages, asked.tools, tool_choice=asked.tool_choice)

        def streamed(first: ModelDelta, rest: AsyncIterator[ModelDelta]) -> Response:
            responses = ResponsesWriter(self.model.name, asked, usage)
            return _wire_sse(responses, responses.error, first, rest)

        def whole(turn: ModelTurn) -> Response:
            usage.add_turn(turn)
            return JSONResponse(response_body(self.model.name, asked, turn, usage))

        stream = bool(body.get("stream"))
        return await self._answer(deltas, began, streamed if stream else None, whole, _OPENAI)

    async def _answer(
        self,
        deltas: AsyncIterator[ModelDelta],
        began: float,
        streamed: Callable[[ModelDelta, AsyncIterator[ModelDelta]], Response] | None,
        whole: Callable[[ModelTurn], Response],
        errors: _ErrorShape,
    ) -> Response:
        """The model's answer as one API writes it: streamed from its first delta, or
        collected whole; bad input, an empty stream and a model error in that API's shape."""
        try:
            if streamed is not None:
                first = await anext(deltas)
                await self._hold(began)
                return streamed(first, deltas)
            turn = await collect(deltas)
            await self._hold(began)
            return whole(turn)
        except InvalidInput as exc:
            return errors.write(400, str(exc), "invalid_request_error")
        except StopAsyncIteration:
            message = f"model {self.model.name!r} streamed nothing"
            return errors.write(500, message, errors.server_error)
        except ModelError as exc:
            return errors.write(500, str(exc), errors.server_error)

    async def _hold(self, began: float) -> None:
        """Wait until the call has taken ``latency`` (at once when it already has)."""
        remaining = self.latency - (time.perf_counter() - began)
        if remaining > 0:
            await asyncio.sleep(remaining)

    def _unknown_model(self, name: str) -> Response:
        message = f"The model {name!r} does not exist; this server serves {self.model.name!r}"
        return _error(404, message, "invalid_request_error", code="model_not_found")


class _Chunks:
    """Writes the chunks of one streamed completion.

    Every chunk shares its id, model and creation time, so that part of the JSON is written
    once and each chunk only serializes its delta. With ``usage`` (the request asked for it),
    the output is counted as it goes and a last chunk carries the totals.
    """

    def __init__(self, model: str, usage: Usage | None = None) -> None:
        head = {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }
        self._head = head
        self._prefix = "data: " + compact_json(head)[:-1] + ',"choices":[{"index":0,"delta":'
        self.usage = usage

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> str:
        # One event, its data written around the delta: the head is encoded once per stream.
        finish = compact_json(finish_reason)
        return f'{self._prefix}{compact_json(delta)},"finish_reason":{finish}}}]}}\n\n'

    def of(self, delta: ModelDelta) -> str | None:
        if isinstance(delta, TextDelta):
            self._count(delta.text)
            return self.chunk({"content": delta.text})
        if isinstance(delta, ToolCallDelta):
            self._count((delta.name or "") + delta.arguments)
            return self.chunk({"tool_calls": [_tool_call_piece(delta)]})
        if isinstance(delta, FinishDelta):
            return self.chunk({}, delta.reason)
        return None  # suggested replies have no place in the OpenAI API

    def usage_chunk(self) -> str | None:
        """The last chunk, with the totals and no choices (when usage was asked for)."""
        if self.usage is None:
            return None
        return sse_event(compact_json({**self._head, "choices": [], "usage": self.usage.chat()}))

    def _count(self, text: str) -> None:
        if self.usage is not None:
            self.usage.add_output(text)


def _tool_call_piece(delta: ToolCallDelta) -> dict[str, Any]:
    piece: dict[str, Any] = {"index": delta.index, "function": {"arguments": delta.arguments}}
    if delta.id is not None:
        piece["id"] = delta.id
        piece["type"] = "function"
    if delta.name is not None:
        piece["function"]["name"] = delta.name
    return piece


def _sse_response(chunks: _Chunks, first: ModelDelta, rest: AsyncIterator[ModelDelta]) -> Response:
    async def events() -> AsyncIterator[str]:
        yield chunks.chunk({"role": "assistant", "content": ""})
        try:
            async for delta in _chained(first, rest):
                if (event := chunks.of(delta)) is not None:
                    yield event
        except (ModelError, InvalidInput) as exc:
            error = {"error": {"message": str(exc), "type": "server_error", "code": exc.code}}
            yield sse_event(json.dumps(error))
            return
        if (last := chunks.usage_chunk()) is not None:
            yield last
        yield sse_event("[DONE]")

    return _event_stream(_coalesced(events()))


async def _chained(first: ModelDelta, rest: AsyncIterator[ModelDelta]) -> AsyncIterator[ModelDelta]:
    yield first
    async for delta in rest:
        yield delta


_END = object()


async def _coalesced(events: AsyncIterator[str]) -> AsyncIterator[str]:
    """The events, several to a write when they are ready at once.

    Each write costs the server (and the reader) far more than the bytes in it. Events that
    the model produces without waiting for anything (an offline model, or a burst of tokens)
    are joined: after an event arrives, the loop turns once more, and what arrived meanwhile
    goes out with it. An event that took time of its own goes out alone, as soon as it is
    ready, so streaming keeps its pace. Every event stays a separate SSE event.
    """
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def produce() -> None:
        try:
            async for event in events:
                queue.put_nowait(event)
        finally:
            queue.put_nowait(_END)

    producer = asyncio.create_task(produce())
    try:
        while (batch := await _next_batch(queue)) is not None:
            yield batch
        await producer  # re-raises what broke the producer, if anything
    finally:
        producer.cancel()


async def _next_batch(queue: asyncio.Queue[object]) -> str | None:
    """The events ready now (waiting for the first), or None at the end."""
    batch: list[str] = []
    item = await queue.get()
    while item is not _END:
        batch.append(str(item))
        if queue.empty():
            await asyncio.sleep(0)  # one turn of the loop: let a ready producer go on
            if queue.empty():
                break
        item = queue.get_nowait()
    if item is _END:
        queue.put_nowait(_END)  # seen again by the next call, which then ends
    return "".join(batch) if batch else None


def _wire_sse(
    writer: EventWriter | ResponsesWriter,
    error: Callable[[str], str],
    first: ModelDelta,
    rest: AsyncIterator[ModelDelta],
) -> Response:
    """A vendor wire's event stream: its opening event, one per delta, and a failure as the
    wire writes one (``error``)."""

    async def events() -> AsyncIterator[str]:
        yield writer.start()
        try:
            async for delta in _chained(first, rest):
                if event := writer.of(delta):
                    yield event
        except (ModelError, InvalidInput) as exc:
            yield error(str(exc))

    return _event_stream(_coalesced(events()))


def _messages_whole_sse(
    writer: EventWriter, content: list[dict[str, Any]], turn: ModelTurn
) -> Response:
    async def events() -> AsyncIterator[str]:
        yield writer.start()
        yield writer.whole(content, turn.finish_reason)

    return _event_stream(events())


def _event_stream(events: AsyncIterator[str]) -> Response:
    """The streamed response of SSE text (events written by :func:`sse_event`)."""
    return StreamingResponse(
        events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
    )


def _anthropic_error(status: int, message: str, kind: str) -> Response:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return JSONResponse(body, status_code=status)


def _completion(model: str, turn: ModelTurn, usage: Usage) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": turn.to_message(), "finish_reason": turn.finish_reason}
        ],
        "usage": usage.chat(),
    }


def _cut(turn: ModelTurn, stops: list[str]) -> tuple[str, str]:
    """The turn's text before its first stop string, and the finish reason."""
    ends = [i for i in (turn.text.find(stop) for stop in stops) if i >= 0]
    if ends:
        return turn.text[: min(ends)], "stop"
    return turn.text, "length" if turn.finish_reason == "length" else "stop"


def _text_completion(model: str, text: str, reason: str) -> dict[str, Any]:
    return {
        "id": f"cmpl-{uuid.uuid4().hex}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "text": text, "finish_reason": reason, "logprobs": None}],
    }


async def _completion_events(body: dict[str, Any]) -> AsyncIterator[str]:
    (choice,) = body["choices"]
    yield sse_event(compact_json({**body, "choices": [{**choice, "finish_reason": None}]}))
    yield sse_event(compact_json({**body, "choices": [{**choice, "text": ""}]}))
    yield sse_event("[DONE]")


def _error(status: int, message: str, kind: str, *, code: str | None = None) -> Response:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return JSONResponse(body, status_code=status)


def _describe(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        problems = [
            f"{'.'.join(map(str, error['loc'])) or 'body'}: {error['msg']}"
            for error in exc.errors()
        ]
        return "invalid request: " + "; ".join(problems)
    return f"the request body is not JSON: {exc}"


# --- running it ------------------------------------------------------------------------------
# The socket and uvicorn handling is citelab._net's, shared with the answer server.


def base_url(host: str, port: int) -> str:
    """The OpenAI base URL of a server on ``host:port`` (ends in ``/v1``)."""
    return f"http://{netloc(host, port)}/v1"


class RunningServer(ServerThread):
    """A model server running in a background thread; stop it with :meth:`stop` or ``with``."""

    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client (ends in ``/v1``)."""
        return base_url(self.host, self.port)


def serve_in_thread(
    model: Model, *, host: str = "127.0.0.1", port: int = 0, latency_ms: float = 0.0
) -> RunningServer:
    """Serve ``model`` in a daemon thread; returns once the server accepts connections."""
    return serve_app_in_thread(build_app(model, latency_ms=latency_ms), host=host, port=port)


def serve_app_in_thread(app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Serve any app as :func:`serve_in_thread` serves a model (tests use it for servers
    that misbehave on purpose)."""
    return RunningServer.start(app, host=host, port=port, name="citelab-serve-model")


def run_server(
    model: Model,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    latency_ms: float = 0.0,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve ``model`` in the foreground until interrupted; ``announce`` gets the base URL
    once the port is bound (port 0 picks a free one)."""
    serve_forever(
        build_app(model, latency_ms=latency_ms),
        host=host,
        port=port,
        announce=lambda bound: announce(base_url(host, bound)),
    )


class _ErrorShape(NamedTuple):
    """How one API writes an error: its writer and its name for a server-side failure."""

    write: Callable[[int, str, str], Response]
    server_error: str


_OPENAI = _ErrorShape(_error, "server_error")
_ANTHROPIC = _ErrorShape(_anthropic_error, "api_error")
