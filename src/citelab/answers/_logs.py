"""Answer logs: one entry per turn, found again by its runner id.

The service writes an entry when a turn ends (answered, no-answer, or failed) and then
captures the entry's log id and trace id with one query for the newest entry of the turn's
runner, as the seed's pipeline does with ``ai_agents_runner_<runnerId>``. Feedback annotates
the entry later (see :mod:`citelab.answers._feedback`).
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field

from citelab._errors import NotFound
from citelab.answers._sqlite import SQLiteStore, first_value

__all__ = [
    "LogEntry",
    "LogStore",
    "MemoryLogStore",
    "SQLiteLogStore",
    "new_log_id",
    "new_trace_id",
    "runner_tag",
]


def new_log_id() -> str:
    return uuid.uuid4().hex


def new_trace_id() -> str:
    """A W3C-style trace id (32 lowercase hex digits), the format Langfuse accepts."""
    return uuid.uuid4().hex


def runner_tag(runner_id: str) -> str:
    """The tag that ties a log entry to the agent runner of one turn."""
    return f"ai_agents_runner_{runner_id}"


class LogEntry(BaseModel):
    """What one turn did: who ran it, what the model was told and wrote, and what it cited."""

    model_config = ConfigDict(extra="forbid")

    log_id: str = Field(default_factory=new_log_id)
    """Unique id of this entry."""
    runner_id: str
    """The turn's runner id (a fresh uuid4 per turn)."""
    trace_id: str | None = None
    """The turn's trace id, used to score the trace (e.g. in Langfuse)."""
    agent: str
    """The agent that answered."""
    conversation_id: str | None = None
    """The conversation the turn belongs to."""
    turn: int | None = None
    """The 1-based turn number within the conversation."""
    prompt: str = ""
    """The last system prompt the model saw, followed by the question."""
    output: str = ""
    """The finalized answer text (or the no-answer message, or the error)."""
    sources: list[dict[str, Any]] = Field(default_factory=list)
    """The final sources (uri, title, number) the answer cites."""
    tags: list[str] = Field(default_factory=list)
    """Free tags; at most one ``feedback:<value>`` tag."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Extra data payloads keyed by their producer (e.g. ``ai_answers_feedback``)."""
    created_at: float = 0.0
    """Unix time the entry was written."""


class LogStore(Protocol):
    """Where log entries live."""

    async def add(self, entry: LogEntry) -> None:
        """Store a new entry."""

    async def newest_for_runner(self, runner_id: str) -> LogEntry | None:
        """The newest entry written for ``runner_id`` (one query)."""

    async def get(self, log_id: str) -> LogEntry | None:
        """The entry with ``log_id``."""

    async def annotate(self, log_id: str, change: Callable[[LogEntry], LogEntry]) -> LogEntry:
        """Replace the entry by ``change(entry)`` atomically; :class:`NotFound` if missing."""

    async def entries(self) -> list[LogEntry]:
        """Every entry, oldest first."""


class MemoryLogStore:
    """Log entries in a dict: for tests and notebooks that keep nothing."""

    def __init__(self) -> None:
        self._entries: dict[str, LogEntry] = {}
        self._order: list[str] = []
        self._lock = threading.Lock()

    async def add(self, entry: LogEntry) -> None:
        with self._lock:
            self._entries[entry.log_id] = entry.model_copy(deep=True)
            self._order.append(entry.log_id)

    async def newest_for_runner(self, runner_id: str) -> LogEntry | None:
        with self._lock:
            for log_id in reversed(self._order):
                if self._entries[log_id].runner_id == runner_id:
                    return self._entries[log_id].model_copy(deep=True)
        return None

    async def get(self, log_id: str) -> LogEntry | None:
        with self._lock:
            entry = self._entries.get(log_id)
            return entry.model_copy(deep=True) if entry else None

    async def annotate(self, log_id: str, change: Callable[[LogEntry], LogEntry]) -> LogEntry:
        with self._lock:
            if log_id not in self._entries:
                raise NotFound(f"no log entry {log_id!r}")
            updated = change(self._entries[log_id].model_copy(deep=True))
            self._entries[log_id] = updated
            return updated.model_copy(deep=True)

    async def entries(self) -> list[LogEntry]:
        """Every entry, oldest first."""
        with self._lock:
            return [self._entries[i].model_copy(deep=True) for i in self._order]


class SQLiteLogStore(SQLiteStore):
    """Log entries in a SQLite file (the conversation database file is fine)."""

    schema: ClassVar[list[str]] = [
        """CREATE TABLE IF NOT EXISTS answer_logs (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            log_id TEXT NOT NULL UNIQUE,
            runner_id TEXT NOT NULL,
            created_at REAL NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS answer_logs_runner ON answer_logs (runner_id, seq)",
    ]

    async def add(self, entry: LogEntry) -> None:
        def insert(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO answer_logs (log_id, runner_id, created_at, data) VALUES (?,?,?,?)",
                (entry.log_id, entry.runner_id, entry.created_at, entry.model_dump_json()),
            )

        await self._db.write_retrying(insert)

    async def newest_for_runner(self, runner_id: str) -> LogEntry | None:
        data = await self._db.read_value(
            "SELECT data FROM answer_logs WHERE runner_id = ? ORDER BY seq DESC LIMIT 1",
            (runner_id,),
        )
        return LogEntry.model_validate_json(data) if data else None

    async def get(self, log_id: str) -> LogEntry | None:
        data = await self._db.read_value(_SELECT_ENTRY, (log_id,))
        return LogEntry.model_validate_json(data) if data else None

    async def annotate(self, log_id: str, change: Callable[[LogEntry], LogEntry]) -> LogEntry:
        def update(conn: sqlite3.Connection) -> LogEntry:
            data = first_value(conn, _SELECT_ENTRY, (log_id,))
            if data is None:
                raise NotFound(f"no log entry {log_id!r}")
            updated = change(LogEntry.model_validate_json(data))
            conn.execute(
                "UPDATE answer_logs SET data = ? WHERE log_id = ?",
                (updated.model_dump_json(), log_id),
            )
            return updated

        return await self._db.write(update)

    async def entries(self) -> list[LogEntry]:
        """Every entry, oldest first."""
        rows = await self._db.read_column("SELECT data FROM answer_logs ORDER BY seq")
        return [LogEntry.model_validate_json(data) for data in rows]


_SELECT_ENTRY = "SELECT data FROM answer_logs WHERE log_id = ?"
