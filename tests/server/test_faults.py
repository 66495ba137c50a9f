"""Faults over real HTTP: slow and idle sockets, a client that goes away, a model that hangs
or is unavailable, two turns of one conversation at once."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from citelab import ModelUnavailable
from citelab._net import Timeouts
from citelab.agent import AgentConfig, default_agents
from citelab.answers import AnswerService
from citelab.events import ErrorEvent
from citelab.models import ExtractiveModel, ModelDelta, message_text
from citelab.server import Auth, RunningServer, create_app, serve_in_thread

from .conftest import ask_sse

TOKEN = "fault-tests-token-0123456789"
QUESTION = "How much is the semester fee?"
HANG = "HANG"
UNAVAILABLE = "UNAVAILABLE"
HOLD = "HOLD"


class FaultyModel:
    """The extractive model, except: ``HANG`` sends nothing, ``UNAVAILABLE`` is a 503 from
    upstream, ``HOLD`` waits for ``release`` before writing."""

    name = "faulty"

    def __init__(self) -> None:
        self.inner = ExtractiveModel()
        self.release = threading.Event()
        self.started = threading.Event()
        self.cancelled = threading.Event()

    async def stream(
        self, messages: Any, tools: Any = None, **options: Any
    ) -> AsyncIterator[ModelDelta]:
        question = message_text([m for m in messages if m["role"] == "user"][-1])
        if UNAVAILABLE in question:
            raise ModelUnavailable("upstream is overloaded", retry_after=7)
        if HANG in question:
            await asyncio.sleep(3600)
        if HOLD in question:
            self.started.set()
            try:
                while not self.release.is_set():
                    await asyncio.sleep(0.02)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        async for delta in self.inner.stream(messages, tools, **options):
            yield delta


@pytest.fixture(scope="module")
def model() -> FaultyModel:
    return FaultyModel()


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, index_dir: Path, model: FaultyModel
) -> Iterator[tuple[RunningServer, AnswerService]]:
    agents = {
        **default_agents(),
        "faulty": AgentConfig(name="faulty", model="faulty", first_token_seconds=1.0),
    }
    service = AnswerService(
        agents,
        models={"faulty": model},
        database=tmp_path_factory.mktemp("faults") / "answers.sqlite3",
        index_dir=index_dir,
    )
    app = create_app(service, auth=Auth.token(TOKEN), body_seconds=1.0)
    running = serve_in_thread(app, timeouts=Timeouts(header_seconds=1.0, keep_alive_seconds=1))
    yield running, service
    model.release.set()
    running.stop()


def client(server: tuple[RunningServer, AnswerService]) -> httpx.Client:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    return httpx.Client(base_url=server[0].url, headers=headers, timeout=30)


def raw(server: tuple[RunningServer, AnswerService]) -> socket.socket:
    running = server[0]
    sock = socket.create_connection((running.host, running.port), timeout=10)
    return sock


def closed_within(sock: socket.socket, seconds: float) -> bytes:
    """What the server sent before closing ``sock``; fails if it stays open for ``seconds``."""
    sock.settimeout(seconds)
    received = b""
    started = time.monotonic()
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            pytest.fail(f"the connection was still open after {seconds} s")
        if not chunk:
            break
        received += chunk
    assert time.monotonic() - started < seconds
    return received


def test_a_connection_that_sends_nothing_is_closed(server: Any) -> None:
    with raw(server) as sock:
        assert closed_within(sock, 5) == b""


def test_headers_sent_too_slowly_are_cut_off(server: Any) -> None:
    # One byte every 0.1 s: each byte is on time, the headers as a whole are not.
    trickle = b"GET /api/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100
    started = time.monotonic()
    with raw(server) as sock:
        for byte in trickle:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break  # the server closed the connection under us
            time.sleep(0.1)
        assert closed_within(sock, 5) == b""
    assert time.monotonic() - started < 8


def test_a_body_sent_too_slowly_is_408(server: Any) -> None:
    head = (
        "POST /api/question HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
        "Content-Length: 500\r\n\r\n"
    )
    with raw(server) as sock:
        sock.sendall(head.encode() + b'{"question": ')
        answer = closed_within(sock, 5)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"request_timeout" in answer


def test_an_idle_kept_alive_connection_is_closed(server: Any) -> None:
    request = b"GET /api/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with raw(server) as sock:
        sock.sendall(request)
        sock.settimeout(5)
        first = sock.recv(1 << 20)
        assert first.startswith(b"HTTP/1.1 200 ")
        time.sleep(0.2)
        closed_within(sock, 5)  # idle past keep_alive_seconds


def test_a_json_client_that_goes_away_cancels_the_answer_and_saves_nothing(
    server: Any, model: FaultyModel
) -> None:
    service: AnswerService = server[1]
    body = json.dumps({"agent": "faulty", "question": f"{QUESTION} {HOLD}"}).encode()
    head = (
        "POST /api/question HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    model.started.clear()
    model.cancelled.clear()
    with raw(server) as sock:
        sock.sendall(head + body)
        assert model.started.wait(20)
    assert model.cancelled.wait(10), "the answer went on after its client left"
    time.sleep(0.3)

    async def turns_asked() -> list[str]:
        return [entry.prompt for entry in await service.logs.entries()]

    logged = asyncio.run(turns_asked())
    assert not any(HOLD in prompt for prompt in logged)  # nothing saved, nothing logged


def test_a_hung_model_is_504_and_the_stream_says_model_timeout(server: Any) -> None:
    with client(server) as http:
        started = time.monotonic()
        answer = http.post("/api/question", json={"agent": "faulty", "question": f"Fee {HANG}"})
        assert time.monotonic() - started < 10
        assert answer.status_code == 504
        assert answer.json()["error"]["code"] == "model_timeout"
        events = ask_sse(http, {"agent": "faulty", "question": f"{QUESTION} {HANG}"})
    assert events[-1].event == "error"
    assert ErrorEvent.model_validate_json(events[-1].data).code == "model_timeout"


def test_an_unavailable_model_is_503_with_retry_after(server: Any) -> None:
    with client(server) as http:
        answer = http.post("/api/question", json={"agent": "faulty", "question": UNAVAILABLE})
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "7"
    assert answer.json()["error"]["code"] == "model_unavailable"
    assert "overloaded" not in answer.text  # upstream details stay in the log


def test_a_second_turn_while_one_runs_is_409_at_once(server: Any, model: FaultyModel) -> None:
    with client(server) as http:
        first = http.post("/api/question", json={"agent": "faulty", "question": QUESTION}).json()
        follow = {"question": f"And {HOLD}?", "conversation_id": first["conversation_id"]}
        model.started.clear()
        model.release.clear()
        results: list[httpx.Response] = []
        runner = threading.Thread(
            target=lambda: results.append(http.post("/api/question", json=follow))
        )
        runner.start()
        assert model.started.wait(20)
        started = time.monotonic()
        with client(server) as other:
            loser = other.post("/api/question", json={**follow, "question": "Meanwhile?"})
        assert time.monotonic() - started < 5
        model.release.set()
        runner.join(30)
    assert loser.status_code == 409
    assert loser.json()["error"]["code"] == "conflict"
    assert results[0].status_code == 200
    assert results[0].json()["turn"] == 2


def test_the_server_keeps_idle_connections_longer_than_clients_do() -> None:
    # The cause of the rare ReadError under load: with both at 5 s, the server closed idle
    # kept-alive connections just as a client reused them. The server must outwait clients.
    from citelab._net import DEFAULT_TIMEOUTS

    client_expiry = httpx.Limits().keepalive_expiry
    assert client_expiry is not None
    assert DEFAULT_TIMEOUTS.keep_alive_seconds >= 2 * client_expiry
