"""Errors as HTTP answers: one JSON shape, ``{"error": {"code", "message"}}``, everywhere.

The error family says the status (``Conflict`` 409, ``InvalidInput`` 400, ``NotFound`` 404,
and the server's own ``PayloadTooLarge`` 413 and ``UnsupportedMediaType`` 415). A model that
fails is a 502 (``ModelError``), 503 (``ModelUnavailable``) or 504 (``ModelTimeout``), and a
busy database a 503 (``Unavailable``), with ``Retry-After`` when the error knows when; an SSE
``error`` event carries the same code. A model failure's message is generic (its details name
endpoints) and logged under an error id, like anything else, which is a 500.
"""

from __future__ import annotations

import logging
import uuid
from http import HTTPStatus

from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

from citelab._errors import CitelabError, InvalidInput, ModelError, Unavailable
from citelab.events import ErrorEvent

__all__ = [
    "ErrorBody",
    "ErrorDetail",
    "PayloadTooLarge",
    "RequestTimeout",
    "UnsupportedMediaType",
    "error_event",
    "error_response",
    "problem",
    "retry_after",
]

_log = logging.getLogger("citelab.server")


class PayloadTooLarge(InvalidInput):
    """The request body is larger than the server accepts."""

    code = "payload_too_large"
    http_status = 413

    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is larger than {limit} bytes")
        self.limit = limit


class RequestTimeout(InvalidInput):
    """The request body did not arrive in time."""

    code = "request_timeout"
    http_status = 408

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the request body did not arrive within {seconds:g} s")
        self.seconds = seconds


class UnsupportedMediaType(InvalidInput):
    """The request body is not JSON."""

    code = "unsupported_media_type"
    http_status = 415


class ErrorDetail(BaseModel):
    """What went wrong."""

    model_config = ConfigDict(extra="forbid")

    code: str
    """A stable machine-readable code (``invalid_input``, ``not_found``, ``conflict``…)."""
    message: str
    """A sentence for people; says what was wrong and where."""


class ErrorBody(BaseModel):
    """The body of every error response."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorDetail


def problem(exc: BaseException, where: str) -> tuple[int, ErrorDetail]:
    """The status and the detail a client gets for ``exc``; a 500 is logged with its trace."""
    if isinstance(exc, CitelabError) and exc.http_status < 500:
        return exc.http_status, ErrorDetail(code=exc.code, message=str(exc))
    if isinstance(exc, Unavailable):
        return exc.http_status, ErrorDetail(code=exc.code, message=str(exc))
    if isinstance(exc, HTTPException) and exc.status_code < 500:
        phrase = HTTPStatus(exc.status_code).phrase
        return exc.status_code, ErrorDetail(code=_snake(phrase), message=f"{phrase}: {where}")
    error_id = uuid.uuid4().hex[:12]
    if isinstance(exc, ModelError):
        _log.error("model error %s while serving %s", error_id, where, exc_info=exc)
        message = f"{_MODEL_FAILURES[exc.http_status]} (error id {error_id}); see the server's log."
        return exc.http_status, ErrorDetail(code=exc.code, message=message)
    _log.error("error %s while serving %s", error_id, where, exc_info=exc)
    message = f"The server could not complete this request (error id {error_id}); see its log."
    return 500, ErrorDetail(code="internal_error", message=message)


_MODEL_FAILURES = {
    502: "The model failed to answer",
    503: "The model cannot answer now; try again later",
    504: "The model did not answer in time",
}


def retry_after(exc: BaseException) -> str | None:
    """The ``Retry-After`` value (whole seconds) ``exc`` suggests, if any."""
    seconds = getattr(exc, "retry_after", None) if isinstance(exc, CitelabError) else None
    if not isinstance(seconds, int | float) or seconds < 0:
        return None
    return str(max(1, round(seconds)))


def error_response(exc: BaseException, where: str) -> JSONResponse:
    """``exc`` as a JSON error response."""
    status, detail = problem(exc, where)
    headers = {"Cache-Control": "no-store"}
    if isinstance(exc, HTTPException) and exc.headers:
        headers.update(exc.headers)  # e.g. Allow on a 405
    wait = retry_after(exc)
    if wait is not None:
        headers["Retry-After"] = wait
    return JSONResponse(ErrorBody(error=detail).model_dump(), status_code=status, headers=headers)


def error_event(exc: BaseException, where: str) -> ErrorEvent:
    """``exc`` as the ``error`` event of a stream that has already started."""
    _, detail = problem(exc, where)
    return ErrorEvent(code=detail.code, message=detail.message)


def _snake(phrase: str) -> str:
    return phrase.lower().replace(" ", "_").replace("-", "_")
