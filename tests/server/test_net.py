"""citelab._net: the listening socket, the foreground server and the server thread."""

from __future__ import annotations

import socket
import threading

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from citelab import ConfigError
from citelab._net import ServerThread, listening_socket, netloc, serve_forever


async def _hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello")


APP = Starlette(routes=[Route("/", _hello)])


def test_the_socket_says_tcp_so_asyncio_disables_nagle() -> None:
    # asyncio sets TCP_NODELAY on accepted connections only when the listening socket's
    # proto is IPPROTO_TCP; with proto 0 every small SSE frame may wait ~40 ms.
    with listening_socket() as sock:
        assert sock.proto == socket.IPPROTO_TCP
        assert sock.type == socket.SOCK_STREAM
        assert sock.getsockname()[1] != 0


def test_netloc_brackets_ipv6() -> None:
    assert netloc("127.0.0.1", 80) == "127.0.0.1:80"
    assert netloc("::1", 8000) == "[::1]:8000"


def test_a_server_thread_serves_until_stopped_and_releases_its_port() -> None:
    with ServerThread.start(APP, name="citelab-test") as running:
        assert running.port != 0
        url = f"http://{netloc(running.host, running.port)}/"
        assert httpx.get(url).text == "hello"
        assert any(thread.name == "citelab-test" for thread in threading.enumerate())
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=2)
    listening_socket(port=running.port).close()  # the port is free again


def test_a_busy_port_fails_before_any_thread_starts() -> None:
    with listening_socket() as taken:
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=rf"cannot listen on 127\.0\.0\.1:{port}"):
            ServerThread.start(APP, port=port)
        with pytest.raises(ConfigError, match=rf"cannot listen on 127\.0\.0\.1:{port}"):
            serve_forever(APP, port=port, announce=pytest.fail)
