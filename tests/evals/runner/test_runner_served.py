"""The runner against a model behind the OpenAI API: whole completions unless asked to stream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citelab.cli import main
from citelab.evals import run
from citelab.models import ExtractiveModel, RunningServer, build_app
from citelab.models.serve._server import serve_app_in_thread

CASES = [
    {"id": "fee", "agent": "university", "turns": [{"question": "How much is the semester fee?"}]},
    {
        "id": "robotics",
        "agent": "university",
        "turns": [{"question": "When do applications for the Robotics MSc close?"}],
    },
]


class StreamFlags:
    """Wraps an app and records the ``stream`` flag of every chat-completions request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[bool] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].endswith("/chat/completions"):
            await self.app(scope, receive, send)
            return
        messages = [await receive()]
        while messages[-1].get("more_body"):
            messages.append(await receive())
        body = b"".join(message.get("body", b"") for message in messages)
        self.seen.append(bool(json.loads(body).get("stream")))

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


@pytest.fixture(scope="module")
def flags() -> StreamFlags:
    return StreamFlags(build_app(ExtractiveModel()))


@pytest.fixture(scope="module")
def server(flags: StreamFlags) -> Iterator[RunningServer]:
    with serve_app_in_thread(flags) as running:
        yield running


def _suite(folder: Path, server: RunningServer, options: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cases.jsonl").write_text(
        "".join(json.dumps(case) + "\n" for case in CASES), encoding="utf-8"
    )
    suite = folder / "served.toml"
    suite.write_text(
        'name = "served"\ndatasets = ["cases.jsonl"]\nscorers = ["no_answer"]\n'
        f'models = [{{ spec = "openai:extractive", label = "served", options = '
        f'{{ base_url = "{server.base_url}", max_retries = 0{options} }} }}]\n',
        encoding="utf-8",
    )
    return suite


def _evaluate(
    tmp_path: Path, server: RunningServer, flags: StreamFlags, options: str = "", **kwargs: Any
) -> tuple[dict[str, Any], list[bool], list[str]]:
    flags.seen.clear()
    out = tmp_path / "out"
    run(_suite(tmp_path, server, options), out_dir=out, progress=False, **kwargs)
    log = json.loads((out / "run.json").read_text(encoding="utf-8"))
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    texts = [r["turns"][0]["text"] for r in sorted(records, key=lambda r: r["case_id"])]
    return log, list(flags.seen), texts


def test_an_evaluation_asks_for_whole_completions(
    tmp_path: Path, server: RunningServer, flags: StreamFlags
) -> None:
    log, seen, texts = _evaluate(tmp_path, server, flags)
    assert seen
    assert not any(seen)
    assert log["stream_calls"] is False
    assert log["model_streaming"] == {"served": False}
    assert all("[1]" in text for text in texts)
    assert 0 < log["execution_cpu_seconds"] < 10 * log["execution_seconds"]


def test_streamed_calls_give_the_same_answers(
    tmp_path: Path, server: RunningServer, flags: StreamFlags
) -> None:
    _, _, whole = _evaluate(tmp_path / "whole", server, flags, cache=False)
    log, seen, streamed = _evaluate(tmp_path / "streamed", server, flags, stream_calls=True)
    assert seen
    assert all(seen)
    assert log["stream_calls"] is True
    assert log["model_streaming"] == {"served": True}
    assert streamed == whole


def test_a_model_spec_that_says_stream_keeps_its_choice(
    tmp_path: Path, server: RunningServer, flags: StreamFlags
) -> None:
    log, seen, _ = _evaluate(tmp_path, server, flags, options=", stream = true")
    assert seen
    assert all(seen)
    assert log["stream_calls"] is False
    assert log["model_streaming"] == {"served": True}


def test_the_command_line_can_stream_the_calls(
    tmp_path: Path, server: RunningServer, flags: StreamFlags
) -> None:
    flags.seen.clear()
    out = tmp_path / "out"
    suite = _suite(tmp_path, server)
    arguments = ["eval", "--suite", str(suite), "--out", str(out), "--quiet", "--no-cache"]
    assert main([*arguments, "--stream-calls"]) == 0
    assert flags.seen
    assert all(flags.seen)
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["stream_calls"] is True
