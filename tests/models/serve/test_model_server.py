"""The OpenAI-compatible app on the wire, and the ``citelab serve-model`` command."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from citelab import ConfigError
from citelab.cli import main
from citelab.models import (
    ExtractiveModel,
    ModelDelta,
    RunningServer,
    ScriptedModel,
    serve_in_thread,
)
from citelab.models.serve._server import is_loopback, listening_socket

from .._builders import DATA_SCIENCE, FEES, RAG_SEARCH, system, user

ANSWERABLE = [system(DATA_SCIENCE, FEES), user("How much are tuition fees?")]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel()) as running:
        yield running


def _post(server: RunningServer, body: object) -> httpx.Response:
    return httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10)


def _events(response: httpx.Response) -> list[str]:
    return [
        line[len("data: ") :] for line in response.text.splitlines() if line.startswith("data: ")
    ]


def test_models_are_listed_and_looked_up(server: RunningServer) -> None:
    listing = httpx.get(f"{server.base_url}/models", timeout=10).json()
    assert [card["id"] for card in listing["data"]] == ["extractive"]
    assert httpx.get(f"{server.base_url}/models/extractive", timeout=10).status_code == 200
    missing = httpx.get(f"{server.base_url}/models/gpt-9", timeout=10)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "model_not_found"


def test_a_stream_is_sse_chunks_ending_with_done(server: RunningServer) -> None:
    response = _post(server, {"model": "extractive", "messages": ANSWERABLE, "stream": True})
    assert response.headers["content-type"].startswith("text/event-stream")
    events = _events(response)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "stop"}
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert text.startswith("Tuition fees for master's programmes")
    assert "suggested" not in response.text


def test_a_streamed_tool_call_sends_its_header_once(server: RunningServer) -> None:
    messages = [system(DATA_SCIENCE), user("Can dogs enter the swimming pool?")]
    body = {"model": "extractive", "messages": messages, "tools": [RAG_SEARCH], "stream": True}
    chunks = [json.loads(e) for e in _events(_post(server, body))[:-1]]
    pieces = [p for c in chunks for p in c["choices"][0]["delta"].get("tool_calls", [])]
    assert pieces[0]["id"] == "call_1"
    assert pieces[0]["type"] == "function"
    assert pieces[0]["function"]["name"] == "rag_search"
    assert all("id" not in p and "name" not in p["function"] for p in pieces[1:])
    arguments = json.loads("".join(p["function"]["arguments"] for p in pieces))
    assert arguments["query"].startswith("dogs enter swimming pool")
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_a_whole_completion_has_the_openai_shape(server: RunningServer) -> None:
    body = _post(server, {"model": "extractive", "messages": ANSWERABLE}).json()
    assert body["object"] == "chat.completion"
    (choice,) = body["choices"]
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"].endswith("[3].")


def test_text_content_parts_are_joined(server: RunningServer) -> None:
    parts = [{"type": "text", "text": "How much are "}, {"type": "text", "text": "tuition fees?"}]
    messages = [system(FEES), {"role": "user", "content": parts}]
    body = _post(server, {"model": "extractive", "messages": messages}).json()
    assert body["choices"][0]["message"]["content"].startswith("Tuition fees")


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"model": "extractive", "messages": []}, "messages: List should have at least 1 item"),
        ({"model": "extractive", "messages": [{"role": "wizard", "content": "hi"}]}, "messages.0"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "model: Field required"),
    ],
)
def test_a_bad_request_is_400_and_says_where(
    server: RunningServer, body: object, problem: str
) -> None:
    response = _post(server, body)
    assert response.status_code == 400
    assert problem in response.json()["error"]["message"]


def test_a_body_that_is_not_json_is_400(server: RunningServer) -> None:
    response = httpx.post(f"{server.base_url}/chat/completions", content=b"{oops", timeout=10)
    assert response.status_code == 400
    assert "not JSON" in response.json()["error"]["message"]


def test_a_failing_model_is_500_or_an_error_event() -> None:
    scripted = ScriptedModel(
        [
            {"text": "x", "error_after": 0, "error": "no GPU"},
            {"text": ["a ", "b"], "error_after": 1, "error": "lost it"},
        ]
    )
    with serve_in_thread(scripted) as running:
        whole = _post(running, {"model": "scripted", "messages": [user("q")]})
        streamed = _post(running, {"model": "scripted", "messages": [user("q")], "stream": True})
    assert whole.status_code == 500
    assert whole.json()["error"]["message"] == "no GPU"
    events = _events(streamed)
    assert json.loads(events[-1])["error"]["message"] == "lost it"
    assert "[DONE]" not in events


class ThinkingModel(ExtractiveModel):
    """The extractive model, taking ``seconds`` before it answers."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelDelta]:
        await asyncio.sleep(self.seconds)
        async for delta in super().stream(*args, **kwargs):
            yield delta


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_latency_is_how_long_every_call_takes_the_models_time_included(stream: bool) -> None:
    # 0.4 s of latency with a model that takes 0.3 s: about 0.4 s, not 0.7 s (the model's
    # time is part of an endpoint's latency, so requests that arrive together end together).
    body = {"model": "extractive", "messages": ANSWERABLE, "stream": stream}
    with serve_in_thread(ThinkingModel(0.3), latency_ms=400) as running:
        _post(running, body)  # connect first
        started = time.monotonic()
        response = _post(running, body)
        took = time.monotonic() - started
    assert response.status_code == 200
    assert 0.4 <= took < 0.65
    with serve_in_thread(ThinkingModel(0.3)) as running:
        started = time.monotonic()
        assert _post(running, body).status_code == 200
        assert time.monotonic() - started >= 0.3  # no latency: the model's own time


