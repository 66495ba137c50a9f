"""Token coalescing: a fast model must not flood the comm with one message per token.

Tokens are joined into one message when ``interval`` seconds have passed since the first
pending token, when ``max_tokens`` are pending, or when :meth:`TokenBatcher.flush` is called
(before any other event, so the order of events never changes). A timer on the running loop
sends the tail of a stream that pauses.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from citelab._errors import InvalidInput

__all__ = ["DEFAULT_INTERVAL", "DEFAULT_MAX_TOKENS", "TokenBatcher", "check_batching"]

DEFAULT_INTERVAL = 0.02
"""Seconds a token may wait for company (about one animation frame or two)."""
DEFAULT_MAX_TOKENS = 32
"""Most tokens joined into one message."""


class TokenBatcher:
    """Joins streamed tokens into fewer messages; ``send`` gets each joined piece."""

    def __init__(
        self,
        send: Callable[[str], object],
        *,
        interval: float = DEFAULT_INTERVAL,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_batching(interval, max_tokens)
        self._send = send
        self.interval = interval
        self.max_tokens = max_tokens
        self._clock = clock
        self._pending: list[str] = []
        self._since = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self.tokens = 0
        """Tokens received."""
        self.messages = 0
        """Messages sent."""

    def add(self, text: str) -> None:
        """Queue one token; sends at once when the batch is full or old enough."""
        if not text:
            return
        if not self._pending:
            self._since = self._clock()
            self._arm()
        self._pending.append(text)
        self.tokens += 1
        # Checked here too, not only by the timer: a model that never yields to the loop
        # would otherwise hold every token until it finishes.
        full = len(self._pending) >= self.max_tokens
        if full or self._clock() - self._since >= self.interval:
            self.flush()

    def flush(self) -> None:
        """Send the pending tokens now (nothing when none are pending)."""
        self._disarm()
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self.messages += 1
        self._send(text)

    @property
    def pending(self) -> str:
        """The tokens not sent yet, joined."""
        return "".join(self._pending)

    def _arm(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: the size and age checks in add() and the final flush() remain
        self._timer = loop.call_later(self.interval, self.flush)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def check_batching(interval: float, max_tokens: int) -> None:
    """Refuse batching options that would never send, or never wait."""
    if not interval >= 0:  # also refuses NaN
        raise InvalidInput(f"interval: must be >= 0 seconds, got {interval!r}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidInput(f"max_tokens: must be an integer >= 1, got {max_tokens!r}")
