"""``citelab serve`` as a user runs it: a process that prints the address with a token."""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citelab.cli import main
from citelab.cli._common import (
    add_address_arguments,
    add_agents_arguments,
    add_reader_arguments,
    default_agent,
    reader_from,
    warn_if_reachable,
)
from citelab.corpus import Reader

from .processes import ServeProcess

ALICE = "alice-demo-token-2f9c41"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[list[ServeProcess]]:
    started: list[ServeProcess] = []
    yield started
    for process in started:
        if process.process.poll() is None:
            process.process.kill()
        process.close()


def test_serve_prints_a_loopback_address_with_a_random_token(
    tmp_path: Path, serve: list[ServeProcess]
) -> None:
    process = ServeProcess(tmp_path)
    serve.append(process)
    printed = process.announcement()
    found = re.search(r"local: (http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{48}))$", printed[1])
    assert found is not None, printed
    base, token = f"http://127.0.0.1:{found.group(2)}", found.group(3)

    opened = httpx.get(found.group(1))
    assert opened.status_code == 303
    answer = httpx.post(
        f"{base}/api/question",
        json={"question": "How much is the semester fee?"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert answer.status_code == 200
    assert "312 euros" in answer.json()["text"]
    assert httpx.post(f"{base}/api/question", json={"question": "Hi"}).status_code == 401
    assert process.stop() == 0


def test_serve_with_a_users_file_prints_one_address_per_user(
    tmp_path: Path, serve: list[ServeProcess]
) -> None:
    users = tmp_path / "users.yaml"
    users.write_text(f"users:\n  - id: alice\n    token: {ALICE}\n    roles: [hr]\n")
    process = ServeProcess(tmp_path, "--users", str(users), "--anonymous", "--agent", "intranet")
    serve.append(process)
    printed = process.announcement()
    assert printed[1].startswith("  anonymous: http://127.0.0.1:")
    assert printed[2].startswith(f"  users of {users} (alice): http://127.0.0.1:")
    assert printed[2].endswith("/?token=<their token>")
    assert len(printed) == 4  # no random local token: the file says who may ask
    assert ALICE not in "\n".join(printed)  # a user's token is theirs: never printed
    base = printed[0].removeprefix("citelab serve: serving on ").rstrip("/")
    page = httpx.get(f"{base}/")
    assert page.status_code == 200
    assert 'data-agent="intranet"' in page.text
    assert process.stop() == 0


@pytest.mark.parametrize("source", ["environment", "file"])
def test_the_token_can_come_from_the_environment_or_a_file(
    tmp_path: Path, serve: list[ServeProcess], monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    token = "from-a-safe-place-0123456789"
    args: list[str] = []
    if source == "environment":
        monkeypatch.setenv("CITELAB_TOKEN", token)
    else:
        (tmp_path / "token").write_text(token + "\n")
        args = ["--token-file", str(tmp_path / "token")]
    process = ServeProcess(tmp_path, *args)
    serve.append(process)
    printed = process.announcement()
    assert printed[1].startswith("  local: http://127.0.0.1:")
    assert printed[1].endswith(f"/?token={token}")
    assert token not in " ".join(process.process.args)  # not in the process list
    base = printed[0].removeprefix("citelab serve: serving on ").rstrip("/")
    asked = httpx.post(
        f"{base}/api/question",
        json={"question": "How much is the semester fee?"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert asked.status_code == 200
    assert process.stop() == 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--token-file", "/nonexistent/token"], "--token-file /nonexistent/token: No such file"),
        (["--token", "short"], "token: Value error, must be at least 16 characters"),
        (["--max-body-bytes", "0"], "--max-body-bytes: must be a positive number"),
        (["--answer-deadline", "0"], "--answer-deadline and --first-token-timeout must be"),
        (["--agent", "nobody"], "default agent 'nobody' is not configured"),
    ],
)
def test_serve_refuses_bad_options_with_a_clear_message(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["serve", "--port", "0", "--db", str(tmp_path / "db"), *args]) == 2
    assert says in capsys.readouterr().err


def test_the_shared_options_become_a_reader_and_an_agent() -> None:
    parser = argparse.ArgumentParser()
    add_agents_arguments(parser)
    add_reader_arguments(parser)
    add_address_arguments(parser, port=8000)
    args = parser.parse_args(["--user", "alice", "--role", "hr", "--role", "staff", "--lang", "de"])
    assert reader_from(args) == Reader(
        user_id="alice", roles=frozenset({"hr", "staff"}), langcode="de"
    )
    assert (args.host, args.port, args.agents, args.db) == ("127.0.0.1", 8000, None, None)
    anonymous = reader_from(parser.parse_args([]))
    assert (anonymous.user_id, anonymous.roles, anonymous.langcode) == (None, frozenset(), "en")
    assert default_agent(None, {"intranet": 1, "default": 2}) == "default"
    assert default_agent(None, {"intranet": 1, "university": 2}) == "intranet"
    assert default_agent("university", {"intranet": 1, "university": 2}) == "university"


def test_only_a_reachable_address_is_warned_about(capsys: pytest.CaptureFixture[str]) -> None:
    assert warn_if_reachable("serve", "127.0.0.1", "careful")
    assert capsys.readouterr().err == ""
    assert not warn_if_reachable("serve", "0.0.0.0", "careful")
    assert capsys.readouterr().err == (
        "citelab serve: warning: 0.0.0.0 is reachable from other machines; careful\n"
    )


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_clean_stop_leaves_the_database_file_complete_on_its_own(
    tmp_path: Path, serve: list[ServeProcess], stop: signal.Signals
) -> None:
    process = ServeProcess(tmp_path)
    serve.append(process)
    found = re.search(r"local: http://127\.0\.0\.1:(\d+)/\?token=(\w+)$", process.announcement()[1])
    assert found is not None
    answer = httpx.post(
        f"http://127.0.0.1:{found.group(1)}/api/question",
        json={"question": "How much is the semester fee?"},
        headers={"Authorization": f"Bearer {found.group(2)}"},
        timeout=60,
    )
    assert answer.status_code == 200
    process.process.send_signal(stop)
    assert process.close() == 0
    # A backup that copies the one file (no -wal beside it) must hold the conversation.
    copy = tmp_path / "copy" / "answers.sqlite3"
    copy.parent.mkdir()
    shutil.copyfile(tmp_path / "db", copy)
    with contextlib.closing(sqlite3.connect(copy)) as conn:
        rows = conn.execute("SELECT conversation_id FROM conversations").fetchall()
    assert rows == [(answer.json()["conversation_id"],)]


def test_a_bad_database_is_refused_at_start_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"this is not a database at all, only some text\n" * 100)
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    cases = [
        (tmp_path, "is a folder"),
        (garbage, "cannot be used as a SQLite database: file is not a database"),
        (a_file / "answers.sqlite3", "cannot be created"),
    ]
    for path, says in cases:
        assert main(["serve", "--port", "0", "--db", str(path)]) == 2
        err = capsys.readouterr().err
        assert says in err, err
        assert str(path) in err
