"""One turn of a chat as the kernel keeps it: its trait form, its record, its fallback HTML."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from citelab._errors import CitelabError
from citelab.agent import ToolCallRecord
from citelab.answers import Answer
from citelab.contract import AnswerMessage, render_message_html, sanitize_html
from citelab.events import ErrorEvent, Reference

__all__ = [
    "RECORD_COLUMNS",
    "ChatTurn",
    "TurnStatus",
    "conversation_html",
    "error_event",
    "rounds_view",
]

TurnStatus = Literal["pending", "streaming", "done", "error"]

STOPPED_CODES = frozenset({"cancelled", "stopped"})
"""Error codes of a turn someone stopped (Stop, or a new question): shown as stopped, not as an
error (``js/views/turn_view.js`` says the same)."""

RECORD_COLUMNS = (
    "turn_id",
    "conversation_id",
    "turn",
    "agent",
    "question",
    "followup",
    "status",
    "answer",
    "n_sources",
    "source_uris",
    "source_titles",
    "suggested_replies",
    "no_answer",
    "error_code",
    "error_message",
    "feedback",
    "log_id",
    "trace_id",
    "tokens",
    "token_messages",
    "first_token_seconds",
    "seconds",
)
"""The columns of :meth:`ChatTurn.record`, in order (``Chat.to_pandas()`` keeps them)."""


@dataclass
class ChatTurn:
    """A question and its answer, from ``turn_start`` to ``done`` or ``error``."""

    turn_id: str
    question: str
    followup: bool
    agent: str
    started_at: float
    status: TurnStatus = "pending"
    references: list[dict[str, Any]] | None = None
    answer: Answer | None = None
    error: dict[str, str] | None = None
    feedback: dict[str, str] | None = None
    tokens: int = 0
    token_messages: int = 0
    first_token_at: float | None = None
    finished_at: float | None = None
    streamed: list[str] = field(default_factory=list)
    wire: dict[str, Any] | None = None
    """The answer's AnswerMessage in its wire shape (once done)."""
    inspection: dict[str, Any] | None = None
    """What the model was shown and wrote, per round (once done): see :func:`rounds_view`."""

    @property
    def text(self) -> str:
        """The final text once done, else what has streamed so far."""
        return self.answer.text if self.answer is not None else "".join(self.streamed)

    @property
    def message(self) -> AnswerMessage | None:
        return self.answer.message if self.answer is not None else None

    def set_references(self, references: Sequence[Reference]) -> None:
        self.references = [reference.model_dump(mode="json") for reference in references]
        self.status = "streaming"

    def add_text(self, text: str, now: float) -> None:
        if self.first_token_at is None:
            self.first_token_at = now
        self.streamed.append(text)
        self.status = "streaming"

    def finish(self, answer: Answer, now: float) -> None:
        self.answer = answer
        self.references = [reference.model_dump(mode="json") for reference in answer.references]
        self.wire = answer.message.to_wire()
        self.inspection = rounds_view(answer)
        self.status = "done"
        self.finished_at = now

    def fail(self, event: ErrorEvent, now: float) -> None:
        self.error = {"code": event.code, "message": event.message}
        self.status = "error"
        self.finished_at = now

    def to_trait(self) -> dict[str, Any]:
        """The turn as the front end's ``turns`` trait holds it (``js/contract/model.js``
        ``Turn``)."""
        answer = self.answer
        return {
            "turn_id": self.turn_id,
            "question": self.question,
            "followup": self.followup,
            "status": self.status,
            "text": self.text,
            "references": self.references,
            "suggested_replies": _replies(answer),
            "conversation_id": answer.conversation_id if answer else None,
            "turn": answer.turn if answer else None,
            "log_id": answer.log_id if answer else None,
            "trace_id": answer.trace_id if answer else None,
            "no_answer": answer.no_answer if answer else False,
            "error": self.error,
            "feedback": self.feedback,
            "message": self.wire,
            "rounds": self.inspection,
        }

    def record(self) -> dict[str, Any]:
        """One flat row for pandas (keys: :data:`RECORD_COLUMNS`)."""
        answer = self.answer
        sources = answer.sources if answer else []
        return {
            "turn_id": self.turn_id,
            "conversation_id": answer.conversation_id if answer else None,
            "turn": answer.turn if answer else None,
            "agent": answer.agent if answer else self.agent,
            "question": self.question,
            "followup": self.followup,
            "status": self.status,
            "answer": self.text,
            "n_sources": len(sources),
            "source_uris": [source.uri for source in sources],
            "source_titles": [source.title for source in sources],
            "suggested_replies": [reply["label"] for reply in _replies(answer)],
            "no_answer": answer.no_answer if answer else False,
            "error_code": self.error["code"] if self.error else None,
            "error_message": self.error["message"] if self.error else None,
            "feedback": self.feedback["value"] if self.feedback else None,
            "log_id": answer.log_id if answer else None,
            "trace_id": answer.trace_id if answer else None,
            "tokens": self.tokens,
            "token_messages": self.token_messages,
            "first_token_seconds": _elapsed(self.started_at, self.first_token_at),
            "seconds": _elapsed(self.started_at, self.finished_at),
        }

    def to_html(self) -> str:
        """The turn as static HTML (question, answer, sources, replies or error); unsanitized
        pieces are escaped, rendered ones come from the contract's sanitizing renderer."""
        parts = [f"<p><strong>Question:</strong> {html.escape(self.question)}</p>"]
        if self.message is not None:
            parts.append(render_message_html(self.message, id_prefix=f"t{self.turn_id}"))
            labels = [html.escape(reply["label"]) for reply in _replies(self.answer)]
            if labels:
                parts.append("<p><em>Suggested replies:</em> " + " · ".join(labels) + "</p>")
        elif self.error is not None and self.error["code"] in STOPPED_CODES:
            streamed = html.escape(self.text)
            if streamed:
                parts.append(f"<p>{streamed}</p><p><em>Stopped: the answer is incomplete.</em></p>")
            else:
                parts.append("<p><em>Stopped before an answer began.</em></p>")
        elif self.error is not None:
            parts.append(f"<p><strong>Error:</strong> {html.escape(self.error['message'])}</p>")
        else:
            streamed = html.escape(self.text)
            parts.append(f"<p><em>Answering…</em> {streamed}</p>" if streamed else "")
        return "".join(parts)


