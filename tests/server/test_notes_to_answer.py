"""From a folder of notes and a model endpoint to a cited answer in the chat: one command.

The README's path for a new user: ``citelab serve --corpus notes/ --model openai:<model>``
(or ``anthropic:<model>``), with the endpoint in ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``.
Here the endpoint is ``citelab serve-model`` on loopback (the real SDKs talk to it over real
HTTP), and ``citelab serve`` runs as a child process, as a user runs it; the chat page asks
through the same ``/api/question`` call used below.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citelab.cli import main
from citelab.models import ExtractiveModel, RunningServer, serve_in_thread

from .processes import ServeProcess


@pytest.fixture(scope="module")
def endpoint() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel(name="notes-model")) as server:
        yield server


def _notes(root: Path) -> Path:
    (root / "trips").mkdir(parents=True)
    (root / "trips" / "iceland.md").write_text(
        "# Iceland trip\n\nThe ferry to Heimaey leaves Landeyjahöfn at 9:30 every morning. "
        "Tickets cost 1,800 krónur per adult.\n",
        encoding="utf-8",
    )
    (root / "garden.txt").write_text("The tomatoes need water every second day.\n", "utf-8")
    return root


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_folder_and_an_endpoint_give_a_cited_answer(
    tmp_path: Path, endpoint: RunningServer, api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = _notes(tmp_path / "notes")
    if api == "openai":
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)
    else:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", endpoint.base_url.removesuffix("/v1"))
    process = ServeProcess(tmp_path, "--corpus", str(notes), "--model", f"{api}:notes-model")
    try:
        printed = process.announcement()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\w+)$", printed[1])
        assert found is not None, printed
        answer = httpx.post(
            f"{found[1]}/api/question",
            json={"question": "When does the ferry to Heimaey leave?"},
            headers={"Authorization": f"Bearer {found[2]}"},
            timeout=60,
        )
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert "leaves Landeyjahöfn at 9:30 every morning [1]." in body["text"]
        [source] = body["references"]
        assert source["title"] == "Iceland trip"
        assert source["url"] == "trips/iceland.md"
    finally:
        assert process.stop() == 0


def test_ask_answers_from_a_folder_in_one_command(
    tmp_path: Path, endpoint: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = _notes(tmp_path / "notes")
    options = f'{{"base_url": "{endpoint.base_url}"}}'
    code = main(
        [
            "ask",
            "How often do the tomatoes need water?",
            "--corpus",
            str(notes),
            "--model",
            "openai:notes-model",
            "--model-options",
            options,
            "--db",
            str(tmp_path / "db"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "The tomatoes need water every second day [1]." in out
    assert re.search(r"\[1\] garden( \([^)]*\))? <garden.txt>", out), out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "gpt-nope"], "unknown model 'gpt-nope'; known models: anthropic:<model>"),
        (["--corpus", "no/such/folder"], "no/such/folder: no such file or folder"),
        (["--model-options", "{}"], "--model-options: give --model too"),
        (["--model", "extractive", "--model-options", "[1]"], "must be a JSON object"),
    ],
)
def test_bad_model_and_corpus_values_are_named(
    tmp_path: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", "Hello?", "--db", str(tmp_path / "db"), *args]) == 2
    assert message in capsys.readouterr().err


def test_serve_names_a_bad_file_in_the_folder_before_it_starts(tmp_path: Path) -> None:
    notes = _notes(tmp_path / "notes")
    (notes / "scan.pdf").write_bytes(b"%PDF-1.4 not really")
    process = ServeProcess(tmp_path, "--corpus", str(notes))
    code = process.close()
    printed = "".join(iter(process.lines.get, ""))
    assert code == 2
    assert "scan.pdf: unreadable PDF" in printed
