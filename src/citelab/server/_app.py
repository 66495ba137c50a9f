"""The Starlette app behind ``citelab serve``.

Routes: ``GET /`` (the page), ``POST /api/question``, ``POST /api/feedback``,
``POST /api/document`` (a source's document, for the page's local document view),
``GET /api/conversations`` (the signed-in user's recent conversations, per agent) and
``GET /api/conversations/{conversation_id}`` (its turns, to show it again),
``GET /api/openapi.json``, ``/static/…`` (the front-end bundle) and ``/assets/…`` (the page's
stylesheet). Middleware, outermost first: security headers on every response; access
(authentication, CSRF, origin, host); the request body limit.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from citelab._errors import ConfigError
from citelab._version import __version__
from citelab.answers import AnswerService
from citelab.server._access import LOOPBACK_HOSTS, AccessMiddleware, Auth
from citelab.server._handlers import Handlers
from citelab.server._middleware import (
    DEFAULT_BODY_SECONDS,
    DEFAULT_MAX_BODY_BYTES,
    BodyLimitMiddleware,
    SecurityHeadersMiddleware,
)
from citelab.server._openapi import openapi_document
from citelab.server._problems import error_response

__all__ = ["DEFAULT_PING_SECONDS", "create_app"]

DEFAULT_PING_SECONDS = 15.0
"""How often an idle SSE stream gets a keep-alive comment."""


def create_app(
    service: AnswerService,
    *,
    auth: Auth,
    default_agent: str = "default",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    allowed_hosts: Iterable[str] | None = LOOPBACK_HOSTS,
    ping_seconds: float = DEFAULT_PING_SECONDS,
    body_seconds: float = DEFAULT_BODY_SECONDS,
) -> Starlette:
    """The HTTP app answering with ``service``.

    ``auth`` says who may ask (tokens, anonymous mode). ``default_agent`` is the page's agent
    when ``?agent=`` is absent. ``allowed_hosts`` are the ``Host`` names served (``None``:
    any; the default suits a loopback server). A request body must arrive within
    ``body_seconds`` (408 after it).
    """
    if default_agent not in service.agents:
        known = sorted(service.agents)
        raise ConfigError(f"default agent {default_agent!r} is not configured (known: {known})")
    handlers = Handlers(
        service,
        default_agent=default_agent,
        openapi=openapi_document(
            version=__version__,
            cookie_name=auth.cookie_name,
            anonymous=auth.anonymous,
            max_body_bytes=max_body_bytes,
        ),
        ping_seconds=ping_seconds,
    )
    app = Starlette(
        routes=[
            Route("/", handlers.page, methods=["GET"]),
            Route("/api/question", handlers.question, methods=["POST"]),
            Route("/api/feedback", handlers.feedback, methods=["POST"]),
            Route("/api/document", handlers.document, methods=["POST"]),
            Route("/api/conversations", handlers.conversations, methods=["GET"]),
            Route("/api/conversations/{conversation_id}", handlers.conversation, methods=["GET"]),
            Route("/api/openapi.json", handlers.openapi, methods=["GET"]),
            Mount("/static", StaticFiles(packages=[("citelab", "static")]), name="static"),
            Mount("/assets", StaticFiles(packages=[("citelab.server", "assets")]), name="assets"),
        ],
        middleware=[
            Middleware(SecurityHeadersMiddleware),
            Middleware(AccessMiddleware, auth=auth, allowed_hosts=allowed_hosts),
            Middleware(BodyLimitMiddleware, max_bytes=max_body_bytes, body_seconds=body_seconds),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
    )
    app.state.service = service
    app.state.auth = auth
    return app


async def _http_error(request: Request, exc: Exception) -> Response:
    return error_response(exc, f"{request.method} {request.url.path}")


async def _server_error(request: Request, exc: Exception) -> Response:
    return error_response(exc, f"{request.method} {request.url.path}")
