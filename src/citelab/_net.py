"""Serving an ASGI app with uvicorn on a socket bound first: in the foreground or in a thread.

Binding the listening socket before uvicorn starts lets port 0 pick a free port whose number
is known (printed, or handed back) before the first request. The answer server
(:mod:`citelab.server`) and the model server (:mod:`citelab.models`) both run this way.

Connections are timed out (:class:`Timeouts`): a client must finish sending a request's
headers within ``header_seconds`` of connecting (or of its first byte on a kept-alive
connection), and an idle kept-alive connection is closed after ``keep_alive_seconds``
(uvicorn's own timer). The body's deadline is the app's (the answer server's body-limit
middleware). The keep-alive timeout is longer than clients' own idle expiry (httpx: 5 s), so
a client never reuses a connection the server is closing at that moment: with both at 5 s, a
loaded server's close crossed a client's reuse in about 1 of 2,000 requests (``ReadError``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from citelab._errors import ConfigError

__all__ = [
    "DEFAULT_TIMEOUTS",
    "ServerThread",
    "Timeouts",
    "is_loopback",
    "listening_socket",
    "netloc",
    "serve_forever",
    "uvicorn_server",
]

STARTUP_SECONDS = 10.0
"""How long a server may take to start, or to stop."""
_BACKLOG = 2048


def is_loopback(host: str) -> bool:
    """True when ``host`` names this machine only (127.0.0.0/8, ::1 or localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def netloc(host: str, port: int) -> str:
    """``host:port`` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def listening_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket on ``host``; port 0 picks a free port (read it back).

    A port that cannot be bound (taken, not allowed) is a :class:`~citelab.ConfigError`.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must say TCP: only then does asyncio set TCP_NODELAY on accepted connections, and
    # without it every small SSE frame or keep-alive response may wait on Nagle's algorithm
    # and the peer's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(_BACKLOG)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {netloc(host, port)}: {exc.strerror}") from exc
    return sock


@dataclass(frozen=True)
class Timeouts:
    """How long a connection may take (see the module docstring)."""

    header_seconds: float = 10.0
    """From connecting (or a kept-alive connection's first byte) to the end of the headers."""
    keep_alive_seconds: int = 20
    """An idle kept-alive connection is closed after this long."""


DEFAULT_TIMEOUTS = Timeouts()


def _timed_protocol(timeouts: Timeouts) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, plus a deadline for the request headers."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class TimedH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_header_timer()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if not self._awaiting_headers():
                self._disarm_header_timer()
            elif self._header_timer is None:
                self._arm_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_timer()
            super().connection_lost(exc)

        def _awaiting_headers(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def _arm_header_timer(self) -> None:
            self._header_timer = self.loop.call_later(
                timeouts.header_seconds, self._headers_too_slow
            )

        def _disarm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self._awaiting_headers() and not self.transport.is_closing():
                self.transport.close()

    return TimedH11Protocol


def uvicorn_server(
    app: Any, log_level: str = "warning", timeouts: Timeouts = DEFAULT_TIMEOUTS
) -> Any:
    """A uvicorn server for ``app`` (imported here: only servers need uvicorn)."""
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="off",
        http=_timed_protocol(timeouts),
        timeout_keep_alive=timeouts.keep_alive_seconds,
        timeout_graceful_shutdown=2,
        # citelab's servers run on this machine, not behind a proxy: X-Forwarded-* must not
        # be able to change which client or origin a request claims to come from.
        proxy_headers=False,
    )
    return uvicorn.Server(config)


def serve_forever(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    announce: Callable[[int], None] | None = None,
    log_level: str = "warning",
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
) -> None:
    """Serve ``app`` until interrupted; ``announce`` gets the bound port before the first
    request."""
    sock = listening_socket(host, port)
    try:
        if announce is not None:
            announce(sock.getsockname()[1])
        uvicorn_server(app, log_level, timeouts).run(sockets=[sock])
    finally:
        sock.close()


@dataclass
class ServerThread:
    """A server running in a daemon thread; stop it with :meth:`stop` or ``with``."""

    host: str
    port: int
    _server: Any
    _thread: threading.Thread
    _socket: socket.socket

    @classmethod
    def start(
        cls,
        app: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        name: str = "citelab-serve",
        timeouts: Timeouts = DEFAULT_TIMEOUTS,
    ) -> Self:
        """Serve ``app`` in a thread called ``name``; returns once it accepts connections.

        A server that does not start within :data:`STARTUP_SECONDS` is a
        :class:`~citelab.ConfigError`.
        """
        sock = listening_socket(host, port)
        bound = sock.getsockname()[1]
        server = uvicorn_server(app, timeouts=timeouts)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name=name, daemon=True
        )
        thread.start()
        deadline = time.monotonic() + STARTUP_SECONDS
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not server.started:
            server.should_exit = True
            sock.close()
            raise ConfigError(f"the server on {netloc(host, bound)} did not start")
        return cls(host, bound, server, thread, sock)

    def stop(self) -> None:
        """Ask uvicorn to exit, wait for the thread, release the socket."""
        self._server.should_exit = True
        self._thread.join(timeout=STARTUP_SECONDS)
        self._socket.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
