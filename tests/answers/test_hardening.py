"""The answer service under faults and races: history another reader may not see, deadlines,
a turn claimed before it is generated, a locked database."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from citelab import Conflict, ModelTimeout, Unavailable
from citelab.answers import AnswerService, MemoryLogStore, SQLiteConversationStore
from citelab.corpus import Reader
from citelab.models import (
    FinishDelta,
    Message,
    ModelDelta,
    TextDelta,
    ToolChoice,
    ToolSpec,
    message_text,
)

from .conftest import ServiceFactory, scripted, scripted_agent
from .test_access import forbidden

pytestmark = pytest.mark.anyio

HR = Reader(user_id="erin", roles=frozenset({"staff", "hr"}))


class RepeatsItsHistory:
    """A model that writes back every earlier answer it was shown, then its scripted text."""

    name = "repeater"

    def __init__(self, *rounds: Any) -> None:
        self.inner = scripted(*rounds)
        self.seen: list[list[Message]] = []

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        self.seen.append(list(messages))
        history = [message_text(m) for m in messages if m["role"] == "assistant"]
        async for delta in self.inner.stream(messages, tools, tool_choice=tool_choice):
            if isinstance(delta, TextDelta) and history:
                yield TextDelta(text=" ".join(history) + " ")
                history = []
            yield delta


async def test_history_drawn_from_restricted_sources_never_reaches_another_reader(
    make_service: ServiceFactory,
) -> None:
    model = RepeatsItsHistory(
        {"text": "Kestrel Systems builds weather stations [1]."},
        {"tool_calls": [{"name": "rag_search", "arguments": {"query": "Operation Larkspur"}}]},
        {"text": "Operation Larkspur removes thirty-five positions [1]."},
        {"text": "Here is what we said."},
        {"text": "And again."},
    )
    agent = scripted_agent("repeater", corpus="intranet")
    service = make_service(agent, models={"repeater": model})
    # Anonymous-owned: bearer-by-id, anyone holding the id may go on with it.
    first = await service.answer("repeater", "What does Kestrel Systems build?")
    told_hr = await service.answer("repeater", "What is Larkspur?", first.conversation_id, HR)
    assert "Larkspur" in told_hr.text
    held = (await service.conversation(first.conversation_id, HR)).held_sources
    assert any("Larkspur" in source.title for source in held)

    anonymous = await service.answer("repeater", "Repeat please.", first.conversation_id)
    shown = " ".join(message_text(m) for m in model.seen[-1])
    for word in [*forbidden(Reader.anonymous()), "Larkspur", "thirty-five"]:
        assert word not in shown, f"{word!r} reached the model for an anonymous reader"
        assert word not in anonymous.text
    assert "Kestrel Systems builds weather stations" in shown  # the public turn is still history

    # The reader with access still gets the whole history.
    again = await service.answer("repeater", "Once more.", first.conversation_id, HR)
    assert "thirty-five positions" in again.text


async def test_a_hung_model_is_a_first_token_timeout(make_service: ServiceFactory) -> None:
    gate = asyncio.Event()

    class Hangs:
        name = "hangs"

        async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelDelta]:
            await gate.wait()
            yield FinishDelta(reason="stop")

    agent = scripted_agent("hangs", first_token_seconds=0.2)
    service = make_service(agent, models={"hangs": Hangs()}, answer_deadline_seconds=30)
    logs = service.logs
    assert isinstance(logs, MemoryLogStore)
    with pytest.raises(ModelTimeout, match=r"sent nothing within 0\.2 s"):
        await asyncio.wait_for(service.answer("hangs", "How much is the fee?"), 10)
    failed = (await logs.entries())[-1]
    assert failed.extra["error"]["code"] == "model_timeout"


async def test_a_slow_answer_is_cut_at_the_answer_deadline(make_service: ServiceFactory) -> None:
    class Trickles:
        name = "trickles"

        async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelDelta]:
            for _ in range(1000):
                yield TextDelta(text="word ")
                await asyncio.sleep(0.05)
            yield FinishDelta(reason="stop")

    service = make_service(
        scripted_agent("trickles"), models={"trickles": Trickles()}, answer_deadline_seconds=0.5
    )
    with pytest.raises(ModelTimeout, match=r"not done within 0\.5 s"):
        await asyncio.wait_for(service.answer("trickles", "How much is the fee?"), 10)
    # an agent's own deadline wins over the service's
    patient = scripted_agent("patient", model="trickles", answer_deadline_seconds=0.2)
    service = make_service(patient, models={"trickles": Trickles()}, answer_deadline_seconds=60)
    with pytest.raises(ModelTimeout, match=r"not done within 0\.2 s"):
        await asyncio.wait_for(service.answer("patient", "How much is the fee?"), 10)


async def test_a_second_turn_of_a_busy_conversation_is_refused_before_generating(
    make_service: ServiceFactory,
) -> None:
    release = asyncio.Event()
    calls: list[str] = []

    class Waits:
        name = "waits"

        async def stream(
            self, messages: Sequence[Message], *args: Any, **kwargs: Any
        ) -> AsyncIterator[ModelDelta]:
            calls.append(message_text(messages[-1]))
            if len(calls) == 2:
                await release.wait()
            yield TextDelta(text="The fee is 312 euros [1].")
            yield FinishDelta(reason="stop")

    service = make_service(scripted_agent("waits"), models={"waits": Waits()})
    first = await service.answer("waits", "How much is the fee?")
    slow = asyncio.create_task(service.answer("waits", "And then?", first.conversation_id))
    while len(calls) < 2:
        await asyncio.sleep(0.01)
    with pytest.raises(Conflict, match="already answering"):
        await service.answer("waits", "Meanwhile?", first.conversation_id)
    assert len(calls) == 2  # refused at once: the model never ran for the loser
    release.set()
    assert (await slow).turn == 2
    logs = service.logs
    assert isinstance(logs, MemoryLogStore)
    lost = [e for e in await logs.entries() if "error" in e.tags]
    assert [e.extra["error"]["code"] for e in lost] == ["conflict"]
    assert "Meanwhile?" in lost[0].prompt


async def test_a_turn_lost_at_save_time_is_logged_as_not_saved(
    make_service: ServiceFactory,
) -> None:
    # Another process (same file, so no shared claim) finishes a turn while this one runs.
    race: list[Any] = []

    class Races:
        name = "races"

        async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelDelta]:
            if race:
                await race.pop()()
            yield TextDelta(text="The fee is 312 euros [1].")
            yield FinishDelta(reason="stop")

    service = make_service(scripted_agent("races"), models={"races": Races()})
    first = await service.answer("races", "How much is the semester fee?")
    record = await service.conversation(first.conversation_id)

    async def other_process_saves() -> None:
        await service.store.save(record.model_copy(update={"turns": [*record.turns] * 2}))

    race.append(other_process_saves)
    with pytest.raises(Conflict, match="changed during this turn"):
        await service.answer("races", "And the deadline?", first.conversation_id)
    logs = service.logs
    assert isinstance(logs, MemoryLogStore)
    newest = (await logs.entries())[-1]
    assert "And the deadline?" in newest.prompt
    assert "not_saved:conflict" in newest.tags
    assert newest.extra["error"]["code"] == "conflict"


def hold_write_lock(path: Path, seconds: float, held: threading.Event) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        held.set()
        threading.Event().wait(seconds)
        conn.execute("ROLLBACK")
    finally:
        conn.close()


LockedService = Callable[[float], AnswerService]


@pytest.fixture
def locked_service(make_service: ServiceFactory, tmp_path: Path) -> Iterator[LockedService]:
    """``lock(seconds)``: a service over a SQLite store whose write lock another connection
    holds for ``seconds`` from now (in a thread); the lock ends and the store closes after
    the test."""
    path = tmp_path / "answers.sqlite3"
    store = SQLiteConversationStore(path)
    store.check()
    lockers: list[threading.Thread] = []

    def lock(seconds: float) -> AnswerService:
        service = make_service(store=store)
        held = threading.Event()
        locker = threading.Thread(target=hold_write_lock, args=(path, seconds, held), daemon=True)
        locker.start()
        lockers.append(locker)
        assert held.wait(5), "the other connection never took the write lock"
        return service

    yield lock
    for locker in lockers:
        locker.join()
    store.close()


@pytest.mark.slow
async def test_a_locked_database_is_503_after_a_bounded_wait(
    locked_service: LockedService,
) -> None:
    service = locked_service(12)
    started = asyncio.get_running_loop().time()
    with pytest.raises(Unavailable, match="database is busy") as raised:
        await service.answer("default", "How much is the semester fee?")
    waited = asyncio.get_running_loop().time() - started
    assert waited < 10  # bounded: not the old 10 s per attempt behind one thread
    assert raised.value.retry_after == 1


async def test_an_answer_is_kept_when_the_lock_goes_while_the_save_retries(
    locked_service: LockedService,
) -> None:
    service = locked_service(2.5)
    answer = await service.answer("default", "How much is the semester fee?")
    saved = await service.conversation(answer.conversation_id)
    assert saved.turns[0].answer == answer.text


def test_a_folder_or_a_garbage_file_is_a_config_error_at_once(tmp_path: Path) -> None:
    from citelab import ConfigError

    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"not a database\n" * 200)
    for path, says in [(tmp_path, "is a folder"), (garbage, "file is not a database")]:
        with pytest.raises(ConfigError, match=says):
            SQLiteConversationStore(path).check()
