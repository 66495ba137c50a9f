"""OpenAIModel reading bodies exactly as servers may write them, byte for byte, over real HTTP.

serve-model writes one well-formed shape; real servers differ (comments, fields without a
space, data split over lines, usage chunks, other choices, errors, stalls, dropped
connections). A tiny app replays the bytes each test gives it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from citelab import ModelError
from citelab.models import (
    ExtractiveModel,
    Message,
    ModelTurn,
    OpenAIModel,
    RunningServer,
    build_app,
    collect,
)
from citelab.models.serve._server import serve_app_in_thread

from .._builders import FEES, RAG_SEARCH, system, user


@dataclass
class Canned:
    """What the next answer is: byte parts in order; a number pauses that many seconds."""

    parts: list[bytes | float] = field(default_factory=list)
    broken: bool = False
    """Drop the connection after the parts, in the middle of the body."""


def _completions_app() -> Starlette:
    async def completions(request: Request) -> Response:
        canned: Canned = request.app.state.canned

        async def body() -> AsyncIterator[bytes]:
            for part in canned.parts:
                if isinstance(part, float):
                    await asyncio.sleep(part)
                else:
                    yield part
            if canned.broken:
                raise ConnectionAbortedError("the canned server drops the connection")

        return StreamingResponse(body(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    app.state.canned = Canned()
    return app


APP = _completions_app()


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_app_in_thread(APP) as running:
        yield running


def _chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    choice = {"index": index, "delta": delta, "finish_reason": finish}
    return {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}


def _event(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


async def _ask(
    server: RunningServer, canned: Canned, *, stream: bool = True, timeout: float = 10
) -> ModelTurn:
    APP.state.canned = canned
    async with OpenAIModel(
        "m", base_url=server.base_url, max_retries=0, stream=stream, timeout=timeout
    ) as model:
        return await collect(model.stream([user("q")], [RAG_SEARCH]))


@pytest.mark.anyio
async def test_every_sse_form_servers_use_is_read(server: RunningServer) -> None:
    split_over_lines = json.dumps(_chunk({"content": "lo, "})).replace(
        ', "choices"', ',\ndata: "choices"'
    )
    canned = Canned(
        [
            b": a comment, as servers send to keep a connection alive\n\n",
            b"event: message\nid: 1\nretry: 500\n",
            _event(_chunk({"role": "assistant", "content": None, "tool_calls": None})),
            b'data:{"choices":[{"index":0,"delta":{"content":"Hel"}}]}\r\n\r\n',
            f"data: {split_over_lines}\n\n".encode(),
            _event(_chunk({"content": "ignored: another choice"}, index=1)),
            _event({"id": "c1", "choices": [], "usage": {"total_tokens": 9}}),
            _event(_chunk({"content": "world [1]."}, "stop")),
            b"data: [DONE]\n\n",
        ]
    )
    turn = await _ask(server, canned)
    assert turn.text == "Hello, world [1]."
    assert turn.finish_reason == "stop"


@pytest.mark.anyio
async def test_tool_call_pieces_are_assembled_by_index(server: RunningServer) -> None:
    header = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "rag_search"}}
    second = {"index": 1, "id": "call_10", "function": {"name": "list", "arguments": "{}"}}
    canned = Canned(
        [
            _event(_chunk({"tool_calls": [header]})),
            _event(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"que'}}]})),
            _event(_chunk({"tool_calls": [second]})),
            _event(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ry": "x"}'}}]})),
            _event(_chunk({}, "tool_calls")),
            b"data: [DONE]\n\n",
        ]
    )
    turn = await _ask(server, canned)
    assert turn.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.parsed_arguments()) for c in turn.tool_calls] == [
        ("call_9", "rag_search", {"query": "x"}),
        ("call_10", "list", {}),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("parts", "problem"),
    [
        ([_event(_chunk({"content": "Half an ans"}))], "the stream from .* ended unfinished"),
        ([b"data: {not json\n\n"], "a streamed chunk from .* is not JSON"),
        ([b"data: [1, 2]\n\n"], "a streamed chunk from .* is not a JSON object"),
        (
            [_event(_chunk({"content": "Fees"})), _event({"error": {"message": "GPU on fire"}})],
            "failed: GPU on fire",
        ),
        ([_event({"error": "overloaded"})], "failed: overloaded"),
    ],
    ids=["no-finish", "not-json", "not-object", "error-object", "error-string"],
)
async def test_a_bad_stream_is_a_model_error_that_says_what(
    server: RunningServer, parts: list[bytes | float], problem: str
) -> None:
    with pytest.raises(ModelError, match=problem):
        await _ask(server, Canned(parts))


@pytest.mark.anyio
async def test_a_stream_that_stalls_past_the_timeout_is_a_model_error(
    server: RunningServer,
) -> None:
    canned = Canned([_event(_chunk({"content": "Fees "})), 2.0, _event(_chunk({}, "stop"))])
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"no answer from .* within 0\.3 s"):
        await _ask(server, canned, timeout=0.3)
    assert time.monotonic() - started < 1.5


@pytest.mark.anyio
async def test_a_connection_dropped_mid_stream_is_a_model_error(server: RunningServer) -> None:
    canned = Canned([_event(_chunk({"content": "Fees are "}))], broken=True)
    with pytest.raises(ModelError, match=r"the answer from .* broke off"):
        await _ask(server, canned)


@pytest.mark.anyio
async def test_a_whole_completion_is_read_with_its_tool_calls(server: RunningServer) -> None:
    message = {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [
            {
                "id": "c_1",
                "type": "function",
                "function": {"name": "rag_search", "arguments": "{}"},
            },
            {"id": "c_2", "type": "custom", "custom": {"name": "other", "input": "x"}},
        ],
    }
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    turn = await _ask(server, Canned([json.dumps(body).encode()]), stream=False)
    assert turn.text == "Looking."
    assert [(c.id, c.name) for c in turn.tool_calls] == [("c_1", "rag_search")]
    assert turn.finish_reason == "tool_calls"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b'{"choices": []}', "returned no choices"),
        (b"<html>busy</html>", "the completion from .* is not JSON"),
        (b'{"error": {"message": "quota exceeded"}}', "failed: quota exceeded"),
    ],
    ids=["no-choices", "not-json", "error"],
)
async def test_a_bad_completion_is_a_model_error_that_says_what(
    server: RunningServer, body: bytes, problem: str
) -> None:
    with pytest.raises(ModelError, match=problem):
        await _ask(server, Canned([body]), stream=False)


class Peers:
    """Wraps an app and records the client address (host, port) of every request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[tuple[str, int]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.seen.append(tuple(scope["client"]))
        await self.app(scope, receive, send)


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "non-stream"])
async def test_calls_reuse_a_few_kept_alive_connections(streaming: bool) -> None:
    peers = Peers(build_app(ExtractiveModel()))
    messages: list[Message] = [system(FEES), user("How much are tuition fees?")]
    with serve_app_in_thread(peers) as running:
        async with OpenAIModel(
            "extractive", base_url=running.base_url, max_retries=0, stream=streaming
        ) as model:
            for _ in range(3):  # one after the other, then many at once
                await collect(model.stream(messages))
            sequential = set(peers.seen)
            turns = await asyncio.gather(*(collect(model.stream(messages)) for _ in range(40)))
    assert len(sequential) <= 3
    assert len(peers.seen) == 43
    assert len(set(peers.seen)) < 43  # kept alive: the burst reused the first connections
    assert sequential <= set(peers.seen[3:])
    assert {turn.text for turn in turns} == {turns[0].text}
    assert turns[0].text.startswith("Tuition fees")


@pytest.mark.anyio
async def test_prepare_opens_the_clients_without_calling_and_calls_then_work() -> None:
    peers = Peers(build_app(ExtractiveModel()))
    messages: list[Message] = [system(FEES), user("How much are tuition fees?")]
    with serve_app_in_thread(peers) as running:
        async with OpenAIModel("extractive", base_url=running.base_url, max_retries=0) as model:
            await model.prepare()
            await model.prepare()  # twice is once
            opened = model._clients[asyncio.get_running_loop()]
            assert len(opened) == len(set(map(id, opened))) > 1
            assert peers.seen == []  # nothing went over the wire
            turns = await asyncio.gather(*(collect(model.stream(messages)) for _ in range(4)))
            assert model._clients[asyncio.get_running_loop()] == opened  # no client added
    assert len(peers.seen) == 4
    assert {turn.text for turn in turns} == {turns[0].text}
