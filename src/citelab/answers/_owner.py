"""Who may resume a conversation (the answer service and feedback share these rules).

- anonymous-owned conversations are bearer-by-id: anyone holding the id may resume them;
- user-owned conversations resume only for that same user;
- anything else (unknown id, another user's conversation, an expired one) is
  :class:`NotFound`, with one message for every case so the error reveals nothing.
"""

from __future__ import annotations

from citelab._errors import NotFound
from citelab.answers._store import ConversationRecord
from citelab.corpus import Reader

__all__ = ["authorize", "may_resume"]


def may_resume(record: ConversationRecord, reader: Reader) -> bool:
    """The owner rule alone (no expiry)."""
    return record.owner is None or record.owner == reader.user_id


def authorize(
    record: ConversationRecord | None, conversation_id: str, reader: Reader, now: float
) -> ConversationRecord:
    """``record`` when ``reader`` may resume it at ``now``; :class:`NotFound` otherwise."""
    if record is None or record.expired(now) or not may_resume(record, reader):
        raise NotFound(f"conversation {conversation_id!r} not found")
    return record