def test_loopback_is_recognised() -> None:
    assert all(is_loopback(h) for h in ["127.0.0.1", "127.8.0.1", "::1", "localhost"])
    assert not any(is_loopback(h) for h in ["0.0.0.0", "192.0.2.7", "::", "example.test"])


def test_keep_alive_requests_are_not_held_back_by_nagle(server: RunningServer) -> None:
    # A socket created without proto=TCP made asyncio skip TCP_NODELAY: ~40 ms per request.
    with listening_socket() as sock:
        assert sock.proto == socket.IPPROTO_TCP
    with httpx.Client(timeout=10) as client:
        client.get(f"{server.base_url}/models")
        durations = []
        for _ in range(7):
            started = time.perf_counter()
            client.get(f"{server.base_url}/models")
            durations.append(time.perf_counter() - started)
    assert sorted(durations)[3] < 0.02


def test_a_busy_port_is_reported() -> None:
    with listening_socket() as taken, pytest.raises(ConfigError, match="in use"):
        listening_socket(port=taken.getsockname()[1])


def test_the_command_serves_until_stopped() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [
        sys.executable,
        "-m",
        "citelab",
        "serve-model",
        "--port",
        "0",
        "--options",
        '{"max_sentences": 1}',
    ]
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=Path(__file__).parent,
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert "serving model 'extractive' at http://127.0.0.1:" in line
            base_url = line.split(" at ")[1].strip()
            listing = httpx.get(f"{base_url}/models", timeout=10).json()
            assert listing["data"][0]["id"] == "extractive"
        finally:
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=10) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--options", "{oops"], "--options: not JSON"),
        (["--options", "[1]"], "--options: must be a JSON object"),
        (["--model", "scripted"], "needs rounds"),
        (["--model", "gpt-9"], "unknown model 'gpt-9'"),
        (["--latency-ms", "-5"], "--latency-ms: must be >= 0"),
    ],
)
def test_the_command_rejects_bad_arguments(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve-model", "--port", "0", *argv]) == 2
    assert message in capsys.readouterr().err
