"""Running the app with uvicorn: in the foreground (``citelab serve``) or in a background
thread (tests, benchmarks, a notebook that wants a page next to it).

The listening socket is bound before uvicorn starts, so port 0 picks a free port and the URL
can be printed (or returned) before the first request (see :mod:`citelab._net`).
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.types import ASGIApp

from citelab._net import (
    DEFAULT_TIMEOUTS,
    ServerThread,
    Timeouts,
    is_loopback,
    listening_socket,
    netloc,
    serve_forever,
)

__all__ = [
    "RunningServer",
    "is_loopback",
    "listening_socket",
    "page_url",
    "serve",
    "serve_in_thread",
]


def page_url(host: str, port: int, token: str | None = None, agent: str | None = None) -> str:
    """The address of the page, with the token that opens a session when given."""
    query = {key: value for key, value in (("token", token), ("agent", agent)) if value}
    return f"http://{netloc(host, port)}/" + (f"?{urlencode(query)}" if query else "")


serve = serve_forever  # the foreground server: ``citelab serve`` announces its port first


class RunningServer(ServerThread):
    """The answer server running in a background thread; stop it with :meth:`stop` or
    ``with``."""

    @property
    def url(self) -> str:
        """The server's base URL (no trailing slash)."""
        return page_url(self.host, self.port).rstrip("/")


def serve_in_thread(
    app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0, timeouts: Timeouts = DEFAULT_TIMEOUTS
) -> RunningServer:
    """Serve ``app`` in a daemon thread; returns once the server accepts connections.

    ``timeouts`` bound slow and idle connections (see :class:`citelab._net.Timeouts`)."""
    return RunningServer.start(app, host=host, port=port, name="citelab-serve", timeouts=timeouts)
