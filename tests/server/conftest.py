"""A real uvicorn on loopback (one per test module) over an answer service with test agents."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import ServerSentEvent, connect_sse

from citelab.answers import AnswerService
from citelab.server import (
    CSRF_HEADER,
    Auth,
    RunningServer,
    User,
    UserDirectory,
    create_app,
    generate_token,
    serve_in_thread,
)

from .doubles import TripwireModel, server_agents

MAX_BODY_BYTES = 64 * 1024
ROLES = {"alice": {"staff", "hr"}, "bob": {"staff"}, "dave": set()}


@dataclass
class BrowserSession:
    """What a browser holds after opening the printed address: the cookie and the CSRF token."""

    cookies: httpx.Cookies
    csrf_token: str


@dataclass
class Live:
    """A running server and what tests need to talk to it."""

    server: RunningServer
    service: AnswerService
    auth: Auth
    users: dict[str, User]
    gate: threading.Event
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    def token(self, name: str) -> str:
        return self.users[name].token.get_secret_value()

    def client(self, name: str | None = None, **options: Any) -> httpx.Client:
        """A client authenticated as ``name`` by bearer token (``None``: no credentials)."""
        headers = {"Authorization": f"Bearer {self.token(name)}"} if name else {}
        client = httpx.Client(base_url=self.url, headers=headers, timeout=30, **options)
        self.clients.append(client)
        return client

    def login(self, name: str) -> BrowserSession:
        """Open ``/?token=…`` as a browser would, and read the CSRF token off the page."""
        opened = httpx.get(f"{self.url}/", params={"token": self.token(name)})
        assert opened.status_code == 303, opened.text
        page = httpx.get(f"{self.url}/", cookies=opened.cookies)
        assert page.status_code == 200, page.text
        return BrowserSession(opened.cookies, csrf_from(page.text))

    def session_client(self, session: BrowserSession, *, csrf: bool = True) -> httpx.Client:
        """A client sending the session cookie (and the CSRF header when ``csrf``)."""
        headers = {CSRF_HEADER: session.csrf_token} if csrf else {}
        client = httpx.Client(
            base_url=self.url, cookies=session.cookies, headers=headers, timeout=30
        )
        self.clients.append(client)
        return client


def csrf_from(page: str) -> str:
    found = re.search(r'data-csrf-token="([^"]+)"', page)
    assert found is not None, "the page carries no CSRF token"
    return found.group(1)


def ask_sse(client: httpx.Client, body: dict[str, Any]) -> list[ServerSentEvent]:
    """Every event of one streamed answer, parsed by httpx-sse."""
    with connect_sse(client, "POST", "/api/question", json=body) as source:
        assert source.response.status_code == 200, source.response.read()
        assert source.response.headers["content-type"].startswith("text/event-stream")
        return list(source.iter_sse())


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("server-indexes")


def start_live(tmp: Path, index_dir: Path, *, anonymous: bool = False) -> Live:
    gate = threading.Event()
    service = AnswerService(
        server_agents(),
        models={"tripwire": TripwireModel(gate)},
        database=tmp / "answers.sqlite3",
        index_dir=index_dir,
    )
    users = {
        name: User(id=name, token=generate_token(), roles=frozenset(roles))
        for name, roles in ROLES.items()
    }
    auth = Auth(users=UserDirectory(users.values()), anonymous=anonymous)
    app = create_app(service, auth=auth, max_body_bytes=MAX_BODY_BYTES)
    return Live(serve_in_thread(app), service, auth, users, gate)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, index_dir: Path) -> Iterator[Live]:
    running = start_live(tmp_path_factory.mktemp("live"), index_dir)
    yield running
    for client in running.clients:
        client.close()
    running.gate.set()
    running.server.stop()
