"""Who is asking, decided before any handler runs: tokens, session cookies, CSRF, hosts.

:class:`AccessMiddleware` sorts every request into one of three kinds:

- public (``/static/…``, ``/assets/…``, ``/api/openapi.json``): served to anyone;
- the page (``/``): ``GET /?token=…`` opens a session (an HttpOnly, SameSite=Strict cookie)
  and redirects to ``/`` so the token leaves the address bar; a visit with a live session gets
  the page; in anonymous mode a visit without one gets the page as the anonymous reader, with
  no session (so anonymous traffic never fills the session table);
- everything else (the API): ``Authorization: Bearer <token>``, or the session cookie plus
  ``X-CSRF-Token`` on unsafe methods, or nothing at all when anonymous mode is on. Unsafe
  requests must also come from the server's own origin and carry JSON.

A cookie naming a session that is gone (expired, or the server restarted) is a 401 saying
so, in anonymous mode too: a signed-in user is never silently turned anonymous. A method a
route does not take is a 405 with ``Allow``, before any authentication.

Handlers read the outcome with :func:`reader_of` and :func:`session_of`. A request whose
``Host`` is not the server's is refused (DNS rebinding), as Jupyter does.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlencode

from starlette.datastructures import URL
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Match
from starlette.types import ASGIApp, Receive, Scope, Send

from citelab.corpus import Reader
from citelab.server._page import access_denied_page
from citelab.server._sessions import Session, SessionStore
from citelab.server._users import UserDirectory

__all__ = [
    "CSRF_HEADER",
    "LOOPBACK_HOSTS",
    "AccessMiddleware",
    "Auth",
    "reader_of",
    "session_of",
]

CSRF_HEADER = "X-CSRF-Token"
"""The header unsafe cookie-authenticated requests must carry."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""Host names a loopback server answers to."""

_READER_KEY = "citelab.reader"
_SESSION_KEY = "citelab.session"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_PUBLIC_PREFIXES = ("/static/", "/assets/")
_PUBLIC_PATHS = frozenset({"/api/openapi.json"})
SESSION_GONE = (
    "your session has ended (it expired, or the server restarted): open the address with "
    "your token again"
)
"""What a request whose session cookie names no live session is told (401)."""

Kind = Literal["public", "page", "api"]


@dataclass
class Auth:
    """How a server authenticates: its users (by token), and whether anonymous use is on."""

    users: UserDirectory = field(default_factory=lambda: UserDirectory([]))
    """Token holders; each token maps to one user (the owner of their conversations)."""
    anonymous: bool = False
    """Let requests without credentials in, as the anonymous reader."""
    sessions: SessionStore = field(default_factory=SessionStore)
    """Browser sessions opened by ``GET /?token=…``."""
    cookie_name: str = field(default_factory=lambda: f"citelab-session-{secrets.token_hex(4)}")
    """The session cookie's name: unique per server, since cookies ignore ports."""

    @classmethod
    def token(cls, token: str, *, user_id: str = "local", roles: Iterable[str] = ()) -> Auth:
        """One user holding ``token`` (``citelab serve --token T``)."""
        return cls(users=UserDirectory.single(token, user_id, roles))

    def bearer(self, header: str) -> Reader | None:
        """The reader an ``Authorization`` header names, or ``None`` if it names nobody."""
        scheme, _, credentials = header.partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            return None
        user = self.users.find(credentials.strip())
        return user.reader if user is not None else None


def reader_of(connection: HTTPConnection) -> Reader:
    """The reader :class:`AccessMiddleware` authenticated for this request."""
    reader = connection.scope.get(_READER_KEY)
    if not isinstance(reader, Reader):
        raise RuntimeError("AccessMiddleware did not run for this request")
    return reader


def session_of(connection: HTTPConnection) -> Session | None:
    """The browser session of this request, if it came with one."""
    session = connection.scope.get(_SESSION_KEY)
    return session if isinstance(session, Session) else None


