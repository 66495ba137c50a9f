"""The event protocol every transport speaks: references · token · done · error.

Input is :class:`Question` (``{agent, question, conversation_id?}``). The same events reach
the notebook widget (custom messages), HTTP clients (SSE or one JSON answer) and logs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CitedSpan",
    "DoneEvent",
    "ErrorEvent",
    "Event",
    "Question",
    "Reference",
    "ReferencesEvent",
    "SuggestedReplyPayload",
    "TokenEvent",
]


class Question(BaseModel):
    """What a client sends to ask."""

    model_config = ConfigDict(extra="forbid")

    agent: str | None = Field(default=None, min_length=1, max_length=200)
    """The agent that answers (follow-ups are pinned to the conversation's agent); omitted,
    the transport's default agent (``citelab serve``: its ``--agent``, else ``default`` when
    configured, else the first agent, e.g. the agent of ``--corpus``)."""
    question: str = Field(max_length=20_000, json_schema_extra={"minLength": 1, "pattern": r"\S"})
    """The question text; empty or whitespace-only is rejected by the service (the schema
    says so: at least one character that is not white space)."""
    conversation_id: str | None = Field(default=None, max_length=200)
    """Continue this conversation; omit to start a new one."""


class CitedSpan(BaseModel):
    """A part of a source's text that a claim of the answer rests on."""

    text: str
    """The supporting sentence(s), plain text (untrusted)."""
    start: int | None = None
    """Where ``text`` starts in the source's text (the cited translation's ``content``; code
    points); ``None`` when not known."""
    end: int | None = None
    """Where ``text`` ends in the source's text (code points, exclusive)."""


class Reference(BaseModel):
    """One source as a client shows it: a numbered card."""

    number: int
    """The citation number ``[n]`` the answer text uses. Under the default (conversation)
    numbering it is the source's number for the whole conversation: the same in every turn
    that cites it, and new sources continue the count. Under ``numbering = "turn"`` it is
    this turn's own 1..k."""
    entity_type: str | None = None
    """Entity type, when the source is a corpus entity."""
    entity_id: str | None = None
    """Entity id, when the source is a corpus entity."""
    uri: str
    """The source's URI (``entity:<type>/<id>`` for entities); the resource_link ``uri``."""
    title: str
    """The label to show (untrusted: escape it)."""
    url: str | None = None
    """Where to open the source (untrusted: check the scheme)."""
    langcode: str | None = None
    """Language of the version cited."""
    snippet: str = ""
    """Plain text excerpt shown on the card (untrusted)."""
    detail: str | None = None
    """The field value that tells same-title sources apart (e.g. the degree level ``MSc``):
    the entity's first short text field; ``None`` when it has none (untrusted)."""
    passage: str | None = None
    """The supporting passage: the text of the best retrieved chunk of this source, plain
    text (untrusted); ``None`` when the source came without one (a listed label)."""
    restricted: bool = False
    """True when access rules apply to the source (not every reader may read it)."""
    cited_spans: list[CitedSpan] = Field(default_factory=list)
    """The sentence(s) of this source the answer's claims rest on, one per distinct span, in
    the order the answer cites them: what a document view marks (``passage`` is the whole
    retrieved chunk). Empty on the provisional ``references`` event and for sources without
    a passage."""


class SuggestedReplyPayload(BaseModel):
    label: str
    message: str | None = None


class ReferencesEvent(BaseModel):
    """The provisional source list, sent before generation completes."""

    type: Literal["references"] = "references"
    references: list[Reference]
    """Every source held so far, under the numbers the model is shown (provisional: a
    source nothing cites is dropped at ``done``)."""


class TokenEvent(BaseModel):
    """A raw Markdown piece of the answer, in order."""

    type: Literal["token"] = "token"
    text: str


class DoneEvent(BaseModel):
    """The final state of a turn: it replaces the provisional references."""

    type: Literal["done"] = "done"
    text: str
    """The finalized answer text (markers renumbered, dangling ones removed)."""
    references: list[Reference]
    """The sources this turn's text cites, in first-citation order within the turn, each under
    its final number (conversation-wide by default: a source cited in an earlier turn keeps
    its number, new ones continue the count; ``numbering = "turn"``: 1..k)."""
    suggested_replies: list[SuggestedReplyPayload] = []
    message: dict[str, Any]
    """The AnswerMessage in its wire shape (MCP blocks + ``_meta``)."""
    conversation_id: str
    turn: int
    log_id: str | None = None
    trace_id: str | None = None
    no_answer: bool = False
    """True when the no-answer message was substituted."""


class ErrorEvent(BaseModel):
    """The turn failed; the conversation stays usable."""

    type: Literal["error"] = "error"
    code: str
    message: str


Event = Annotated[
    ReferencesEvent | TokenEvent | DoneEvent | ErrorEvent, Field(discriminator="type")
]
