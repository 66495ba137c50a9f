"""The server keeps each user's conversations per agent: ``GET /api/conversations`` lists them
and ``GET /api/conversations/{id}`` gives their turns back, over real HTTP on loopback, with
the owner rules of answering (a user sees only their own; anonymous conversations are
bearer-by-id and listed for nobody) and the access rules (a turn drawing on a document its
reader may no longer read is withheld)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from citelab.answers import AnswerService, History
from citelab.corpus import Reader
from citelab.server import (
    Auth,
    RunningServer,
    User,
    UserDirectory,
    create_app,
    generate_token,
    serve_in_thread,
)

TOKENS = {name: generate_token() for name in ("alice", "bob")}


class Live:
    def __init__(self, server: RunningServer) -> None:
        self.server = server

    def get(self, path: str, who: str | None = "alice", **params: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {TOKENS[who]}"} if who else {}
        return httpx.get(f"{self.server.url}{path}", params=params, headers=headers, timeout=30)

    def ask(self, who: str | None, question: str, **more: Any) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {TOKENS[who]}"} if who else {}
        response = httpx.post(
            f"{self.server.url}/api/question",
            json={"question": question, **more},
            headers=headers,
            timeout=60,
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


def _service(tmp: Path) -> AnswerService:
    return AnswerService(database=tmp / "answers.sqlite3", index_dir=tmp / "indexes")


def _start(service: AnswerService, *, anonymous: bool = False) -> RunningServer:
    users = [
        User(id="alice", token=TOKENS["alice"], roles=frozenset({"staff", "hr"})),
        User(id="bob", token=TOKENS["bob"], roles=frozenset({"staff"})),
    ]
    auth = Auth(users=UserDirectory(users), anonymous=anonymous)
    return serve_in_thread(create_app(service, auth=auth))


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Live, dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("conversations")
    service = _service(tmp)
    server = _start(service, anonymous=True)
    live = Live(server)
    fee = live.ask("alice", "How much is the semester fee?")
    follow = live.ask("alice", "What does the fee include?", conversation_id=fee["conversation_id"])
    password = live.ask("alice", "How do I reset my password?", agent="helpcentre")
    bobs = live.ask("bob", "How many ECTS credits is the Data Science MSc worth?")
    nobody = live.ask(None, "How much is the semester fee?")
    done = {"fee": fee, "follow": follow, "password": password, "bob": bobs, "nobody": nobody}
    yield live, done
    server.stop()


def test_a_user_lists_their_own_conversations_per_agent(asked: Any) -> None:
    live, done = asked
    listed = live.get("/api/conversations", agent="default").json()["conversations"]
    [fee] = listed
    assert fee["conversation_id"] == done["fee"]["conversation_id"]
    assert fee["agent"] == "default"
    assert fee["first_question"] == "How much is the semester fee?"
    assert fee["turns"] == 2
    assert fee["created_at"] <= fee["updated_at"] < fee["expires_at"]
    everything = live.get("/api/conversations").json()["conversations"]
    assert [c["agent"] for c in everything] == ["helpcentre", "default"]  # newest first
    assert [
        c["conversation_id"]
        for c in live.get("/api/conversations", limit=1).json()["conversations"]
    ] == [done["password"]["conversation_id"]]
    bobs = live.get("/api/conversations", "bob").json()["conversations"]
    assert [c["conversation_id"] for c in bobs] == [done["bob"]["conversation_id"]]


def test_anonymous_conversations_are_listed_for_nobody(asked: Any) -> None:
    live, done = asked
    assert live.get("/api/conversations", None).json() == {"conversations": []}
    listed = [
        c["conversation_id"]
        for who in ("alice", "bob")
        for c in live.get("/api/conversations", who).json()["conversations"]
    ]
    assert done["nobody"]["conversation_id"] not in listed


def test_a_conversation_comes_back_with_each_turns_done_event(asked: Any) -> None:
    live, done = asked
    response = live.get(f"/api/conversations/{done['fee']['conversation_id']}")
    assert response.status_code == 200, response.text
    history = History.model_validate(response.json())
    assert history.agent == "default"
    assert [t.question for t in history.turns] == [
        "How much is the semester fee?",
        "What does the fee include?",
    ]
    for shown, original in zip(history.turns, [done["fee"], done["follow"]], strict=True):
        assert not shown.withheld
        assert shown.answer == original["text"]
        assert shown.done is not None
        assert shown.done.model_dump(mode="json") == original  # the page can redraw it as it was
        assert shown.turn == original["turn"]


def test_owner_rules_are_those_of_answering(asked: Any) -> None:
    live, done = asked
    alices = f"/api/conversations/{done['fee']['conversation_id']}"
    refused = live.get(alices, "bob")
    unknown = live.get("/api/conversations/0123456789abcdef", "bob")
    assert refused.status_code == unknown.status_code == 404
    assert refused.json()["error"]["code"] == "not_found"
    assert "0123456789abcdef" in unknown.json()["error"]["message"]
    assert live.get(alices, None).status_code == 404  # anonymous cannot read a user's
    bearer = f"/api/conversations/{done['nobody']['conversation_id']}"
    assert live.get(bearer, "bob").status_code == 200  # anonymous-owned: bearer-by-id
    assert live.get(bearer, None).status_code == 200


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({"limit": "0"}, 400, "limit"),
        ({"limit": "many"}, 400, "limit"),
        ({"agent": "nosuchagent"}, 404, "agent 'nosuchagent' not found"),
    ],
)
def test_a_bad_query_is_refused_saying_what(
    asked: Any, params: dict[str, str], status: int, message: str
) -> None:
    live, _ = asked
    response = live.get("/api/conversations", **params)
    assert response.status_code == status
    assert message in response.json()["error"]["message"]


def test_without_credentials_a_server_without_anonymous_use_refuses(tmp_path: Path) -> None:
    server = _start(_service(tmp_path))
    try:
        response = httpx.get(f"{server.url}/api/conversations", timeout=30)
        assert response.status_code == 401
    finally:
        server.stop()


def test_the_page_session_reads_the_list_and_it_outlives_the_server(tmp_path: Path) -> None:
    """The page's own credentials (the session cookie, no CSRF header for a read) work, and
    the list is in the server's store: a new server on the same file lists it too."""
    first = _start(_service(tmp_path))
    try:
        asked = Live(first).ask("alice", "How much is the semester fee?")
    finally:
        first.stop()
    second = _start(_service(tmp_path))
    try:
        with httpx.Client(base_url=second.url, timeout=30, follow_redirects=True) as browser:
            assert browser.get("/", params={"token": TOKENS["alice"]}).status_code == 200
            listed = browser.get("/api/conversations", params={"agent": "default"})
        assert listed.status_code == 200, listed.text
        ids = [c["conversation_id"] for c in listed.json()["conversations"]]
        assert ids == [asked["conversation_id"]]
    finally:
        second.stop()


@pytest.mark.anyio
async def test_a_turn_on_a_document_its_reader_lost_access_to_is_withheld(tmp_path: Path) -> None:
    service = _service(tmp_path)
    hr = Reader(user_id="alice", roles=frozenset({"staff", "hr"}))
    answer = await service.answer("intranet", "What salary band are senior engineers in?", user=hr)
    assert "K7" in answer.text
    seen = await service.history(answer.conversation_id, hr)
    assert seen.turns[0].answer == answer.text
    demoted = Reader(user_id="alice", roles=frozenset({"staff"}))
    [turn] = (await service.history(answer.conversation_id, demoted)).turns
    assert turn.withheld
    assert turn.question == "What salary band are senior engineers in?"
    assert (turn.answer, turn.done) == (None, None)
    assert (
        "K7"
        not in History.model_validate(
            (await service.history(answer.conversation_id, demoted)).model_dump()
        ).model_dump_json()
    )
    await service.aclose()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
