"""Shared SQLite plumbing: one connection, used by one worker thread, off the event loop.

:class:`SQLiteStore` is the base of the stores kept in a SQLite file (conversations, logs):
it owns the :class:`SQLiteDatabase` made from the subclass's ``schema``; rows keep their
record as JSON in a ``data`` column, read back with :meth:`SQLiteDatabase.read_value`.

Every operation runs in a single worker thread that owns the database's one connection, so
operations never block the event loop, never share a connection across threads, and are
serialized (the lock SQLite would take for writes anyway). Opening a connection per operation
cost about ten times the operation itself. Other processes using the same file coordinate
through WAL and ``busy_timeout``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar, TypeVar

__all__ = ["SQLiteDatabase", "SQLiteStore", "first_value"]

T = TypeVar("T")

_BUSY_TIMEOUT_MS = 10_000


class SQLiteDatabase:
    """A database file plus the schema statements to run when it is first opened."""

    def __init__(self, path: str | Path, schema: list[str]) -> None:
        self.path = Path(path)
        self._schema = schema
        self._connection: sqlite3.Connection | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    async def read(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        """Run a read-only ``operation`` in the worker thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker(), self._run, operation, False)

    async def write(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``operation`` in the worker thread inside one write transaction.

        ``BEGIN IMMEDIATE`` takes the write lock up front, so a read-modify-write (feedback
        tags, versioned conversation saves) cannot interleave with another process's writer.
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker(), self._run, operation, True)

    async def read_value(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        """The first column of the first row ``sql`` selects, or ``None`` when there is none."""
        return await self.read(lambda conn: first_value(conn, sql, parameters))

    async def read_column(self, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """The first column of every row ``sql`` selects, in order."""
        return await self.read(
            lambda conn: [row[0] for row in conn.execute(sql, parameters).fetchall()]
        )

    def close(self) -> None:
        """Close the connection and stop the worker (a later operation reopens them)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.submit(self._close).result()
            executor.shutdown()

    def _worker(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="citelab-sqlite")
            return self._executor

    def _run(self, operation: Callable[[sqlite3.Connection], T], write: bool) -> T:
        conn = self._connection or self._open()
        if not write:
            return operation(conn)
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = operation(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        # With WAL, NORMAL never corrupts the database; a power cut may lose the last
        # commits. FULL would fsync on every commit: ninety times slower per write here.
        conn.execute("PRAGMA synchronous = NORMAL")
        for statement in self._schema:
            conn.execute(statement)
        self._connection = conn
        return conn

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def first_value(conn: sqlite3.Connection, sql: str, parameters: Sequence[Any] = ()) -> Any:
    """The first column of the first row ``sql`` selects, or ``None`` (inside an operation)."""
    row = conn.execute(sql, parameters).fetchone()
    return row[0] if row is not None else None


class SQLiteStore:
    """A store kept in one SQLite file; subclasses give the ``schema`` they need."""

    schema: ClassVar[list[str]]
    """``CREATE ... IF NOT EXISTS`` statements run when the file is first opened."""

    def __init__(self, path: str | Path) -> None:
        self._db = SQLiteDatabase(path, self.schema)

    @property
    def path(self) -> Path:
        return self._db.path

    def close(self) -> None:
        """Close the database connection (a later call reopens it)."""
        self._db.close()
