"""Browser sessions: what a visit to ``/?token=…`` leaves behind, instead of the token.

A session is a random id (the HttpOnly cookie) bound to a reader and to a CSRF token the page
embeds. Sessions live in memory: restarting the server logs every browser out, as with
Jupyter. Lookups take no lock, so one user's concurrent requests never wait on each other.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from citelab.corpus import Reader

__all__ = ["DEFAULT_SESSION_TTL_SECONDS", "Session", "SessionStore"]

DEFAULT_SESSION_TTL_SECONDS = 24 * 3600.0
"""A session ends this long after it was opened."""
_MAX_SESSIONS = 10_000


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
    """Open sessions by id; the oldest are dropped beyond ``max_sessions``."""

    def __init__(
        self,
        *,
        ttl_seconds: float = DEFAULT_SESSION_TTL_SECONDS,
        max_sessions: int = _MAX_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_seconds = ttl_seconds
        self.max_sessions = max_sessions
        self._clock = clock
        self._sessions: dict[str, Session] = {}

    def open(self, reader: Reader) -> Session:
        """A new session for ``reader``."""
        session = Session(
            id=secrets.token_urlsafe(32),
            reader=reader,
            csrf_token=secrets.token_urlsafe(32),
            expires_at=self._clock() + self.ttl_seconds,
        )
        while len(self._sessions) >= self.max_sessions:
            # dicts keep insertion order: the first key is the oldest session.
            del self._sessions[next(iter(self._sessions))]
        self._sessions[session.id] = session
        return session

    def get(self, session_id: str | None) -> Session | None:
        """The live session with ``session_id``, or ``None`` (unknown or expired)."""
        if not session_id:
            return None
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if self._clock() >= session.expires_at:
            self._sessions.pop(session_id, None)
            return None
        return session

    def close(self, session_id: str) -> None:
        """Forget a session (logging the browser out)."""
        self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        return len(self._sessions)
