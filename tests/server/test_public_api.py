"""The helpers that run citelab.server (its public names: tests/test_public_api.py)."""

from __future__ import annotations

import httpx
import pytest

from citelab import ConfigError
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.server import (
    Auth,
    create_app,
    is_loopback,
    listening_socket,
    page_url,
    serve_in_thread,
)
from citelab.server._access import _host_name


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.0.1", True), ("::1", True), ("localhost", True),
     ("0.0.0.0", False), ("192.168.1.4", False), ("example.org", False)],
)  # fmt: skip
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("header", "name"),
    [("127.0.0.1:8000", "127.0.0.1"), ("LOCALHOST", "localhost"), ("[::1]:80", "::1"),
     ("localhost", "localhost"), ("::1", "::1"), ("", "")],
)  # fmt: skip
def test_host_header_names(header: str, name: str) -> None:
    assert _host_name(header) == name


def test_page_url_carries_the_token_and_agent_and_brackets_ipv6() -> None:
    assert page_url("127.0.0.1", 80) == "http://127.0.0.1:80/"
    assert page_url("::1", 8000, "t0k", "intranet") == "http://[::1]:8000/?token=t0k&agent=intranet"


def test_a_busy_port_is_a_clear_configuration_error() -> None:
    taken = listening_socket()
    try:
        with pytest.raises(ConfigError, match=r"cannot listen on 127\.0\.0\.1:\d+"):
            listening_socket(port=taken.getsockname()[1])
    finally:
        taken.close()


def test_serve_in_thread_starts_and_stops() -> None:
    service = AnswerService(store=MemoryConversationStore(), logs=MemoryLogStore())
    app = create_app(service, auth=Auth.token("t" * 20))
    with serve_in_thread(app) as running:
        assert running.url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{running.url}/api/openapi.json").status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{running.url}/api/openapi.json", timeout=2)


def test_create_app_refuses_an_unknown_default_agent() -> None:
    service = AnswerService(store=MemoryConversationStore(), logs=MemoryLogStore())
    with pytest.raises(ConfigError, match="default agent 'nobody' is not configured"):
        create_app(service, auth=Auth(), default_agent="nobody")
