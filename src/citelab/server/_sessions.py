"""Browser sessions: what a visit to ``/?token=…`` leaves behind, instead of the token.

A session is a random id (the HttpOnly cookie) bound to a reader and to a CSRF token the page
embeds. Sessions live in memory: restarting the server logs every browser out, as with
Jupyter. Lookups take no lock, so one user's concurrent requests never wait on each other.

Only a valid token opens a session (anonymous visitors get none), and the table is bounded
per user: a user's oldest session goes when they open one too many, and expired sessions go
first. So no amount of traffic from others can push a signed-in user's session out.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from citelab.corpus import Reader

__all__ = ["DEFAULT_SESSIONS_PER_USER", "DEFAULT_SESSION_TTL_SECONDS", "Session", "SessionStore"]

DEFAULT_SESSION_TTL_SECONDS = 24 * 3600.0
"""A session ends this long after it was opened."""
DEFAULT_SESSIONS_PER_USER = 64
"""Open sessions one user may hold (browsers, tabs after a restart); the oldest goes first."""


@dataclass(frozen=True)
class Session:
    """One browser's session."""

    id: str
    """The cookie value (random, 256 bits)."""
    reader: Reader
    """Who the browser acts as."""
    csrf_token: str
    """What unsafe requests must echo in ``X-CSRF-Token``."""
    expires_at: float
    """Clock time after which the session is gone."""

    def csrf_matches(self, presented: str | None) -> bool:
        """True when ``presented`` is this session's CSRF token (constant-time)."""
        if not presented:
            return False
        return hmac.compare_digest(presented.encode(), self.csrf_token.encode())


class SessionStore:
    """Open sessions by id, at most ``per_user`` for each user (see the module docstring)."""

    def __init__(
        self,
        *,
        ttl_seconds: float = DEFAULT_SESSION_TTL_SECONDS,
        per_user: int = DEFAULT_SESSIONS_PER_USER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_user < 1:
            raise ValueError("per_user must be at least 1")
        self.ttl_seconds = ttl_seconds
        self.per_user = per_user
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._by_user: dict[str | None, dict[str, None]] = {}

    def open(self, reader: Reader) -> Session:
        """A new session for ``reader``; drops that reader's oldest beyond ``per_user``."""
        session = Session(
            id=secrets.token_urlsafe(32),
            reader=reader,
            csrf_token=secrets.token_urlsafe(32),
            expires_at=self._clock() + self.ttl_seconds,
        )
        mine = self._by_user.setdefault(reader.user_id, {})
        self._drop_expired(mine)
        while len(mine) >= self.per_user:
            # dicts keep insertion order: the first key is this user's oldest session.
            self.close(next(iter(mine)))
        mine[session.id] = None
        self._sessions[session.id] = session
        return session

    def _drop_expired(self, ids: dict[str, None]) -> None:
        now = self._clock()
        for session_id in [i for i in ids if self._sessions[i].expires_at <= now]:
            self.close(session_id)

    def get(self, session_id: str | None) -> Session | None:
        """The live session with ``session_id``, or ``None`` (unknown or expired)."""
        if not session_id:
            return None
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if self._clock() >= session.expires_at:
            self.close(session_id)
            return None
        return session

    def close(self, session_id: str) -> None:
        """Forget a session (logging the browser out)."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return
        mine = self._by_user.get(session.reader.user_id)
        if mine is not None:
            mine.pop(session_id, None)
            if not mine:
                del self._by_user[session.reader.user_id]

    def __len__(self) -> int:
        return len(self._sessions)
