"""Two small ASGI middlewares every response passes: a body-size limit and security headers.

:class:`BodyLimitMiddleware` enforces the limit while the body is read, not after: a declared
``Content-Length`` over the limit is refused before a byte is read, and a chunked body is
counted as it arrives, raising :class:`PayloadTooLarge` (413) the moment it goes over. The
whole body must also arrive within ``body_seconds`` of the first read, else
:class:`RequestTimeout` (408): a slow client cannot hold a request open.
"""

from __future__ import annotations

import asyncio

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citelab._errors import InvalidInput
from citelab.server._problems import PayloadTooLarge, RequestTimeout, error_response

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "DEFAULT_BODY_SECONDS",
    "DEFAULT_MAX_BODY_BYTES",
    "SECURITY_HEADERS",
    "BodyLimitMiddleware",
    "SecurityHeadersMiddleware",
]

DEFAULT_MAX_BODY_BYTES = 256 * 1024
"""Largest request body accepted by default (a question is at most 20,000 characters)."""
DEFAULT_BODY_SECONDS = 30.0
"""Longest a request body may take to arrive, by default."""

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
"""No inline script or style, nothing from other hosts, never framed."""

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
"""Sent with every response."""


class BodyLimitMiddleware:
    """Refuse request bodies over ``max_bytes`` (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int = DEFAULT_MAX_BODY_BYTES,
        body_seconds: float = DEFAULT_BODY_SECONDS,
    ) -> None:
        if max_bytes < 1 or body_seconds <= 0:
            raise ValueError("max_bytes and body_seconds must be positive")
        self.app = app
        self.max_bytes = max_bytes
        self.body_seconds = body_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            declared = _declared_length(Headers(scope=scope))
        except InvalidInput as exc:
            await error_response(exc, scope["path"])(scope, receive, send)
            return
        if declared is not None and declared > self.max_bytes:
            await error_response(PayloadTooLarge(self.max_bytes), scope["path"])(
                scope, receive, send
            )
            return
        await self.app(scope, self._counting(receive), send)

    def _counting(self, receive: Receive) -> Receive:
        received = 0
        complete = False
        deadline: float | None = None

        async def limited_receive() -> Message:
            nonlocal received, complete, deadline
            if complete:  # after the body, the next message is the disconnect: no deadline
                return await receive()
            loop = asyncio.get_running_loop()
            deadline = deadline or loop.time() + self.body_seconds
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise RequestTimeout(self.body_seconds) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise PayloadTooLarge(self.max_bytes)
                complete = not message.get("more_body", False)
            return message

        return limited_receive


class SecurityHeadersMiddleware:
    """Add :data:`SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _declared_length(headers: Headers) -> int | None:
    value = headers.get("content-length")
    if value is None:
        return None
    if not value.isdigit():
        raise InvalidInput("the Content-Length header must be a non-negative integer")
    return int(value)