class AccessMiddleware:
    """Authentication, CSRF, origin, content type and host checks (see the module docstring)."""

    def __init__(
        self, app: ASGIApp, *, auth: Auth, allowed_hosts: Iterable[str] | None = None
    ) -> None:
        self.app = app
        self.auth = auth
        self.allowed_hosts = frozenset(h.lower() for h in allowed_hosts) if allowed_hosts else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        kind = _kind(request.url.path)
        refusal = self._host_refusal(request) or _method_refusal(scope)
        if refusal is None and kind == "api":
            refusal = self._api_refusal(request)
        if refusal is not None:
            await refusal(scope, receive, send)
        elif kind == "page":
            await self._page(request, receive, send)
        else:
            await self.app(scope, receive, send)

    # --- the page ------------------------------------------------------------------------------

    async def _page(self, request: Request, receive: Receive, send: Send) -> None:
        scope = request.scope
        token = request.query_params.get("token")
        if token is not None and request.method == "GET":
            await self._login(request, token)(scope, receive, send)
            return
        cookie = request.cookies.get(self.auth.cookie_name)
        session = self.auth.sessions.get(cookie)
        if session is None and cookie is not None:
            page = access_denied_page(f"You are signed out: {SESSION_GONE}.")
            response = HTMLResponse(page, status_code=401, headers={"Cache-Control": "no-store"})
            response.delete_cookie(self.auth.cookie_name, path="/")
            await response(scope, receive, send)
            return
        if session is None and not self.auth.anonymous:
            page = access_denied_page(
                "This page needs the address with the token that `citelab serve` printed."
            )
            await HTMLResponse(page, status_code=401)(scope, receive, send)
            return
        scope[_READER_KEY] = session.reader if session is not None else Reader.anonymous()
        scope[_SESSION_KEY] = session
        await self.app(scope, receive, send)

    def _login(self, request: Request, token: str) -> Response:
        user = self.auth.users.find(token)
        if user is None:
            page = access_denied_page("The token in this address is not valid for this server.")
            return HTMLResponse(page, status_code=401)
        session = self.auth.sessions.open(user.reader)
        kept = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        target = "/" + (f"?{urlencode(kept)}" if kept else "")
        response = RedirectResponse(target, status_code=303)
        self._set_cookie(response, session)
        return response

    def _set_cookie(self, response: Response, session: Session) -> None:
        response.set_cookie(
            self.auth.cookie_name, session.id, httponly=True, samesite="strict", path="/"
        )

    # --- the API -------------------------------------------------------------------------------

    def _api_refusal(self, request: Request) -> Response | None:
        refusal = self._authenticate(request)
        if refusal is None and request.method not in _SAFE_METHODS:
            refusal = _csrf_refusal(request) or _cross_site_refusal(request)
        return refusal

    def _authenticate(self, request: Request) -> Response | None:
        """Put the reader (and the session, if any) into the scope, or refuse."""
        authorization = request.headers.get("authorization")
        if authorization is not None:
            reader = self.auth.bearer(authorization)
            if reader is None:
                return _refuse(401, "unauthorized", "the bearer token is not valid")
            request.scope[_READER_KEY] = reader
            return None
        cookie = request.cookies.get(self.auth.cookie_name)
        session = self.auth.sessions.get(cookie)
        if session is not None:
            request.scope[_READER_KEY] = session.reader
            request.scope[_SESSION_KEY] = session
        elif cookie is not None:
            return _refuse(401, "session_expired", SESSION_GONE)
        elif self.auth.anonymous:
            request.scope[_READER_KEY] = Reader.anonymous()
        else:
            message = "send 'Authorization: Bearer <token>', or open the page's address first"
            return _refuse(401, "unauthorized", message)
        return None

    def _host_refusal(self, request: Request) -> Response | None:
        if self.allowed_hosts is None:
            return None
        host = _host_name(request.headers.get("host", ""))
        if host in self.allowed_hosts:
            return None
        return _refuse(403, "host_not_allowed", "this server does not answer to that Host")


def _method_refusal(scope: Scope) -> Response | None:
    """405 with ``Allow`` when a route has this path but not this method."""
    app = scope.get("app")
    for route in getattr(app, "routes", ()):
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return None
        if match is Match.PARTIAL:
            allowed = sorted(getattr(route, "methods", None) or ())
            response = _refuse(405, "method_not_allowed", f"{scope['method']} is not allowed here")
            response.headers["Allow"] = ", ".join(allowed)
            return response
    return None


def _csrf_refusal(request: Request) -> Response | None:
    """A request riding on the session cookie must echo the session's CSRF token."""
    session = session_of(request)
    if session is None or session.csrf_matches(request.headers.get(CSRF_HEADER)):
        return None
    return _refuse(403, "csrf_failed", f"a session request needs the {CSRF_HEADER} header")


def _cross_site_refusal(request: Request) -> Response | None:
    """Cross-site requests are refused: the Origin (when sent) must be the server's own, and
    the body must be JSON (a cross-site form cannot send that without a CORS preflight)."""
    origin = request.headers.get("origin")
    if origin is not None and origin != _own_origin(request):
        return _refuse(403, "origin_not_allowed", "cross-origin requests are not accepted")
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != "application/json":
        return _refuse(415, "unsupported_media_type", "the request body must be application/json")
    return None


def _own_origin(request: Request) -> str:
    url = URL(scope=request.scope)
    return f"{url.scheme}://{url.netloc}"


def _kind(path: str) -> Kind:
    if path in _PUBLIC_PATHS or path.startswith(_PUBLIC_PREFIXES):
        return "public"
    return "page" if path == "/" else "api"


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def _refuse(status: int, code: str, message: str) -> Response:
    headers = {"Cache-Control": "no-store"}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse({"error": {"code": code, "message": message}}, status, headers)
