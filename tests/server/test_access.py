"""Who may ask, decided in middleware: tokens, sessions, CSRF, owners, hosts, what one may read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from httpx_sse import connect_sse

from citelab.agent import resolve_corpus_path
from citelab.corpus import load_corpus
from citelab.events import DoneEvent
from citelab.server import CONTENT_SECURITY_POLICY, CSRF_HEADER

from .conftest import Live, ask_sse, csrf_from, start_live
from .doubles import WAIT_FOR_GATE

QUESTION = {"question": "How much is the semester fee?"}


def test_api_without_credentials_is_401(live: Live) -> None:
    response = live.client().post("/api/question", json=QUESTION)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize(
    "header", ["Bearer not-a-real-token-at-all", "Basic YWxpY2U6eA==", "Bearer"]
)
def test_a_wrong_authorization_header_is_401(live: Live, header: str) -> None:
    response = live.client().post("/api/question", json=QUESTION, headers={"Authorization": header})
    assert response.status_code == 401


def test_opening_the_printed_address_sets_a_strict_cookie_and_drops_the_token(live: Live) -> None:
    token = live.token("alice")
    response = httpx.get(f"{live.url}/", params={"token": token, "agent": "intranet"})
    assert response.status_code == 303
    assert response.headers["location"] == "/?agent=intranet"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{live.auth.cookie_name}=")
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    assert "Path=/" in cookie
    assert token not in cookie


def test_a_wrong_token_in_the_address_is_401(live: Live) -> None:
    response = httpx.get(f"{live.url}/", params={"token": "x" * 48})
    assert response.status_code == 401
    assert "not valid" in response.text
    assert httpx.get(f"{live.url}/").status_code == 401


def test_session_cookie_needs_the_csrf_header(live: Live) -> None:
    session = live.login("alice")
    without = live.session_client(session, csrf=False).post("/api/question", json=QUESTION)
    assert without.status_code == 403
    assert without.json()["error"]["code"] == "csrf_failed"
    wrong = live.session_client(session, csrf=False).post(
        "/api/question", json=QUESTION, headers={CSRF_HEADER: "forged"}
    )
    assert wrong.status_code == 403
    right = live.session_client(session).post("/api/question", json=QUESTION)
    assert right.status_code == 200


def test_the_session_is_the_user_who_logged_in(live: Live) -> None:
    session = live.login("bob")
    asked = live.session_client(session).post("/api/question", json=QUESTION).json()
    # bob's conversation: bob's bearer token continues it, alice's does not.
    follow = {"question": "And the fee?", "conversation_id": asked["conversation_id"]}
    assert live.client("bob").post("/api/question", json=follow).status_code == 200
    assert live.client("alice").post("/api/question", json=follow).status_code == 404


def test_owner_rules_across_two_users(live: Live) -> None:
    alice, bob = live.client("alice"), live.client("bob")
    started = alice.post("/api/question", json=QUESTION).json()
    conversation = started["conversation_id"]
    follow = {"question": "What does the fee include?", "conversation_id": conversation}

    refused = bob.post("/api/question", json=follow)
    assert refused.status_code == 404
    assert refused.json()["error"]["message"] == f"conversation {conversation!r} not found"
    rating = {"conversation_id": conversation, "turn": 1, "value": "up"}
    assert bob.post("/api/feedback", json=rating).status_code == 404
    streamed = bob.post("/api/question", json=follow, headers={"Accept": "text/event-stream"})
    assert streamed.status_code == 404

    assert alice.post("/api/question", json=follow).json()["turn"] == 2
    assert alice.post("/api/feedback", json=rating).status_code == 200


INTRANET_QUESTIONS = [
    "Which salary band are senior engineers in?",
    "What is Operation Larkspur?",
    "What is in the board memo about the Quillon acquisition?",
]


@pytest.mark.parametrize("question", INTRANET_QUESTIONS)
def test_restricted_documents_never_reach_a_user_without_access(live: Live, question: str) -> None:
    corpus = load_corpus(resolve_corpus_path("intranet"))
    body = {"agent": "intranet", "question": question}
    for name in ("dave", "bob"):
        reader = live.users[name].reader
        hidden = [doc for doc in corpus if not doc.readable_by(reader)]
        assert hidden, "the fixture should hide something from this user"
        client = live.client(name)
        with connect_sse(client, "POST", "/api/question", json=body) as source:
            streamed = source.response.read().decode()
        answered = client.post("/api/question", json=body).text
        for doc in hidden:
            _, translation = doc.translation(None)
            for text in (streamed, answered):
                assert f'"{doc.uri}"' not in text, (name, doc.uri)
                assert translation.title not in text, (name, translation.title)
                assert translation.content[:60] not in text, (name, doc.uri)
    # The question does reach the document for someone allowed to read it.
    allowed = live.client("alice").post("/api/question", json=body).json()
    assert allowed["references"], "alice (hr) should get a cited answer"


def test_the_page_is_a_shell_with_its_csrf_token_and_strict_headers(live: Live) -> None:
    session = live.login("alice")
    page = httpx.get(f"{live.url}/", cookies=session.cookies)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page.text, re.DOTALL)
    assert scripts == [(' type="module" src="/static/page.js"', "")]
    assert "style=" not in page.text
    assert "<style" not in page.text
    assert csrf_from(page.text) == session.csrf_token
    assert 'data-agent="default"' in page.text
    assert "signed in as <strong>alice</strong>" in page.text
    assert "312 euros" not in page.text  # answers only ever come through the API


def test_the_page_escapes_an_unknown_agent_name(live: Live) -> None:
    session = live.login("alice")
    page = httpx.get(
        f"{live.url}/", params={"agent": "<script>alert(1)</script>"}, cookies=session.cookies
    )
    assert page.status_code == 404
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "<script>alert" not in page.text


def test_bundle_and_openapi_are_public(live: Live) -> None:
    bundle = httpx.get(f"{live.url}/static/page.js")
    assert bundle.status_code == 200
    assert "javascript" in bundle.headers["content-type"]
    assert "mountPage" in bundle.text
    assert httpx.get(f"{live.url}/assets/page.css").status_code == 200
    assert httpx.get(f"{live.url}/api/openapi.json").status_code == 200
    escape = httpx.get(f"{live.url}/static/%2e%2e/server/_users.py")
    assert escape.status_code == 404
    assert escape.json()["error"]["code"] == "not_found"


def test_a_foreign_host_header_is_refused(live: Live) -> None:
    response = live.client("alice").post(
        "/api/question", json=QUESTION, headers={"Host": "attacker.example"}
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "host_not_allowed"
    assert httpx.get(f"{live.url}/", headers={"Host": "localhost:1"}).status_code == 401


def test_a_cross_origin_request_is_refused(live: Live) -> None:
    client = live.client("alice")
    foreign = client.post("/api/question", json=QUESTION, headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    assert foreign.json()["error"]["code"] == "origin_not_allowed"
    own = client.post("/api/question", json=QUESTION, headers={"Origin": live.url})
    assert own.status_code == 200


def test_two_streams_of_one_session_both_progress(live: Live) -> None:
    session = live.login("alice")
    live.gate.clear()
    held = {"agent": "tripwire", "question": f"How much is the semester fee? {WAIT_FOR_GATE}"}
    with connect_sse(live.session_client(session), "POST", "/api/question", json=held) as first:
        events = first.iter_sse()
        assert next(events).event == "references"  # the first stream is open, mid-answer
        second = ask_sse(live.session_client(session), QUESTION)
        assert second[-1].event == "done"  # ...and did not hold the second one back
        assert not live.gate.is_set()
        live.gate.set()
        rest = [event.event for event in events]
    assert rest[-1] == "done"
    assert "token" in rest


@pytest.fixture(scope="module")
def anonymous_live(tmp_path_factory: pytest.TempPathFactory, index_dir: Path) -> Iterator[Live]:
    running = start_live(tmp_path_factory.mktemp("anonymous"), index_dir, anonymous=True)
    yield running
    for client in running.clients:
        client.close()
    running.server.stop()


def test_anonymous_mode_lets_requests_without_credentials_in(anonymous_live: Live) -> None:
    live = anonymous_live
    page = httpx.get(f"{live.url}/")
    assert page.status_code == 200
    assert "anonymous" in page.text
    assert "set-cookie" not in page.headers  # an anonymous visit opens no session

    started = live.client().post("/api/question", json=QUESTION)
    assert started.status_code == 200
    follow = {"question": "And the fee?", "conversation_id": started.json()["conversation_id"]}
    # Anonymous conversations are bearer-by-id: whoever holds the id may continue.
    assert live.client().post("/api/question", json=follow).json()["turn"] == 2
    assert live.client("bob").post("/api/question", json=follow).status_code == 200

    owned = live.client("alice").post("/api/question", json=QUESTION).json()
    taken = {"question": "And?", "conversation_id": owned["conversation_id"]}
    assert live.client().post("/api/question", json=taken).status_code == 404


def test_anonymous_mode_still_checks_csrf_on_a_session(anonymous_live: Live) -> None:
    live = anonymous_live
    session = live.login("alice")
    cookies = session.cookies
    refused = httpx.post(f"{live.url}/api/question", json=QUESTION, cookies=cookies)
    assert refused.status_code == 403
    accepted = httpx.post(
        f"{live.url}/api/question",
        json=QUESTION,
        cookies=cookies,
        headers={CSRF_HEADER: session.csrf_token},
        timeout=30,
    )
    assert accepted.status_code == 200
    DoneEvent.model_validate(accepted.json())
