"""How serve-model writes a stream: pieces ready at once share a write, slow ones keep pace."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from citelab.models import ExtractiveModel, RunningServer, serve_in_thread

from .._builders import DATA_SCIENCE, FEES, system, user

BODY = {
    "model": "extractive",
    "messages": [system(DATA_SCIENCE, FEES), user("How much are tuition fees?")],
    "stream": True,
}
PIECE_DELAY = 0.05


@pytest.fixture(scope="module")
def fast() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel()) as server:
        yield server


@pytest.fixture(scope="module")
def slow() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel(piece_delay=PIECE_DELAY)) as server:
        yield server


def _writes(server: RunningServer) -> list[tuple[float, bytes]]:
    """Each body chunk as the client received it, with the seconds since the request."""
    started = time.monotonic()
    with httpx.stream("POST", f"{server.base_url}/chat/completions", json=BODY, timeout=10) as r:
        assert r.status_code == 200
        return [(time.monotonic() - started, chunk) for chunk in r.iter_raw()]


def _events(writes: list[tuple[float, bytes]]) -> list[str]:
    text = b"".join(chunk for _, chunk in writes).decode()
    return [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]


def _text(events: list[str]) -> str:
    chunks = [json.loads(event) for event in events if event != "[DONE]"]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)


def test_pieces_ready_at_once_share_a_write_and_stay_separate_events(
    fast: RunningServer,
) -> None:
    writes = _writes(fast)
    events = _events(writes)
    pieces = [e for e in events if e != "[DONE]" and json.loads(e)["choices"][0]["delta"]]
    assert len(pieces) > 10  # role, then one event per word: nothing merged
    assert events[-1] == "[DONE]"
    assert len(writes) <= 3  # ...but written together
    assert _text(events).startswith("Tuition fees for master's programmes")


def test_pieces_that_take_time_are_sent_as_they_come(
    slow: RunningServer, fast: RunningServer
) -> None:
    writes = _writes(slow)
    events = _events(writes)
    words = len([e for e in events if e != "[DONE]" and "content" in e]) - 1  # less the role
    assert len(writes) > 3  # not held back to be written at the end
    first_word_at = next(at for at, chunk in writes if b'"content":"Tuition' in chunk)
    last_at = writes[-1][0]
    assert last_at - first_word_at >= PIECE_DELAY * (words - 2)
    assert _text(events) == _text(_events(_writes(fast)))
