"""The endpoints. Authentication already happened (see ``_access``); handlers only read who
is asking, call the answer service, and map what it raises (see ``_problems``)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Coroutine
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from citelab._errors import InvalidInput, NotFound
from citelab.answers import AnswerService, ConversationList, read_document
from citelab.events import Question
from citelab.server._access import reader_of, session_of
from citelab.server._api import (
    ConversationQuery,
    DocumentRequest,
    FeedbackRequest,
    FeedbackResult,
)
from citelab.server._page import access_denied_page, render_page
from citelab.server._problems import error_response
from citelab.server._stream import AnswerStream, sse_frames

__all__ = ["Handlers", "read_body", "wants_event_stream"]

_Body = TypeVar("_Body", bound=BaseModel)
_T = TypeVar("_T")
_CLIENT_GONE = 499  # nginx's "client closed request": nobody reads it, logs may
_NO_STORE = {"Cache-Control": "no-store"}
_MAX_PROBLEMS = 8
_MAX_KEY_CHARS = 60
_MAX_ID_CHARS = 200  # as a question's conversation_id


class Handlers:
    """The endpoints of one app, bound to its answer service."""

    def __init__(
        self,
        service: AnswerService,
        *,
        default_agent: str,
        openapi: dict[str, Any],
        ping_seconds: float,
    ) -> None:
        self.service = service
        self.default_agent = default_agent
        self.openapi_document = openapi
        self.ping_seconds = ping_seconds

    async def question(self, request: Request) -> Response:
        """``POST /api/question``: SSE when the client accepts it, else one JSON answer."""
        where = "POST /api/question"
        try:
            asked = self._with_agent(await read_body(request, Question))
            if wants_event_stream(request.headers.get("accept", "")):
                return await self._stream(asked, request, where)
            answer = await until_disconnected(
                request,
                self.service.answer(
                    asked.agent or self.default_agent,
                    asked.question,
                    asked.conversation_id,
                    reader_of(request),
                ),
            )
        except Exception as exc:
            return error_response(exc, where)
        if answer is None:  # the client went away: the answer was cancelled, nothing saved
            return Response(status_code=_CLIENT_GONE)
        body = answer.to_done_event().model_dump_json()
        return Response(body, media_type="application/json", headers=_NO_STORE)

    def _with_agent(self, asked: Question) -> Question:
        """The question with the server's default agent when it names none."""
        if asked.agent is not None:
            return asked
        return asked.model_copy(update={"agent": self.default_agent})

    async def _stream(self, asked: Question, request: Request, where: str) -> Response:
        stream = AnswerStream(self.service, asked, reader_of(request))
        try:
            first = await until_disconnected(request, stream.next())
        except BaseException:
            stream.cancel()
            raise
        if first is None:
            stream.cancel()
            return Response(status_code=_CLIENT_GONE)
        if isinstance(first, BaseException):
            return error_response(first, where)
        return EventSourceResponse(
            sse_frames(first, stream, where), ping=self.ping_seconds, headers=_NO_STORE
        )

    async def feedback(self, request: Request) -> Response:
        """``POST /api/feedback``: rate one turn."""
        where = "POST /api/feedback"
        try:
            rating = await read_body(request, FeedbackRequest)
            await self.service.feedback.record(
                rating.conversation_id,
                rating.turn,
                rating.value,
                rating.comment,
                user=reader_of(request),
            )
        except Exception as exc:
            return error_response(exc, where)
        result = FeedbackResult(
            conversation_id=rating.conversation_id, turn=rating.turn, value=rating.value
        )
        return JSONResponse(result.model_dump(), headers=_NO_STORE)

    async def document(self, request: Request) -> Response:
        """``POST /api/document``: one ``entity:`` document, as the asker may read it."""
        where = "POST /api/document"
        try:
            wanted = await read_body(request, DocumentRequest)
            document = await read_document(
                self.service, wanted.agent, wanted.uri, reader_of(request)
            )
        except Exception as exc:
            return error_response(exc, where)
        return JSONResponse(document.model_dump(mode="json"), headers=_NO_STORE)

    async def conversations(self, request: Request) -> Response:
        """``GET /api/conversations``: the signed-in user's recent conversations."""
        where = "GET /api/conversations"
        try:
            query = _query(request, ConversationQuery)
            if query.agent is not None and query.agent not in self.service.agents:
                raise NotFound(f"agent {query.agent!r} not found")
            listed = await self.service.recent_conversations(
                reader_of(request), agent=query.agent, limit=query.limit
            )
        except Exception as exc:
            return error_response(exc, where)
        body = ConversationList(conversations=listed)
        return JSONResponse(body.model_dump(mode="json"), headers=_NO_STORE)

    async def conversation(self, request: Request) -> Response:
        """``GET /api/conversations/{conversation_id}``: its turns, to show it again."""
        where = "GET /api/conversations/{conversation_id}"
        conversation_id = request.path_params["conversation_id"]
        try:
            if len(conversation_id) > _MAX_ID_CHARS:
                raise InvalidInput(
                    f"conversation_id: at most {_MAX_ID_CHARS} characters, got "
                    f"{len(conversation_id)}"
                )
            history = await self.service.history(conversation_id, reader_of(request))
        except Exception as exc:
            return error_response(exc, where)
        return JSONResponse(history.model_dump(mode="json"), headers=_NO_STORE)

    async def page(self, request: Request) -> Response:
        """``GET /``: the chat page for ``?agent=`` (default: the server's default agent)."""
        session = session_of(request)  # None: an anonymous visit, which needs no CSRF token
        name = request.query_params.get("agent", self.default_agent)
        config = self.service.agents.get(name)
        if config is None:
            page = access_denied_page(f"There is no agent named {name!r} on this server.")
            return HTMLResponse(page, status_code=404, headers=_NO_STORE)
        html = render_page(
            agent=name,
            csrf_token=session.csrf_token if session is not None else "",
            user_id=reader_of(request).user_id,
            feedback_enabled=config.feedback_enabled,
            agents=[n for n, c in self.service.agents.items() if c.enabled],
            starters=config.starter_questions,
        )
        return HTMLResponse(html, headers=_NO_STORE)

    async def openapi(self, request: Request) -> Response:
        """``GET /api/openapi.json``."""
        return JSONResponse(self.openapi_document)


