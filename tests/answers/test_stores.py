from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from citelab import Conflict, NotFound
from citelab.answers import (
    ConversationRecord,
    ConversationStore,
    LogEntry,
    LogStore,
    MemoryConversationStore,
    MemoryLogStore,
    SQLiteConversationStore,
    SQLiteLogStore,
    TurnRecord,
    with_feedback,
)
from citelab.sources import Source

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ConversationStore]:
    if request.param == "memory":
        yield MemoryConversationStore()
        return
    sqlite = SQLiteConversationStore(tmp_path / "conversations.sqlite3")
    yield sqlite
    sqlite.close()


@pytest.fixture(params=["memory", "sqlite"])
def logs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LogStore]:
    if request.param == "memory":
        yield MemoryLogStore()
        return
    sqlite = SQLiteLogStore(tmp_path / "logs.sqlite3")
    yield sqlite
    sqlite.close()


def record(
    conversation_id: str = "c1", turns: int = 0, expires_at: float = 100.0
) -> ConversationRecord:
    return ConversationRecord(
        conversation_id=conversation_id,
        agent="default",
        owner="alice",
        turns=[
            TurnRecord(question=f"q{i}", answer=f"a{i}", runner_id=f"r{i}", created_at=float(i))
            for i in range(turns)
        ],
        held_sources=[Source(number=1, entity_type="page", entity_id="fees", title="Fees")],
        created_at=0.0,
        expires_at=expires_at,
    )


async def test_records_round_trip(store: ConversationStore) -> None:
    saved = record(turns=1)
    await store.save(saved)
    assert await store.load("c1") == saved
    assert await store.load("other") is None


async def test_a_save_must_follow_the_version_it_read(store: ConversationStore) -> None:
    await store.save(record(turns=1))
    with pytest.raises(Conflict, match="changed during this turn"):
        await store.save(record(turns=1))  # someone else's turn 1 again
    with pytest.raises(Conflict):
        await store.save(record(turns=3))  # skipping a version
    await store.save(record(turns=2))
    loaded = await store.load("c1")
    assert loaded is not None
    assert loaded.version == 2


async def test_expired_records_are_purged(store: ConversationStore) -> None:
    await store.save(record("old", turns=1, expires_at=10.0))
    await store.save(record("new", turns=1, expires_at=1000.0))
    assert await store.purge_expired(10.0) == 1
    assert await store.load("old") is None
    assert await store.load("new") is not None


async def test_many_concurrent_saves_all_land(store: ConversationStore) -> None:
    await asyncio.gather(*(store.save(record(f"c{i}", turns=1)) for i in range(40)))
    loaded = await asyncio.gather(*(store.load(f"c{i}") for i in range(40)))
    assert all(item is not None and item.version == 1 for item in loaded)


async def test_newest_entry_of_a_runner_is_found(logs: LogStore) -> None:
    for output in ("first", "second"):
        await logs.add(LogEntry(runner_id="r1", agent="default", output=output))
    await logs.add(LogEntry(runner_id="r2", agent="default", output="other"))
    newest = await logs.newest_for_runner("r1")
    assert newest is not None
    assert newest.output == "second"
    assert await logs.newest_for_runner("nobody") is None
    assert await logs.get(newest.log_id) == newest


async def test_annotating_is_atomic_so_no_update_is_lost(logs: LogStore) -> None:
    entry = LogEntry(runner_id="r1", agent="default", tags=["ai_answers"])
    await logs.add(entry)

    def count(current: LogEntry) -> LogEntry:
        seen = int(current.extra.get("count", 0))
        return current.model_copy(update={"extra": {"count": seen + 1}})

    await asyncio.gather(*(logs.annotate(entry.log_id, count) for _ in range(20)))
    final = await logs.get(entry.log_id)
    assert final is not None
    assert final.extra["count"] == 20
    assert final.tags == ["ai_answers"]
    with pytest.raises(NotFound, match="no log entry"):
        await logs.annotate("missing", count)


def test_one_feedback_tag_replaces_any_earlier_one() -> None:
    entry = LogEntry(runner_id="r", agent="a", tags=["feedback:up", "x", "feedback:down"])
    updated = with_feedback(entry, {"value": "down"})
    assert updated.tags == ["x", "feedback:down"]
    assert updated.extra["ai_answers_feedback"] == {"value": "down"}


async def test_a_closed_store_reopens_and_keeps_its_data(tmp_path: Path) -> None:
    sqlite = SQLiteConversationStore(tmp_path / "c.sqlite3")
    await sqlite.save(record(turns=1))
    sqlite.close()
    assert await sqlite.load("c1") == record(turns=1)
    other = SQLiteConversationStore(tmp_path / "c.sqlite3")  # a second handle on the file
    await other.save(record(turns=2))
    loaded = await sqlite.load("c1")
    assert loaded is not None
    assert loaded.version == 2
    sqlite.close()
    other.close()


async def test_a_users_conversations_are_listed_newest_first_per_agent(
    store: ConversationStore,
) -> None:
    def owned(key: str, owner: str | None, agent: str, expires_at: float) -> ConversationRecord:
        return record(key, turns=1, expires_at=expires_at).model_copy(
            update={"owner": owner, "agent": agent}
        )

    for saved in [
        owned("old", "alice", "default", 150.0),
        owned("new", "alice", "default", 300.0),
        owned("help", "alice", "helpcentre", 200.0),
        owned("gone", "alice", "default", 50.0),  # expired at 100
        owned("bobs", "bob", "default", 400.0),
        owned("nobodys", None, "default", 500.0),
    ]:
        await store.save(saved)
    keys = [r.conversation_id for r in await store.owned_by("alice", now=100.0)]
    assert keys == ["new", "help", "old"]
    defaults = await store.owned_by("alice", now=100.0, agent="default", limit=1)
    assert [r.conversation_id for r in defaults] == ["new"]
    assert [r.conversation_id for r in await store.owned_by("bob", now=100.0)] == ["bobs"]
    assert await store.owned_by("carol", now=100.0) == []
