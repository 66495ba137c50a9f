"""Conversation records and where they are kept (in memory or in SQLite), with expiry.

A record is pinned to the agent that started it and owned by the user who started it (or by
nobody, for anonymous conversations). It holds the threaded history (question and finalized
answer per turn) and the sources the conversation holds for follow-ups.

Saves are versioned: a record's ``version`` is its number of turns, and a save of version
``n + 1`` only succeeds over version ``n``. Two follow-ups racing on one conversation thus
cannot silently overwrite each other's turn; the loser gets :class:`Conflict`.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field

from citelab._errors import Conflict
from citelab.answers._sqlite import SQLiteStore, first_value
from citelab.sources import Source

__all__ = [
    "ConversationRecord",
    "ConversationStore",
    "MemoryConversationStore",
    "SQLiteConversationStore",
    "TurnRecord",
]


class TurnRecord(BaseModel):
    """One finished turn of a conversation."""

    model_config = ConfigDict(extra="forbid")

    question: str
    """What the user asked."""
    answer: str
    """The finalized answer text the user got (or the no-answer message)."""
    runner_id: str
    """The turn's runner id."""
    log_id: str | None = None
    """The turn's log entry, for feedback."""
    trace_id: str | None = None
    """The turn's trace id, for scoring feedback."""
    no_answer: bool = False
    """True when the no-answer message was substituted."""
    cited: dict[int, str] = Field(default_factory=dict)
    """The sources ``answer`` cites: its number ``[n]`` → the source's uri."""
    created_at: float
    """Unix time the turn finished."""
    drew_on: list[tuple[str, str]] | None = None
    """``(entity_type, entity_id)`` of every corpus entity the turn's model was shown: a later
    turn gives this one to its model only if that turn's reader may read them all.
    ``None`` in records saved before it was kept."""
    done: dict[str, Any] | None = None
    """The ``done`` event the client got for this turn (its final text, references, suggested
    replies and contract message), so a client can show the conversation again; ``None`` in
    records saved before it was kept."""


