"""Serving an ASGI app with uvicorn on a socket bound first: in the foreground or in a thread.

Binding the listening socket before uvicorn starts lets port 0 pick a free port whose number
is known (printed, or handed back) before the first request. The answer server
(:mod:`citelab.server`) and the model server (:mod:`citelab.models`) both run this way.
"""

from __future__ import annotations

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
    "ServerThread",
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
    # without it every small SSE frame or keep-alive response may wait ~40 ms on Nagle's
    # algorithm and delayed ACKs.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(_BACKLOG)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {netloc(host, port)}: {exc.strerror}") from exc
    return sock


def uvicorn_server(app: Any, log_level: str = "warning") -> Any:
    """A uvicorn server for ``app`` (imported here: only servers need uvicorn)."""
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="off",
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
) -> None:
    """Serve ``app`` until interrupted; ``announce`` gets the bound port before the first
    request."""
    sock = listening_socket(host, port)
    try:
        if announce is not None:
            announce(sock.getsockname()[1])
        uvicorn_server(app, log_level).run(sockets=[sock])
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
        cls, app: Any, *, host: str = "127.0.0.1", port: int = 0, name: str = "citelab-serve"
    ) -> Self:
        """Serve ``app`` in a thread called ``name``; returns once it accepts connections.

        A server that does not start within :data:`STARTUP_SECONDS` is a
        :class:`~citelab.ConfigError`.
        """
        sock = listening_socket(host, port)
        bound = sock.getsockname()[1]
        server = uvicorn_server(app)
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
