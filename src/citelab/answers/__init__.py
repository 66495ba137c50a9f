"""The answer service: conversations, the no-answer rules, logs and feedback.

- :class:`AnswerService` — ``await service.answer(agent, question, conversation_id=None,
  user=None, on_references=None, on_token=None) -> Answer`` (``answer_sync`` for scripts).
- :class:`Answer` — the finalized turn: text, sources, anchors, suggested replies, the
  contract :class:`~citelab.contract.AnswerMessage`, ids, and every round; ``to_done_event()``.
- Conversation records with expiry: :class:`SQLiteConversationStore` (default),
  :class:`MemoryConversationStore`.
- Logs, one entry per turn: :class:`SQLiteLogStore` (default), :class:`MemoryLogStore`.
- :class:`FeedbackLogger` — ratings on log entries (one ``feedback:<value>`` tag), and
  optionally a Langfuse score through a :class:`TraceScorer`.
"""

from citelab.answers._answer import Answer, DanglingMarker
from citelab.answers._documents import DocumentPayload, read_document
from citelab.answers._feedback import (
    FEEDBACK_EXTRA_KEY,
    FEEDBACK_TAG_PREFIX,
    FeedbackLogger,
    FeedbackValue,
    with_feedback,
)
from citelab.answers._history import (
    ConversationList,
    ConversationSummary,
    History,
    HistoryTurn,
)
from citelab.answers._logs import (
    LogEntry,
    LogStore,
    MemoryLogStore,
    SQLiteLogStore,
    runner_tag,
)
from citelab.answers._owner import authorize, may_resume
from citelab.answers._scoring import LangfuseScorer, TraceScorer, trace_scorer_from_env
from citelab.answers._service import (
    DEFAULT_TTL_SECONDS,
    MAX_QUESTION_CHARS,
    AnswerService,
    default_database_path,
    held_after,
)
from citelab.answers._store import (
    ConversationRecord,
    ConversationStore,
    MemoryConversationStore,
    SQLiteConversationStore,
    TurnRecord,
)

__all__ = [
    "DEFAULT_TTL_SECONDS",
    "FEEDBACK_EXTRA_KEY",
    "FEEDBACK_TAG_PREFIX",
    "MAX_QUESTION_CHARS",
    "Answer",
    "AnswerService",
    "ConversationList",
    "ConversationRecord",
    "ConversationStore",
    "ConversationSummary",
    "DanglingMarker",
    "DocumentPayload",
    "FeedbackLogger",
    "FeedbackValue",
    "History",
    "HistoryTurn",
    "LangfuseScorer",
    "LogEntry",
    "LogStore",
    "MemoryConversationStore",
    "MemoryLogStore",
    "SQLiteConversationStore",
    "SQLiteLogStore",
    "TraceScorer",
    "TurnRecord",
    "authorize",
    "default_database_path",
    "held_after",
    "may_resume",
    "read_document",
    "runner_tag",
    "trace_scorer_from_env",
    "with_feedback",
]