class ConversationRecord(BaseModel):
    """A conversation: owner, pinned agent, history and held sources, with an expiry time."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str = Field(min_length=1)
    """The id clients send to continue the conversation."""
    agent: str
    """The agent every turn of this conversation runs (follow-ups are pinned to it)."""
    owner: str | None = None
    """The owning user id; ``None`` for anonymous-owned (bearer-by-id) conversations."""
    turns: list[TurnRecord] = Field(default_factory=list)
    """The threaded history, oldest first."""
    held_sources: list[Source] = Field(default_factory=list)
    """Sources held for follow-ups, as the next turn's model is shown them. Conversation-wide
    numbering: every source a turn cited, under its conversation number ``1..numbered``
    (ordered by number; one that became unreadable leaves its number unused), then the
    uncited ones numbered after them. Per-turn numbering: the last answer's cited sources,
    numbered as in its text, then the uncited ones."""
    numbered: int = Field(default=0, ge=0)
    """How many citation numbers the conversation has given out: ``[1]``..``[numbered]`` name
    the same source in every turn (``0`` under per-turn numbering)."""
    created_at: float
    """Unix time the conversation started."""
    expires_at: float
    """Unix time after which the conversation no longer exists."""

    @property
    def version(self) -> int:
        return len(self.turns)

    def expired(self, now: float) -> bool:
        return now >= self.expires_at


class ConversationStore(Protocol):
    """Where conversation records live."""

    async def load(self, conversation_id: str) -> ConversationRecord | None:
        """The record, or ``None`` when unknown (expiry is the caller's check)."""

    async def save(self, record: ConversationRecord) -> None:
        """Store ``record`` over version ``record.version - 1``; :class:`Conflict` otherwise."""

    async def purge_expired(self, now: float) -> int:
        """Delete every record expired at ``now``; returns how many."""

    async def owned_by(
        self, owner: str, *, now: float, agent: str | None = None, limit: int = 20
    ) -> list[ConversationRecord]:
        """The records ``owner`` owns that are not expired at ``now`` (only ``agent``'s when
        given), the most recently active first (the latest expiry: each turn sets it), at most
        ``limit``."""


def _version_conflict(conversation_id: str) -> Conflict:
    return Conflict(
        f"conversation {conversation_id!r} changed during this turn (another turn finished "
        "first); ask again"
    )


class MemoryConversationStore:
    """Records in a dict: for tests and notebooks that keep nothing."""

    def __init__(self) -> None:
        self._records: dict[str, str] = {}
        self._lock = threading.Lock()

    async def load(self, conversation_id: str) -> ConversationRecord | None:
        with self._lock:
            data = self._records.get(conversation_id)
        return ConversationRecord.model_validate_json(data) if data else None

    async def save(self, record: ConversationRecord) -> None:
        with self._lock:
            data = self._records.get(record.conversation_id)
            stored = ConversationRecord.model_validate_json(data).version if data else 0
            if stored != record.version - 1:
                raise _version_conflict(record.conversation_id)
            self._records[record.conversation_id] = record.model_dump_json()

    async def purge_expired(self, now: float) -> int:
        with self._lock:
            expired = [
                key
                for key, data in self._records.items()
                if ConversationRecord.model_validate_json(data).expired(now)
            ]
            for key in expired:
                del self._records[key]
        return len(expired)

    async def owned_by(
        self, owner: str, *, now: float, agent: str | None = None, limit: int = 20
    ) -> list[ConversationRecord]:
        with self._lock:
            records = [ConversationRecord.model_validate_json(d) for d in self._records.values()]
        mine = [
            record
            for record in records
            if record.owner == owner
            and not record.expired(now)
            and (agent is None or record.agent == agent)
        ]
        return sorted(mine, key=lambda record: -record.expires_at)[:limit]


class SQLiteConversationStore(SQLiteStore):
    """Records in a SQLite file; safe with many concurrent answers (WAL, one connection each)."""

    schema: ClassVar[list[str]] = [
        """CREATE TABLE IF NOT EXISTS conversations (
            conversation_id TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            expires_at REAL NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS conversations_expiry ON conversations (expires_at)",
        # A user's conversations, newest first, without a column of their own (older files
        # get the index when opened; the owner is in the record's JSON).
        """CREATE INDEX IF NOT EXISTS conversations_owner
            ON conversations (json_extract(data, '$.owner'), expires_at)""",
    ]

    async def load(self, conversation_id: str) -> ConversationRecord | None:
        data = await self._db.read_value(
            "SELECT data FROM conversations WHERE conversation_id = ?", (conversation_id,)
        )
        return ConversationRecord.model_validate_json(data) if data else None

    async def save(self, record: ConversationRecord) -> None:
        def upsert(conn: sqlite3.Connection) -> None:
            stored = first_value(
                conn,
                "SELECT version FROM conversations WHERE conversation_id = ?",
                (record.conversation_id,),
            )
            if (stored or 0) != record.version - 1:
                raise _version_conflict(record.conversation_id)
            conn.execute(
                "INSERT OR REPLACE INTO conversations VALUES (?, ?, ?, ?)",
                (
                    record.conversation_id,
                    record.version,
                    record.expires_at,
                    record.model_dump_json(),
                ),
            )

        await self._db.write_retrying(upsert)

    async def purge_expired(self, now: float) -> int:
        def delete(conn: sqlite3.Connection) -> int:
            return conn.execute("DELETE FROM conversations WHERE expires_at <= ?", (now,)).rowcount

        return await self._db.write(delete)

    async def owned_by(
        self, owner: str, *, now: float, agent: str | None = None, limit: int = 20
    ) -> list[ConversationRecord]:
        sql = (
            "SELECT data FROM conversations WHERE json_extract(data, '$.owner') = ? "
            "AND expires_at > ?"
        )
        parameters: list[Any] = [owner, now]
        if agent is not None:
            sql += " AND json_extract(data, '$.agent') = ?"
            parameters.append(agent)
        sql += " ORDER BY expires_at DESC LIMIT ?"
        parameters.append(limit)
        rows = await self._db.read_column(sql, parameters)
        return [ConversationRecord.model_validate_json(data) for data in rows]
