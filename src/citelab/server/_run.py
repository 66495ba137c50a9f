"""Running the app with uvicorn: in the foreground (``citelab serve``) or in a background
thread (tests, benchmarks, a notebook that wants a page next to it).

The listening socket is bound before uvicorn starts, so port 0 picks a free port and the URL
can be printed (or returned) before the first request.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import urlencode

from starlette.types import ASGIApp

from citelab._errors import ConfigError

__all__ = [
    "RunningServer",
    "is_loopback",
    "listening_socket",
    "page_url",
    "serve",
    "serve_in_thread",
]

_STARTUP_SECONDS = 10.0
_BACKLOG = 2048


def is_loopback(host: str) -> bool:
    """True when ``host`` names this machine only (127.0.0.0/8, ::1 or localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listening_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket on ``host``; port 0 picks a free port (read it back)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP makes asyncio set TCP_NODELAY on accepted connections: without it every
    # small SSE frame may wait on Nagle's algorithm and delayed ACKs.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(_BACKLOG)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    return sock


def page_url(host: str, port: int, token: str | None = None, agent: str | None = None) -> str:
    """The address of the page, with the token that opens a session when given."""
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    query = {key: value for key, value in (("token", token), ("agent", agent)) if value}
    return f"http://{netloc}/" + (f"?{urlencode(query)}" if query else "")


def serve(
    app: ASGIApp,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    announce: Callable[[int], None] | None = None,
    log_level: str = "warning",
) -> None:
    """Serve ``app`` until interrupted; ``announce`` gets the bound port first."""
    sock = listening_socket(host, port)
    try:
        if announce is not None:
            announce(sock.getsockname()[1])
        _uvicorn_server(app, log_level).run(sockets=[sock])
    finally:
        sock.close()


@dataclass
class RunningServer:
    """A server running in a background thread; stop it with :meth:`stop` or ``with``."""

    host: str
    port: int
    _server: Any
    _thread: threading.Thread
    _socket: socket.socket

    @property
    def url(self) -> str:
        """The server's base URL (no trailing slash)."""
        return page_url(self.host, self.port).rstrip("/")

    def stop(self) -> None:
        """Ask uvicorn to exit, wait for the thread, release the socket."""
        self._server.should_exit = True
        self._thread.join(timeout=_STARTUP_SECONDS)
        self._socket.close()

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def serve_in_thread(app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Serve ``app`` in a daemon thread; returns once the server accepts connections."""
    sock = listening_socket(host, port)
    server = _uvicorn_server(app, "warning")
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="citelab-serve", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + _STARTUP_SECONDS
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not server.started:
        server.should_exit = True
        sock.close()
        raise ConfigError(f"the server on {host}:{sock.getsockname()[1]} did not start")
    return RunningServer(host, sock.getsockname()[1], server, thread, sock)


def _uvicorn_server(app: ASGIApp, log_level: str) -> Any:
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
        # The page's own server: proxies are not expected, and X-Forwarded-* must not be
        # able to change what origin a request claims to come from.
        proxy_headers=False,
    )
    return uvicorn.Server(config)