def conversation_html(turns: Sequence[ChatTurn], *, empty: str) -> str:
    """Every turn as one sanitized HTML fragment (``empty`` when there are none)."""
    if not turns:
        return sanitize_html(f"<p><em>{html.escape(empty)}</em></p>")
    return sanitize_html("".join(turn.to_html() for turn in turns))


def error_event(exc: BaseException) -> ErrorEvent:
    """The ``error`` event for a failed turn: citelab's own errors say what went wrong."""
    if isinstance(exc, CitelabError):
        return ErrorEvent(code=exc.code, message=str(exc))
    if isinstance(exc, asyncio.CancelledError):
        return ErrorEvent(code="cancelled", message="The question was cancelled.")
    return ErrorEvent(code="internal_error", message=f"{type(exc).__name__}: {exc}")


def rounds_view(answer: Answer) -> dict[str, Any]:
    """The chat's "Prompt and rounds" data for one answer: the system prompt the model last
    saw, the forced search, and per round its tool calls (arguments as written, the tool
    message as rewritten), the raw text and why it stopped."""
    system_prompt = ""
    for round_ in answer.rounds:
        for message in round_.messages:
            if message["role"] == "system":
                system_prompt = message["content"]
    return {
        "system_prompt": system_prompt,
        "forced": [_call_view(call) for call in answer.forced],
        "rounds": [
            {
                "index": round_.index,
                "finish_reason": round_.finish_reason,
                "text": round_.text,
                "tool_calls": [_call_view(call) for call in round_.tool_calls],
            }
            for round_ in answer.rounds
        ],
    }


def _call_view(call: ToolCallRecord) -> dict[str, Any]:
    return {
        "name": call.name,
        "arguments": call.arguments,
        "error": call.error,
        "message": call.message,
    }


def _replies(answer: Answer | None) -> list[dict[str, Any]]:
    if answer is None:
        return []
    return [reply.model_dump(mode="json", exclude_none=True) for reply in answer.suggested_replies]


def _elapsed(start: float, end: float | None) -> float | None:
    return None if end is None else round(end - start, 6)
