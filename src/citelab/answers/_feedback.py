"""Feedback on answers: a rating of one turn, written onto that turn's log entry.

:meth:`FeedbackLogger.record` authorizes like the answer service (same record, same owner
rule), requires the agent's ``feedback_enabled`` (else :class:`Conflict`), then annotates the
turn's log entry: exactly one ``feedback:<value>`` tag (a new rating replaces the old one,
never piles up) and an ``ai_answers_feedback`` extra-data payload. When a trace scorer is
configured (Langfuse, from the environment) and the turn has a trace id, the trace is scored
too (``up`` = 1, ``down`` = 0).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from citelab._errors import Conflict, InvalidInput, NotFound
from citelab.agent import AgentConfig
from citelab.answers._logs import LogEntry, LogStore
from citelab.answers._owner import authorize
from citelab.answers._scoring import TraceScorer, trace_scorer_from_env
from citelab.answers._store import ConversationStore, TurnRecord
from citelab.corpus import Reader

__all__ = [
    "FEEDBACK_EXTRA_KEY",
    "FEEDBACK_TAG_PREFIX",
    "FeedbackLogger",
    "FeedbackValue",
    "with_feedback",
]

FeedbackValue = Literal["up", "down"]
"""A rating: thumbs up or thumbs down."""
FEEDBACK_TAG_PREFIX = "feedback:"
"""Log entries carry at most one tag starting with this."""
FEEDBACK_EXTRA_KEY = "ai_answers_feedback"
"""The extra-data key of the feedback payload on a log entry."""
SCORE_NAME = "user_feedback"
"""The name of the score written to a trace."""
MAX_COMMENT_CHARS = 2000

_SCORES: dict[str, float] = {"up": 1.0, "down": 0.0}
_log = logging.getLogger(__name__)


class FeedbackLogger:
    """Records users' ratings of answered turns (see the module docstring)."""

    def __init__(
        self,
        agents: Mapping[str, AgentConfig],
        store: ConversationStore,
        logs: LogStore,
        *,
        clock: Callable[[], float] | None = None,
        scorer: TraceScorer | None = None,
    ) -> None:
        self._agents = agents
        self._store = store
        self._logs = logs
        self._clock = clock or time.time
        self._scorer = scorer
        self._scorer_resolved = scorer is not None

    async def record(
        self,
        conversation_id: str,
        turn: int,
        value: FeedbackValue,
        comment: str | None = None,
        user: Reader | None = None,
    ) -> LogEntry:
        """Rate ``turn`` (1-based) of a conversation; returns the annotated log entry."""
        _check(value, comment)
        reader = user or Reader.anonymous()
        stored = await self._store.load(conversation_id)
        record = authorize(stored, conversation_id, reader, self._clock())
        agent = self._agents.get(record.agent)
        if agent is None or not agent.feedback_enabled:
            raise Conflict(f"agent {record.agent!r} does not accept feedback")
        past = _turn(record.turns, turn, conversation_id)
        if past.log_id is None:
            raise NotFound(f"turn {turn} of conversation {conversation_id!r} has no log entry")
        scored = await self._score(past, value, comment)
        payload = {
            "value": value,
            "comment": comment,
            "user": reader.user_id,
            "conversation_id": conversation_id,
            "turn": turn,
            "recorded_at": self._clock(),
            "trace_scored": scored,
        }
        return await self._logs.annotate(past.log_id, lambda entry: with_feedback(entry, payload))

    async def _score(self, past: TurnRecord, value: str, comment: str | None) -> bool:
        scorer = self._trace_scorer()
        if scorer is None or past.trace_id is None:
            return False
        try:
            await asyncio.to_thread(
                scorer.score, past.trace_id, name=SCORE_NAME, value=_SCORES[value], comment=comment
            )
        except Exception:
            # The rating is kept locally even when the tracing backend is unreachable.
            _log.warning("could not score trace %s", past.trace_id, exc_info=True)
            return False
        return True

    def _trace_scorer(self) -> TraceScorer | None:
        if not self._scorer_resolved:
            self._scorer = trace_scorer_from_env()
            self._scorer_resolved = True
        return self._scorer


def with_feedback(entry: LogEntry, payload: dict[str, Any]) -> LogEntry:
    """``entry`` with one ``feedback:<value>`` tag (earlier ones removed) and the payload."""
    tags = [tag for tag in entry.tags if not tag.startswith(FEEDBACK_TAG_PREFIX)]
    tags.append(f"{FEEDBACK_TAG_PREFIX}{payload['value']}")
    return entry.model_copy(
        update={"tags": tags, "extra": {**entry.extra, FEEDBACK_EXTRA_KEY: payload}}
    )


def _check(value: str, comment: str | None) -> None:
    if value not in _SCORES:
        raise InvalidInput(f"value: must be one of {sorted(_SCORES)}, got {value!r}")
    if comment is not None and len(comment) > MAX_COMMENT_CHARS:
        raise InvalidInput(f"comment: at most {MAX_COMMENT_CHARS} characters")


def _turn(turns: list[TurnRecord], number: int, conversation_id: str) -> TurnRecord:
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(turns):
        raise NotFound(f"conversation {conversation_id!r} has no turn {number!r}")
    return turns[number - 1]
