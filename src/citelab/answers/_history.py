"""A user's conversations as clients list and show them again (``GET /api/conversations``).

:class:`ConversationSummary` is one line of a "Recent conversations" list; :class:`History`
is a conversation's turns with the ``done`` event each one ended with, so a client redraws it
as it was. What a reader may see follows the answer service's rules:

- the list holds only the conversations the signed-in user owns (anonymous conversations
  belong to nobody: they are bearer-by-id, and a list of them would show everyone's);
- a conversation by id follows the owner rules of answering (anonymous-owned: anyone holding
  the id; user-owned: that user only; otherwise not found);
- a turn that drew on a document the reader may no longer read (access changed) is
  *withheld*: its question is shown, its answer and sources are not, as the model is not
  shown it either.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from citelab.events import DoneEvent

__all__ = ["ConversationList", "ConversationSummary", "History", "HistoryTurn"]

FIRST_QUESTION_CHARS = 300
"""The longest first question a summary carries (longer ones are cut, ending with "…")."""


class ConversationSummary(BaseModel):
    """One of a user's conversations, as a list shows it."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    """The id to continue it (``conversation_id`` of a question) or show it again."""
    agent: str
    """The agent it is pinned to."""
    first_question: str
    """Its first question (at most 300 characters; a longer one is cut and ends with "…")."""
    turns: int = Field(ge=1)
    """How many turns it has."""
    created_at: float
    """Unix time it started."""
    updated_at: float
    """Unix time its last turn finished."""
    expires_at: float
    """Unix time after which it no longer exists (each turn moves it on)."""


class ConversationList(BaseModel):
    """The signed-in user's recent conversations, the most recently active first."""

    model_config = ConfigDict(extra="forbid")

    conversations: list[ConversationSummary]


class HistoryTurn(BaseModel):
    """One turn of a conversation shown again."""

    model_config = ConfigDict(extra="forbid")

    turn: int = Field(ge=1)
    """Its 1-based number (the ``turn`` of its ``done`` event)."""
    question: str
    """What was asked."""
    created_at: float
    """Unix time it finished."""
    no_answer: bool = False
    """True when the no-answer message was given."""
    withheld: bool = False
    """True when it drew on a document this reader may no longer read: ``answer`` and
    ``done`` are then absent."""
    answer: str | None = None
    """The finalized answer text (Markdown with ``[n]`` markers)."""
    done: DoneEvent | None = None
    """The ``done`` event the client got (final text, references, suggested replies, the
    contract message); absent for turns saved before it was kept, and when withheld."""


class History(BaseModel):
    """A conversation's turns, oldest first, as its reader may see them."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    agent: str
    """The agent it is pinned to (a follow-up runs it, whatever agent the question names)."""
    created_at: float
    updated_at: float
    expires_at: float
    turns: list[HistoryTurn]


def first_question(question: str) -> str:
    """The question as a summary carries it (cut at :data:`FIRST_QUESTION_CHARS`)."""
    text = " ".join(question.split())
    if len(text) <= FIRST_QUESTION_CHARS:
        return text
    return text[: FIRST_QUESTION_CHARS - 1] + "…"
