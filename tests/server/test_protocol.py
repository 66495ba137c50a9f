"""HTTP details: methods and Allow, logging in by GET only, what a bad body is told."""

from __future__ import annotations

import httpx
import pytest

from .conftest import Live

QUESTION = {"question": "How much is the semester fee?"}


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("TRACE", "/", "GET, HEAD"),
        ("PUT", "/", "GET, HEAD"),
        ("DELETE", "/", "GET, HEAD"),
        ("GET", "/api/question", "POST"),
        ("PUT", "/api/feedback", "POST"),
        ("POST", "/api/openapi.json", "GET, HEAD"),
    ],
)
def test_a_method_a_route_does_not_take_is_405_with_allow(
    live: Live, method: str, path: str, allow: str
) -> None:
    # No credentials: the method is wrong whoever asks, so it is said before authentication.
    response = httpx.request(method, f"{live.url}{path}")
    assert response.status_code == 405
    assert response.headers["allow"] == allow
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_a_known_method_on_an_unknown_path_is_still_401_without_credentials(live: Live) -> None:
    assert httpx.get(f"{live.url}/api/nothing-here").status_code == 401


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "HEAD"])
def test_only_get_logs_in_with_a_token(live: Live, method: str) -> None:
    response = httpx.request(method, f"{live.url}/", params={"token": live.token("alice")})
    assert response.status_code in (401, 405)
    assert "set-cookie" not in response.headers
    assert len([s for s in [response.headers.get("location")] if s]) == 0


def test_a_lone_surrogate_in_the_body_is_named(live: Live) -> None:
    body = b'{"question": "fee \\ud800 please"}'
    response = live.client("alice").post(
        "/api/question", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "surrogate" in message
    assert "\\ud800" in message
    assert "unexpected end" not in message


def test_unknown_agent_and_unknown_conversation_say_the_same(live: Live) -> None:
    client = live.client("alice")
    asked = client.post("/api/question", json=QUESTION, timeout=60).json()
    unknown = "0" * 32
    cases = [
        {"question": "And?", "conversation_id": unknown},
        {"question": "And?", "conversation_id": unknown, "agent": "no-such-agent"},
        {"question": "And?", "conversation_id": asked["conversation_id"], "agent": "nope"},
    ]
    answers = [client.post("/api/question", json=case) for case in cases]
    assert [a.status_code for a in answers[:2]] == [404, 404]
    # whether the conversation exists must not show in the error for a bad agent name
    assert answers[0].json() == answers[1].json()
    assert answers[2].status_code == 200  # a follow-up runs its conversation's agent

    bogus = client.post("/api/question", json={"question": "x", "agent": "no-such-agent"})
    others = live.client("bob").post(
        "/api/question", json={"question": "x", "conversation_id": asked["conversation_id"]}
    )
    assert bogus.status_code == others.status_code == 404
    assert bogus.json()["error"]["code"] == others.json()["error"]["code"] == "not_found"
