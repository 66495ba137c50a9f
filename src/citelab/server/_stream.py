"""One answer as a stream of events: the service's callbacks feed a queue the response reads.

The answer runs in its own task, so the response can wait for the first event before it
commits to a status: an error raised before anything was sent (bad question, unknown agent,
someone else's conversation) still becomes a plain HTTP error, and only an error after the
stream started becomes an ``error`` event. The task is cancelled when the client goes away.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from sse_starlette import ServerSentEvent

from citelab.answers import AnswerService
from citelab.corpus import Reader
from citelab.events import DoneEvent, ErrorEvent, Question, Reference, ReferencesEvent, TokenEvent
from citelab.server._problems import error_event

__all__ = ["AnswerStream", "StreamItem", "sse_frames"]

StreamItem = ReferencesEvent | TokenEvent | DoneEvent | BaseException
"""What the queue carries: an event, or the exception that ended the answer."""


class AnswerStream:
    """The events of one answer, in order; the last is ``done`` or an exception."""

    def __init__(self, service: AnswerService, asked: Question, reader: Reader) -> None:
        self._items: asyncio.Queue[StreamItem] = asyncio.Queue()
        self._task = asyncio.create_task(self._run(service, asked, reader))
        self._task.add_done_callback(self._escaped)

    async def next(self) -> StreamItem:
        """The next event (waits for it)."""
        return await self._items.get()

    def cancel(self) -> None:
        """Stop the answer if it is still running (the client went away)."""
        if not self._task.done():
            self._task.cancel()

    async def _run(self, service: AnswerService, asked: Question, reader: Reader) -> None:
        try:
            assert asked.agent is not None  # the handler gave it the server's default
            answer = await service.answer(
                asked.agent,
                asked.question,
                asked.conversation_id,
                reader,
                on_references=self._references,
                on_token=self._token,
            )
        except Exception as exc:
            self._items.put_nowait(exc)
        else:
            self._items.put_nowait(answer.to_done_event())

    def _escaped(self, task: asyncio.Task[None]) -> None:
        # Only what ``_run`` does not catch lands here: a BaseException such as a panic in a
        # native extension. The stream must still end, with an error, instead of hanging.
        escaped = None if task.cancelled() else task.exception()
        if escaped is not None:
            self._items.put_nowait(escaped)

    def _references(self, references: list[Reference]) -> None:
        self._items.put_nowait(ReferencesEvent(references=references))

    def _token(self, text: str) -> None:
        self._items.put_nowait(TokenEvent(text=text))


async def sse_frames(
    first: StreamItem, stream: AnswerStream, where: str
) -> AsyncIterator[ServerSentEvent]:
    """SSE frames from ``first`` on until ``done`` or ``error`` (event name = event type)."""
    item = first
    try:
        while True:
            event = error_event(item, where) if isinstance(item, BaseException) else item
            yield ServerSentEvent(data=event.model_dump_json(), event=event.type)
            if isinstance(event, DoneEvent | ErrorEvent):
                return
            item = await stream.next()
    finally:
        stream.cancel()
