"""Loud failures before a run starts, and resuming after the endpoint changed, over real HTTP.

The model is ``citelab serve-model``'s app (the extractive model behind the OpenAI API) on a
loopback port, asked through the real ``openai`` SDK.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

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


class Counted:
    """Counts the chat-completions requests an app answers; ``models_api=False`` answers
    404 for ``/v1/models`` and ``/v1/models/{id}`` (servers without a models API exist)."""

    def __init__(self, app: ASGIApp, *, models_api: bool = True) -> None:
        self.app = app
        self.models_api = models_api
        self.chats = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path.endswith("/chat/completions"):
            self.chats += 1
        if scope["type"] == "http" and "/models" in path and not self.models_api:
            await JSONResponse({"detail": "Not Found"}, status_code=404)(scope, receive, send)
            return
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def first() -> Iterator[tuple[RunningServer, Counted]]:
    app = Counted(build_app(ExtractiveModel()))
    with serve_app_in_thread(app) as running:
        yield running, app


@pytest.fixture(scope="module")
def second() -> Iterator[tuple[RunningServer, Counted]]:
    app = Counted(build_app(ExtractiveModel()), models_api=False)
    with serve_app_in_thread(app) as running:
        yield running, app


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps(case) + "\n" for case in CASES), encoding="utf-8"
    )
    path = tmp_path / "served.toml"
    path.write_text(
        'name = "served"\ndatasets = ["cases.jsonl"]\nscorers = ["no_answer"]\n'
        'models = [{ spec = "openai:extractive", options = { max_retries = 0 } }]\n',
        encoding="utf-8",
    )
    return path


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_endpoint_fails_before_the_progress_bar(
    suite: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    out = suite.parent / "out"
    code = main(["eval", "--suite", str(suite), "--out", str(out), "--model", "openai:gpt-4o"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"openai:gpt-4o: cannot reach {url}" in err
    assert "%|" not in err  # no progress bar was drawn
    assert not (out / "records.jsonl").exists()  # and no case was run


def test_a_model_the_endpoint_does_not_serve_fails_before_the_progress_bar(
    suite: Path,
    first: tuple[RunningServer, Counted],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, app = first
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    chats = app.chats
    out = suite.parent / "out"
    code = main(["eval", "--suite", str(suite), "--out", str(out), "--model", "openai:gpt-4o"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"model 'gpt-4o' does not exist at {server.base_url} (it serves: 'extractive')" in err
    assert "%|" not in err
    assert app.chats == chats


def test_without_a_models_api_one_tiny_completion_decides(
    suite: Path,
    second: tuple[RunningServer, Counted],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, _ = second
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    out = suite.parent / "out"
    code = main(["eval", "--suite", str(suite), "--out", str(out), "--model", "openai:gpt-4o"])
    assert code == 2
    assert "model 'gpt-4o' does not exist at" in capsys.readouterr().err
    assert main(["eval", "--suite", str(suite), "--out", str(out), "--quiet"]) == 0


def test_records_made_at_another_endpoint_are_run_again(
    suite: Path,
    first: tuple[RunningServer, Counted],
    second: tuple[RunningServer, Counted],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = suite.parent / "out"
    monkeypatch.setenv("OPENAI_BASE_URL", first[0].base_url)
    run(suite, out_dir=out, progress=False)
    monkeypatch.setenv("OPENAI_BASE_URL", second[0].base_url)
    chats = second[1].chats
    result = run(suite, out_dir=out, progress=False)
    units = json.loads((out / "run.json").read_text(encoding="utf-8"))["units"]
    assert (units["ran"], units["rerun_changed"], units["resumed"]) == (2, 2, 0)
    # Not answered from the first endpoint's cache: the second endpoint was asked.
    assert second[1].chats > chats + 1
    assert result.errors().empty
    # Told to keep them, recorded cases stand even for an endpoint nobody listens on.
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    kept = run(suite, out_dir=out, progress=False, reuse_changed=True)
    units = json.loads((out / "run.json").read_text(encoding="utf-8"))["units"]
    assert (units["ran"], units["resumed"]) == (0, 2)
    assert kept.errors().empty
