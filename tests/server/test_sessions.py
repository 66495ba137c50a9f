"""Sessions cannot be pushed out by other people's traffic, and a lost one is said to be lost."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citelab.server import SessionStore, User

from .conftest import Live, start_live

QUESTION = {"question": "How much is the semester fee?"}
ALICE = "alice-token-0123456789"
BOB = "bob-token-0123456789ab"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def open_live(tmp_path_factory: pytest.TempPathFactory, index_dir: Path) -> Iterator[Live]:
    running = start_live(tmp_path_factory.mktemp("sessions"), index_dir, anonymous=True)
    yield running
    for client in running.clients:
        client.close()
    running.server.stop()


def test_anonymous_page_visits_open_no_session(open_live: Live) -> None:
    live = open_live
    before = len(live.auth.sessions)
    with httpx.Client(base_url=live.url) as client:
        for _ in range(50):
            page = client.get("/")
            assert page.status_code == 200
            assert "set-cookie" not in page.headers
            client.cookies.clear()
    assert len(live.auth.sessions) == before


def test_one_users_sessions_never_push_out_anothers() -> None:
    store = SessionStore(per_user=3)
    alice = store.open(User(id="alice", token=ALICE).reader)
    bob = User(id="bob", token=BOB).reader
    for _ in range(100):
        store.open(bob)
    assert store.get(alice.id) == alice
    assert len(store) == 4  # alice's one, and bob's newest three


def test_a_users_oldest_session_goes_first_and_expired_ones_before_it() -> None:
    clock = FakeClock()
    store = SessionStore(ttl_seconds=60, per_user=2, clock=clock)
    alice = User(id="alice", token=ALICE).reader
    first = store.open(alice)
    clock.now += 30
    second = store.open(alice)
    third = store.open(alice)
    assert store.get(first.id) is None
    assert store.get(second.id) == second
    assert store.get(third.id) == third
    clock.now += 45  # second (opened at 1030) is alive, first would be dead anyway
    assert store.get(second.id) == second
    clock.now += 30
    assert store.get(second.id) is None
    assert store.get(third.id) is None
    assert len(store) == 0


def test_a_session_that_is_gone_is_401_not_silently_anonymous(open_live: Live) -> None:
    live = open_live
    session = live.login("alice")
    client = live.session_client(session)
    mine = client.post("/api/question", json=QUESTION, timeout=60)
    assert mine.status_code == 200
    session_id = session.cookies.get(live.auth.cookie_name)
    assert session_id is not None
    live.auth.sessions.close(session_id)  # as expiry or a restart would

    again = client.post("/api/question", json=QUESTION)
    assert again.status_code == 401
    assert again.json()["error"]["code"] == "session_expired"
    assert "session has ended" in again.json()["error"]["message"]

    page = httpx.get(f"{live.url}/", cookies=session.cookies)
    assert page.status_code == 401
    assert "signed out" in page.text
    assert "signed in as" not in page.text
    assert f'{live.auth.cookie_name}=""' in page.headers["set-cookie"]  # cleared


def test_the_page_lists_recent_conversations_for_signed_in_users(open_live: Live) -> None:
    """The shell carries the list's place and whether someone is signed in; an anonymous
    visitor's page says not signed in (anonymous conversations are listed for nobody)."""
    live = open_live
    session = live.login("alice")
    signed_in = httpx.get(f"{live.url}/", cookies=session.cookies).text
    anonymous = httpx.get(f"{live.url}/").text
    recent = '<nav class="citelab-page-recent" data-citelab-conversations-for="citelab-chat"'
    for page in (signed_in, anonymous):
        assert recent in page
        assert 'id="citelab-chat"' in page
    assert 'data-signed-in="true"' in signed_in
    assert 'data-signed-in="false"' in anonymous
