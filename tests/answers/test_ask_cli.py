"""``citelab ask``: the answer service from the shell."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from citelab.cli import main
from citelab.events import DoneEvent


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CITELAB_CACHE_DIR", str(tmp_path / "cache"))


def test_ask_prints_the_answer_and_its_sources(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "ask.sqlite3")
    assert main(["ask", "How do I reset my password?", "--agent", "helpcentre", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert "Forgot password?" in out
    assert (
        "Sources:\n  [1] Reset your password (Account) "
        "<https://help.ledgerly.example/en/articles/101>" in out
    )
    assert "--conversation" in err


def test_ask_json_is_a_done_event_and_follow_ups_continue_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "ask.sqlite3")
    main(["ask", "How many ECTS credits is the Data Science BSc?", "--json", "--db", db])
    first = DoneEvent.model_validate(json.loads(capsys.readouterr().out))
    assert first.turn == 1
    assert first.references[0].uri == "entity:program/data-science-bsc"
    follow_up = ["ask", "And the MSc?", "--conversation", first.conversation_id, "--json"]
    main([*follow_up, "--db", db])
    second = DoneEvent.model_validate(json.loads(capsys.readouterr().out))
    assert (second.conversation_id, second.turn) == (first.conversation_id, 2)
    # A new source continues the conversation's count: the MSc is [2] after the BSc's [1].
    msc = "How many ECTS credits is the Data Science MSc worth?"
    main(["ask", msc, "--conversation", first.conversation_id, "--db", db])
    out = capsys.readouterr().out
    assert "120 ECTS credits" in out
    assert "[2]." in out
    assert "Sources:\n  [2] Data Science (MSc) <" in out


def test_ask_streams_when_asked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "ask.sqlite3")
    main(["ask", "How do I reset my password?", "--agent", "helpcentre", "--stream", "--db", db])
    out = capsys.readouterr().out
    assert out.count("Forgot password?") == 1  # streamed once, not printed again
    assert out.index("Forgot password?") < out.index("Sources:")


def test_ask_as_a_user_with_roles_reads_restricted_pages(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "ask.sqlite3")
    question = "Where do employees submit business expenses?"
    main(["ask", question, "--agent", "intranet", "--db", db])
    assert "Harrier" not in capsys.readouterr().out
    main(["ask", question, "--agent", "intranet", "--user", "carol", "--role", "staff", "--db", db])
    assert "Harrier" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ask", "  "], "question: must not be empty"),
        (
            ["ask", "Hi", "--agent", "ghost"],
            "unknown agent 'ghost'; the agents are: default, helpcentre, intranet, university",
        ),
        (["ask", "Hi", "--conversation", "nope"], "conversation 'nope' not found"),
    ],
)
def test_ask_errors_exit_2_with_the_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    assert main([*argv, "--db", str(tmp_path / "ask.sqlite3")]) == 2
    assert message in capsys.readouterr().err


def _citelab(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``citelab`` command in a child process, as a user runs it."""
    env = {**os.environ, "CITELAB_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "citelab", *args]
    return subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.slow
def test_ask_answers_from_a_users_notes_only_what_they_hold(tmp_path: Path) -> None:
    """The notes (tests/user_notes) hold a ferry's ticket prices and a harbour car park's
    price, but no semester fee and no museum: those get the no-answer, not a price."""
    notes = Path(__file__).parents[1] / "user_notes"
    corpus = tmp_path / "notes.jsonl"
    assert _citelab(tmp_path, "corpus", "import", str(notes), "-o", str(corpus)).returncode == 0
    db = str(tmp_path / "db")
    for question in ("When is the harbour museum open?", "How much is the semester fee?"):
        done = _citelab(tmp_path, "ask", "--corpus", str(corpus), question, "--db", db)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "I could not find an answer to that in the sources I have.\n"
    asked = "How much does parking at the harbour cost?"
    done = _citelab(tmp_path, "ask", "--corpus", str(corpus), asked, "--db", db)
    assert done.stdout.startswith("Parking at the harbour costs 2 euros per hour [1].\n")
    assert "Sources:\n  [1] Parking at the harbour (harbour-parking.md) <harbour-parking.md>" in (
        done.stdout
    )


def test_a_corpus_folder_with_a_bad_file_says_what_to_run_and_that_works(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ferry.md").write_text(
        "# Ferry\n\nThe ferry leaves pier 3 at 9 am every day.\n", encoding="utf-8"
    )
    (notes / "old.md").write_bytes("Caf\xe9 menu".encode("latin-1"))  # not UTF-8
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "ask.sqlite3")
    question = "When does the ferry leave?"
    assert main(["ask", question, "--corpus", str(notes), "--db", db]) == 2
    err = capsys.readouterr().err
    assert "old.md: not UTF-8 text" in err
    hinted = re.search(r"`citelab (corpus import [^`]+)`", err)
    assert hinted is not None, err
    assert "--skip-bad" in hinted.group(1)
    assert "pass --skip-bad" not in err  # which ask does not accept
    assert main(shlex.split(hinted.group(1))) == 0
    corpus = re.search(r"\(--corpus ([^)\s]+)\)", err)
    assert corpus is not None, err
    capsys.readouterr()
    assert main(["ask", question, "--corpus", corpus.group(1), "--db", db]) == 0
    out = capsys.readouterr().out
    assert "9 am" in out


def test_ask_gives_no_answer_to_a_question_about_something_the_notes_do_not_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ferry.md").write_text(
        "# Ferry to the island\n\nThe ferry to the island leaves the harbour at 7:30 and "
        "returns at 18:00. A return ticket costs 12 euros.\n",
        encoding="utf-8",
    )
    (notes / "car-park.md").write_text(
        "# Car park\n\nThe harbour car park is open from 6:00 to 23:00. Parking costs 1.50 "
        "euros per hour.\n",
        encoding="utf-8",
    )
    db = str(tmp_path / "ask.sqlite3")
    assert main(["ask", "When is the harbour museum open?", "--corpus", str(notes), "--json",
                 "--db", db]) == 0  # fmt: skip
    done = DoneEvent.model_validate_json(capsys.readouterr().out)
    assert done.text == "I could not find an answer to that in the sources I have."
    assert done.references == []
    assert main(["ask", "When is the harbour car park open?", "--corpus", str(notes), "--db",
                 db]) == 0  # fmt: skip
    assert "open from 6:00 to 23:00 [1]" in capsys.readouterr().out
