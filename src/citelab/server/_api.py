"""The bodies of the HTTP API that are not events: feedback, documents and conversation
lists, in and out (a conversation shown again is :class:`citelab.answers.History`).

A question is :class:`citelab.events.Question`; an answer is :class:`citelab.events.DoneEvent`
(as one JSON object, or as the last of the ``references``/``token``/``done`` events).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "MAX_LISTED",
    "ConversationQuery",
    "DocumentRequest",
    "FeedbackRequest",
    "FeedbackResult",
]

MAX_LISTED = 100
"""The most conversations one ``GET /api/conversations`` lists."""


class FeedbackRequest(BaseModel):
    """A rating of one answered turn."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str = Field(min_length=1, max_length=200)
    """The conversation the turn belongs to."""
    turn: int = Field(ge=1, le=1_000_000, strict=True)
    """The 1-based turn number (the ``turn`` of the ``done`` event)."""
    value: Literal["up", "down"]
    """Thumbs up or thumbs down."""
    comment: str | None = Field(default=None, max_length=2000)
    """Optional words on what was good or wrong."""

    @field_validator("turn", mode="before")
    @classmethod
    def _integral_number(cls, value: Any) -> Any:
        # JSON (and the schema's "integer") counts 521.0 as the integer 521; strings and
        # booleans stay refused by the strict check.
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value


class FeedbackResult(BaseModel):
    """The rating was recorded (a new rating of the same turn replaces the old one)."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    turn: int
    value: Literal["up", "down"]


class DocumentRequest(BaseModel):
    """Which corpus document a source card's local document view shows."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(min_length=1, max_length=200)
    """The agent whose corpus holds the document (the conversation's agent)."""
    uri: str = Field(
        min_length=1,
        max_length=1000,
        # Documented for clients and schemathesis; the handler checks it with its own message.
        json_schema_extra={"pattern": r"^entity:[A-Za-z0-9_.-]+/[A-Za-z0-9_.:-]+$"},
    )
    """The source's ``entity:<type>/<id>`` URI."""


class ConversationQuery(BaseModel):
    """The query of ``GET /api/conversations``."""

    model_config = ConfigDict(extra="ignore")

    agent: str | None = Field(default=None, min_length=1, max_length=200)
    """Only this agent's conversations (the page's agent); all agents' when absent."""
    limit: int = Field(default=20, ge=1, le=MAX_LISTED)
    """The most conversations to list."""
