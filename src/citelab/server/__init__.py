"""HTTP answers: JSON or Server-Sent Events, the standalone page, and ``citelab serve``.

- :func:`create_app` — the Starlette app over an :class:`~citelab.answers.AnswerService`:
  ``POST /api/question`` (SSE when ``Accept: text/event-stream``, else one JSON answer),
  ``POST /api/feedback``, ``GET /`` (the page), ``GET /api/openapi.json``, ``/static/…``.
- :class:`Auth`, :class:`User`, :class:`UserDirectory`, :func:`load_users` — who may ask:
  bearer tokens or a browser session (cookie + CSRF header), optionally anonymous.
- :func:`serve` / :func:`serve_in_thread` — run it with uvicorn (port 0 picks a free port).
- :func:`openapi_document` — the OpenAPI 3.1 description, from the pydantic models.
- :func:`problem` — how an exception is shown to a client (status, code, message; a 500 is
  logged with its traceback and shown generically).
"""

from citelab.server._access import CSRF_HEADER, LOOPBACK_HOSTS, AccessMiddleware, Auth, reader_of
from citelab.server._api import FeedbackRequest, FeedbackResult
from citelab.server._app import DEFAULT_PING_SECONDS, create_app
from citelab.server._middleware import (
    CONTENT_SECURITY_POLICY,
    DEFAULT_MAX_BODY_BYTES,
    SECURITY_HEADERS,
)
from citelab.server._openapi import openapi_document
from citelab.server._problems import (
    ErrorBody,
    ErrorDetail,
    PayloadTooLarge,
    UnsupportedMediaType,
    problem,
)
from citelab.server._run import (
    RunningServer,
    is_loopback,
    listening_socket,
    page_url,
    serve,
    serve_in_thread,
)
from citelab.server._sessions import Session, SessionStore
from citelab.server._users import MIN_TOKEN_CHARS, User, UserDirectory, generate_token, load_users

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "CSRF_HEADER",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_PING_SECONDS",
    "LOOPBACK_HOSTS",
    "MIN_TOKEN_CHARS",
    "SECURITY_HEADERS",
    "AccessMiddleware",
    "Auth",
    "ErrorBody",
    "ErrorDetail",
    "FeedbackRequest",
    "FeedbackResult",
    "PayloadTooLarge",
    "RunningServer",
    "Session",
    "SessionStore",
    "UnsupportedMediaType",
    "User",
    "UserDirectory",
    "create_app",
    "generate_token",
    "is_loopback",
    "listening_socket",
    "load_users",
    "openapi_document",
    "page_url",
    "problem",
    "reader_of",
    "serve",
    "serve_in_thread",
]
