"""``citelab serve --corpus`` with a user's own notes, as a user runs it (a child process,
real HTTP on loopback): the corpus gets its own agent with starter questions drawn from it, the
offline model answers what the notes hold and only that, and a malformed corpus stops the
server before it listens instead of failing the first question with the server's path.

The notes are ``tests/user_notes`` (our own text): a ferry page with prices and a harbour car
park, a choir, an allotment; no semester fee and no museum.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citelab.agent import AgentConfig
from citelab.answers import AnswerService
from citelab.server import Auth, UserDirectory, create_app, generate_token, serve_in_thread

from .processes import ServeProcess

NOTES = Path(__file__).parents[1] / "user_notes"
NO_ANSWER = "I could not find an answer to that in the sources I have."


class Served:
    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token
        self.headers = {"Authorization": f"Bearer {token}"}

    def ask(self, question: str, **more: str) -> httpx.Response:
        body = {"question": question, **more}
        return httpx.post(f"{self.url}/api/question", json=body, headers=self.headers, timeout=60)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("serve-notes")
    notes = shutil.copytree(NOTES, tmp / "notes")
    process = ServeProcess(tmp, "--corpus", str(notes))
    try:
        printed = process.announcement()
        found = re.search(r"local: (http://127\.0\.0\.1:\d+)/\?token=(\w+)$", printed[1])
        assert found is not None, printed
        yield Served(found[1], found[2])
    finally:
        assert process.stop() == 0


def _page(served: Served) -> str:
    """The page, opened as a browser opens the printed address (the token signs it in)."""
    with httpx.Client(base_url=served.url, timeout=30, follow_redirects=True) as browser:
        response = browser.get("/", params={"token": served.token})
    assert response.status_code == 200, response.text
    return response.text


def _starters(page: str) -> list[str]:
    found = re.search(r'data-starters="([^"]*)"', page)
    assert found is not None
    starters: list[str] = json.loads(html.unescape(found[1]))
    return starters


def test_the_page_offers_the_corpus_agent_and_starters_drawn_from_it(served: Served) -> None:
    page = _page(served)
    assert 'href="?agent=notes" aria-current="page"' in page
    for demo in ("university", "helpcentre", "intranet", "default"):
        assert f"?agent={demo}" not in page
    assert _starters(page) == ["Tell me about allotment", "Tell me about Parking at the harbour"]


def test_every_starter_question_gets_an_answer_from_the_notes(served: Served) -> None:
    for starter in _starters(_page(served)):
        response = served.ask(starter)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["text"] != NO_ANSWER
        assert body["references"], (starter, body["text"])


def test_a_question_the_notes_answer_is_answered_and_cited(served: Served) -> None:
    body = served.ask("When does the ferry to Skarvøy leave?").json()
    assert body["text"] == "The ferry to Skarvøy leaves the north pier at 8:15 and at 16:40 [1]."
    [source] = body["references"]
    assert (source["title"], source["url"]) == ("Island ferry", "ferry.md")


@pytest.mark.parametrize(
    "question", ["How much is the semester fee?", "When is the harbour museum open?"]
)
def test_a_question_the_notes_do_not_answer_gets_no_answer(served: Served, question: str) -> None:
    body = served.ask(question).json()
    assert body["text"] == NO_ANSWER
    assert body["references"] == []


def test_a_demo_agent_is_not_served_with_a_user_corpus(served: Served) -> None:
    response = served.ask("How much is the semester fee?", agent="university")
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "agent 'university' not found"


# --- a malformed corpus ----------------------------------------------------------------------


def _malformed(folder: Path) -> Path:
    path = folder / "notes.jsonl"
    good = {"entity_type": "note", "entity_id": "a", "translations": {"en": {"title": "A"}}}
    lines = [json.dumps(good), '{"entity_type": "note", "entity_id": "b"}', "{not json"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ended(process: ServeProcess) -> tuple[int, str]:
    code = process.close()
    return code, "".join(iter(process.lines.get, ""))


@pytest.mark.parametrize("how", ["corpus", "agents"])
def test_serve_refuses_a_malformed_corpus_before_it_listens(tmp_path: Path, how: str) -> None:
    corpus = _malformed(tmp_path)
    if how == "corpus":
        process = ServeProcess(tmp_path, "--corpus", str(corpus))
    else:
        agents = tmp_path / "agents.toml"
        agents.write_text(f'[agents.notes]\ncorpus = "{corpus.name}"\n', encoding="utf-8")
        process = ServeProcess(tmp_path, "--agents", str(agents))
    code, printed = _ended(process)
    assert code == 2
    assert "serving on" not in printed
    assert f"corpus {corpus} has 2 problem(s)" in printed
    assert "notes.jsonl:2: field translations: Field required" in printed
    assert "notes.jsonl:3: invalid JSON" in printed
    assert "A valid line looks like this" in printed
    if how == "agents":
        assert "agent 'notes': corpus" in printed


def test_mcp_refuses_a_malformed_corpus_before_it_serves(tmp_path: Path) -> None:
    corpus = _malformed(tmp_path)
    env = {**os.environ, "CITELAB_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "citelab", "mcp", "--corpus", str(corpus)]
    command += ["--db", str(tmp_path / "db")]
    done = subprocess.run(
        command,
        check=False,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""  # stdout is the protocol: nothing but messages goes there
    assert f"citelab mcp: corpus {corpus} has 2 problem(s)" in done.stderr
    assert "notes.jsonl:3: invalid JSON" in done.stderr


def test_a_corpus_that_breaks_after_start_is_a_server_error_without_paths(
    tmp_path: Path,
) -> None:
    """A server started without the check (or whose corpus went bad) must not blame the asker
    (400) nor show a web user the server's file path and the parse error."""
    corpus = _malformed(tmp_path)
    agent = AgentConfig(name="notes", corpus=str(corpus))
    service = AnswerService({"notes": agent}, database=tmp_path / "db", index_dir=tmp_path)
    token = generate_token()
    app = create_app(service, auth=Auth(users=UserDirectory.single(token)), default_agent="notes")
    server = serve_in_thread(app)
    try:
        headers = {"Authorization": f"Bearer {token}"}
        for path, body in [
            ("/api/question", {"question": "Where is note A?"}),
            ("/api/document", {"agent": "notes", "uri": "entity:note/a"}),
        ]:
            response = httpx.post(f"{server.url}{path}", json=body, headers=headers, timeout=30)
            assert response.status_code == 500, response.text
            error = response.json()["error"]
            assert error["code"] == "internal_error"
            assert str(tmp_path) not in response.text
            assert "notes.jsonl" not in response.text
            assert "invalid JSON" not in response.text
    finally:
        server.stop()