async def until_disconnected(request: Request, work: Coroutine[Any, Any, _T]) -> _T | None:
    """``work``'s result, or ``None`` (``work`` cancelled) if the client disconnects first.

    Call once the body has been read: the next message of the request is then its
    disconnect. JSON answers thus end as SSE ones do when the client goes away: cancelled,
    with nothing saved."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnect(request))
    try:
        await asyncio.wait((task, watcher), return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    finally:
        watcher.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None


async def _disconnect(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _query(request: Request, model: type[_Body]) -> _Body:
    """The query string as ``model``; anything wrong is :class:`InvalidInput` saying what."""
    try:
        return model.model_validate(dict(request.query_params))
    except ValidationError as exc:
        raise _invalid(exc) from None


async def read_body(request: Request, model: type[_Body]) -> _Body:
    """The JSON body as ``model``; anything wrong is :class:`InvalidInput` saying what."""
    raw = await request.body()
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        unparsed = any(error["type"] == "json_invalid" for error in exc.errors())
        raise (unparsed and _surrogate(raw)) or _invalid(exc) from None


_ESCAPED_SURROGATE = re.compile(
    rb"(?<!\\)(?:\\\\)*\\u(d[89ab][0-9a-f]{2})(?!\\ud[c-f][0-9a-f]{2})"
    rb"|(?<!\\u(?:d[89ab][0-9a-f]{2}))(?<!\\)(?:\\\\)*\\u(d[c-f][0-9a-f]{2})",
    re.IGNORECASE,
)


def _surrogate(raw: bytes) -> InvalidInput | None:
    """A JSON ``\\uXXXX`` escape of half a UTF-16 pair, which is no character: say so plainly
    (the parser's own message for it is "unexpected end")."""
    found = _ESCAPED_SURROGATE.search(raw)
    if found is None:
        return None
    code = (found.group(1) or found.group(2)).decode().lower()
    return InvalidInput(
        f"the body is not valid JSON: a lone UTF-16 surrogate escape \\u{code} at byte "
        f"{found.start()} is not a character (a surrogate must be paired, high then low)"
    )


def wants_event_stream(accept: str) -> bool:
    """True when the ``Accept`` header asks for ``text/event-stream`` (with q > 0)."""
    for item in accept.split(","):
        media_type, *params = (part.strip() for part in item.split(";"))
        if media_type.lower() != "text/event-stream":
            continue
        return not any(_is_zero_quality(param) for param in params)
    return False


def _is_zero_quality(param: str) -> bool:
    name, _, value = param.partition("=")
    if name.strip().lower() != "q":
        return False
    try:
        return float(value) == 0.0
    except ValueError:
        return False


def _invalid(exc: ValidationError) -> InvalidInput:
    errors = exc.errors(include_input=False, include_url=False)
    for error in errors:
        if error["type"] == "json_invalid":
            return InvalidInput(f"the body is not valid JSON: {error['msg']}")
    problems = [f"{_location(error['loc'])}: {error['msg']}" for error in errors[:_MAX_PROBLEMS]]
    more = len(errors) - _MAX_PROBLEMS
    if more > 0:
        problems.append(f"and {more} more")
    return InvalidInput("invalid request: " + "; ".join(problems))


def _location(loc: tuple[int | str, ...]) -> str:
    # Unknown keys are client text: keep them short in the message.
    parts = [str(part)[:_MAX_KEY_CHARS] for part in loc]
    return ".".join(parts) or "body"
