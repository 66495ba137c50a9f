"""Shared SQLite plumbing: one connection, used by one worker thread, off the event loop.

:class:`SQLiteStore` is the base of the stores kept in a SQLite file (conversations, logs):
it owns the :class:`SQLiteDatabase` made from the subclass's ``schema``; rows keep their
record as JSON in a ``data`` column, read back with :meth:`SQLiteDatabase.read_value`.

Every operation runs in a single worker thread that owns the database's one connection, so
operations never block the event loop, never share a connection across threads, and are
serialized (the lock SQLite would take for writes anyway); a connection is not opened per
operation (that would cost more than the operation: see docs/performance.md). Other
processes using the same file coordinate through WAL and a short ``busy_timeout``: a write
that finds the file locked for longer is :class:`~citelab.Unavailable` (503) at once rather
than holding up every queued operation behind it; :meth:`SQLiteDatabase.write_retrying`
waits between attempts off the worker thread.

:meth:`SQLiteDatabase.check` opens the file and tries a write, so a path that is a folder, not
a database, or not writable is a clear :class:`~citelab.ConfigError` at start-up.
:meth:`SQLiteDatabase.close` checkpoints the write-ahead log into the main file, so after a
clean stop the ``.sqlite3`` file alone is a complete copy (see the README on backups).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from citelab._errors import ConfigError, Unavailable

__all__ = ["DEFAULT_BUSY_SECONDS", "SQLiteDatabase", "SQLiteStore", "first_value"]

T = TypeVar("T")

DEFAULT_BUSY_SECONDS = 1.0
"""How long one operation waits for another process's lock before it gives up."""
_RETRY_SECONDS = 5.0
_RETRY_PAUSE_SECONDS = 0.1


class SQLiteDatabase:
    """A database file plus the schema statements to run when it is first opened."""

    def __init__(
        self, path: str | Path, schema: list[str], *, busy_seconds: float = DEFAULT_BUSY_SECONDS
    ) -> None:
        self.path = Path(path)
        self._schema = schema
        self.busy_seconds = busy_seconds
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

    async def write_retrying(
        self, operation: Callable[[sqlite3.Connection], T], *, within: float = _RETRY_SECONDS
    ) -> T:
        """:meth:`write`, tried again while the file is locked, for up to ``within`` seconds
        (the pauses are in the event loop, so other operations run meanwhile)."""
        deadline = time.monotonic() + within
        while True:
            try:
                return await self.write(operation)
            except Unavailable:
                if time.monotonic() + _RETRY_PAUSE_SECONDS >= deadline:
                    raise
            await asyncio.sleep(_RETRY_PAUSE_SECONDS)

    def check(self) -> None:
        """Open the file (creating it) and try a write; :class:`ConfigError` says what is wrong."""
        executor = self._worker()
        executor.submit(self._check).result()

    def _check(self) -> None:
        where = f"database {self.path}"
        if self.path.is_dir():
            raise ConfigError(f"{where}: is a folder; give the path of a file (it is created)")
        try:
            conn = self._connection or self._open()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
        except sqlite3.DatabaseError as exc:
            self._close()
            raise ConfigError(f"{where}: cannot be used as a SQLite database: {exc}") from exc
        except OSError as exc:
            self._close()
            raise ConfigError(f"{where}: cannot be created: {exc.strerror}") from exc

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
        try:
            conn = self._connection or self._open()
            if not write:
                return operation(conn)
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise self._busy(exc) from exc
        try:
            result = operation(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result

    def _busy(self, exc: sqlite3.OperationalError) -> Exception:
        if "locked" in str(exc) or "busy" in str(exc):
            return Unavailable(
                f"the database is busy (locked by another process for over "
                f"{self.busy_seconds:g} s); try again shortly",
                retry_after=1,
            )
        return exc

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self.busy_seconds, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {round(self.busy_seconds * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        # With WAL, NORMAL never corrupts the database; a power cut may lose the last
        # commits. FULL would fsync on every commit (see docs/performance.md).
        conn.execute("PRAGMA synchronous = NORMAL")
        for statement in self._schema:
            conn.execute(statement)
        self._connection = conn
        return conn

    def _close(self) -> None:
        if self._connection is not None:
            # Copy the write-ahead log into the file, so the file alone holds everything (if
            # another process is reading, the last connection to close checkpoints instead).
            with contextlib.suppress(sqlite3.Error):
                self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
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

    def check(self) -> None:
        """Open the file and try a write (see :meth:`SQLiteDatabase.check`)."""
        self._db.check()

    def close(self) -> None:
        """Checkpoint and close the database connection (a later call reopens it)."""
        self._db.close()
