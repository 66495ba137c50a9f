from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from citelab import Conflict, InvalidInput, ModelError, NotFound
from citelab.agent import HookSwitches
from citelab.answers import (
    DEFAULT_TTL_SECONDS,
    AnswerService,
    MemoryConversationStore,
    MemoryLogStore,
    SQLiteConversationStore,
    SQLiteLogStore,
)
from citelab.contract import SOURCE_URL_KEY, validate_message
from citelab.corpus import Reader
from citelab.events import DoneEvent, Reference
from citelab.models import ScriptedModel, message_text
from citelab.retrieval import RagSearch
from citelab.sources import RetrievalSettings

from .conftest import Clock, ServiceFactory, scripted, scripted_agent

pytestmark = pytest.mark.anyio

QUESTION = "How many ECTS credits is the Data Science BSc?"
BSC = "entity:program/data-science-bsc"
ALICE = Reader(user_id="alice")
BOB = Reader(user_id="bob")


# --- question validation and gates --------------------------------------------------------------


@pytest.mark.parametrize("question", ["", "   ", "\n\t "])
async def test_empty_or_blank_questions_are_invalid(
    make_service: ServiceFactory, question: str
) -> None:
    with pytest.raises(InvalidInput, match="must not be empty"):
        await make_service().answer("default", question)


async def test_over_long_questions_are_invalid(make_service: ServiceFactory) -> None:
    service = make_service(max_question_chars=50)
    with pytest.raises(InvalidInput, match="51 characters is too long"):
        await service.answer("default", "x" * 51)


async def test_unknown_agent_is_not_found(make_service: ServiceFactory) -> None:
    with pytest.raises(NotFound, match="agent 'ghost' not found"):
        await make_service().answer("ghost", QUESTION)


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"enabled": False}, "not enabled for answers"), ({"retrieval": None}, "no retrieval")],
)
async def test_disabled_or_unresolved_agents_conflict(
    make_service: ServiceFactory, changes: dict[str, Any], message: str
) -> None:
    service = make_service(scripted_agent(**changes), models={"scripted": scripted()})
    with pytest.raises(Conflict, match=message):
        await service.answer("scripted", QUESTION)


# --- a first turn and its contract message --------------------------------------------------------


async def test_a_first_turn_answers_with_finalized_citations(make_service: ServiceFactory) -> None:
    service = make_service()
    answer = await service.answer("default", QUESTION)
    assert not answer.no_answer
    assert answer.turn == 1
    assert answer.agent == "default"
    assert "180 ECTS" in answer.text
    assert [s.uri for s in answer.sources] == [BSC]
    assert answer.sources[0].number == 1
    assert answer.anchors[0].source_uri == BSC
    assert validate_message(answer.message) == []
    done = DoneEvent.model_validate_json(answer.to_done_event().model_dump_json())
    assert done.references[0].uri == BSC
    assert done.conversation_id == answer.conversation_id
    assert done.log_id == answer.log_id
    assert done.suggested_replies


async def test_the_message_links_each_entity_source_to_its_web_page(
    make_service: ServiceFactory,
) -> None:
    answer = await make_service().answer("default", QUESTION)
    [link] = answer.message.sources
    assert link.uri == BSC
    assert link.meta == {SOURCE_URL_KEY: answer.sources[0].url}
    assert link.meta[SOURCE_URL_KEY].startswith("https://study.hollin-university.example/")


async def test_first_turn_forces_retrieval_before_the_model(make_service: ServiceFactory) -> None:
    model = scripted({"text": "It is 180 ECTS [1]."})
    service = make_service(scripted_agent(), models={"scripted": model})
    answer = await service.answer("scripted", QUESTION)
    assert len(answer.forced) == 1
    assert answer.forced[0].forced
    assert answer.forced[0].returned[1] == BSC
    prompt = message_text(model.seen[0][0])
    assert f'<source number="1" uri="{BSC}"' in prompt
    assert prompt.startswith("You are the scripted test agent.")
    assert [s.uri for s in answer.sources] == [BSC]


async def test_each_turn_gets_a_fresh_runner_and_its_log_ids(make_service: ServiceFactory) -> None:
    logs = MemoryLogStore()
    service = make_service(logs=logs)
    first = await service.answer("default", QUESTION)
    second = await service.answer("default", "And the MSc?", first.conversation_id)
    assert first.runner_id != second.runner_id
    entries = await logs.entries()
    assert [e.log_id for e in entries] == [first.log_id, second.log_id]
    assert [e.trace_id for e in entries] == [first.trace_id, second.trace_id]
    assert f"ai_agents_runner_{first.runner_id}" in entries[0].tags
    assert entries[0].output == first.text
    assert entries[0].sources == [{"number": 1, "uri": BSC, "title": "Data Science"}]
    record = await service.conversation(first.conversation_id)
    assert [t.log_id for t in record.turns] == [first.log_id, second.log_id]


# --- follow-ups -----------------------------------------------------------------------------------


async def test_a_follow_up_without_search_reuses_the_held_sources(
    make_service: ServiceFactory,
) -> None:
    model = scripted({"text": "It is 180 ECTS [1]."}, {"text": "Yes, 180 ECTS [1]."})
    service = make_service(scripted_agent(), models={"scripted": model})
    first = await service.answer("scripted", QUESTION)
    second = await service.answer("scripted", "Really?", first.conversation_id)
    assert second.turn == 2
    assert second.forced == []
    assert [s.uri for s in second.sources] == [BSC]
    follow_up = model.seen[1]
    assert f'<source number="1" uri="{BSC}"' in message_text(follow_up[0])
    assert [m["role"] for m in follow_up] == ["system", "user", "assistant", "user"]
    assert message_text(follow_up[2]) == first.text


async def test_held_sources_keep_the_answers_numbers_then_the_uncited_ones(
    make_service: ServiceFactory,
) -> None:
    model = scripted({"text": "MSc [2] and BSc [1]."})
    service = make_service(scripted_agent(), models={"scripted": model})
    first = await service.answer("scripted", QUESTION)
    assert first.text == "MSc [1] and BSc [2]."
    record = await service.conversation(first.conversation_id)
    held = [(s.number, s.uri) for s in record.held_sources]
    assert held[:2] == [(1, first.sources[0].uri), (2, BSC)]
    assert [n for n, _ in held] == list(range(1, len(held) + 1))
    assert len(held) == len(first.forced[0].returned)


async def test_a_follow_up_that_searches_merges_onto_the_held_numbers(
    make_service: ServiceFactory,
) -> None:
    search = {"tool_calls": [{"name": "rag_search", "arguments": {"query": "library opening"}}]}
    model = scripted({"text": "180 ECTS [1]."}, search, {"text": "Done [1]."})
    service = make_service(scripted_agent(), models={"scripted": model})
    first = await service.answer("scripted", QUESTION)
    record = await service.conversation(first.conversation_id)
    held = {s.uri: s.number or 0 for s in record.held_sources}
    second = await service.answer("scripted", "Where is the library?", first.conversation_id)
    returned = second.rounds[0].tool_calls[0].returned
    for number, uri in returned.items():
        if uri in held:
            assert held[uri] == number
        else:
            assert number > max(held.values())


async def test_follow_ups_are_pinned_to_the_conversations_agent(
    make_service: ServiceFactory,
) -> None:
    mine = scripted({"text": "180 [1]."}, {"text": "Still 180 [1]."})
    other = ScriptedModel([], name="other")  # any call to it would fail
    service = make_service(
        scripted_agent(), scripted_agent("other"), models={"scripted": mine, "other": other}
    )
    first = await service.answer("scripted", QUESTION)
    second = await service.answer("other", "Sure?", first.conversation_id)
    assert second.agent == "scripted"
    assert other.calls == 0
    assert mine.calls == 2


# --- owner rules and expiry ---------------------------------------------------------------------


async def test_a_user_owned_conversation_resumes_only_for_that_user(
    make_service: ServiceFactory,
) -> None:
    service = make_service()
    first = await service.answer("default", QUESTION, user=ALICE)
    for stranger in (BOB, Reader.anonymous()):
        with pytest.raises(NotFound, match=f"conversation '{first.conversation_id}' not found"):
            await service.answer("default", "And fees?", first.conversation_id, user=stranger)
    again = await service.answer("default", "And fees?", first.conversation_id, user=ALICE)
    assert again.turn == 2


async def test_an_anonymous_conversation_is_bearer_by_id(make_service: ServiceFactory) -> None:
    service = make_service()
    first = await service.answer("default", QUESTION)
    by_bob = await service.answer("default", "And the MSc?", first.conversation_id, user=BOB)
    by_anyone = await service.answer("default", "Thanks", first.conversation_id)
    assert (by_bob.turn, by_anyone.turn) == (2, 3)
    assert (await service.conversation(first.conversation_id, BOB)).owner is None


async def test_unknown_and_expired_conversations_are_not_found(
    make_service: ServiceFactory, clock: Clock
) -> None:
    service = make_service()
    with pytest.raises(NotFound):
        await service.answer("default", QUESTION, "no-such-conversation")
    first = await service.answer("default", QUESTION)
    clock.advance(DEFAULT_TTL_SECONDS - 1)
    second = await service.answer("default", "And the MSc?", first.conversation_id)
    clock.advance(DEFAULT_TTL_SECONDS - 1)  # each turn extends the expiry
    await service.answer("default", "Thanks", second.conversation_id)
    clock.advance(DEFAULT_TTL_SECONDS)
    with pytest.raises(NotFound, match="not found"):
        await service.answer("default", "Hello again", first.conversation_id)


async def test_a_disabled_agent_refuses_follow_ups_too(make_service: ServiceFactory) -> None:
    model = scripted({"text": "180 [1]."})
    service = make_service(scripted_agent(), models={"scripted": model})
    first = await service.answer("scripted", QUESTION)
    service.agents["scripted"] = scripted_agent(enabled=False)
    with pytest.raises(Conflict, match="not enabled"):
        await service.answer("default", "More?", first.conversation_id)


# --- the no-answer rules --------------------------------------------------------------------------


NOTHING_RETRIEVED = RetrievalSettings(threshold=2.0)  # scores are in [0, 1]: the gate drops all


async def test_non_streaming_without_usable_sources_gets_the_no_answer_message(
    make_service: ServiceFactory,
) -> None:
    agent = scripted_agent(retrieval=NOTHING_RETRIEVED, no_answer_message="Nothing found.")
    service = make_service(agent, models={"scripted": scripted({"text": "A guess [1]."})})
    answer = await service.answer("scripted", QUESTION)
    assert answer.no_answer
    assert answer.text == "Nothing found."
    assert answer.sources == []
    assert answer.raw_text == "A guess [1]."
    assert answer.message.text == "Nothing found."
    record = await service.conversation(answer.conversation_id)
    assert record.turns[0].answer == "Nothing found."
    assert record.turns[0].no_answer


async def test_a_streamed_answer_that_reached_the_client_is_left_alone(
    make_service: ServiceFactory,
) -> None:
    agent = scripted_agent(retrieval=NOTHING_RETRIEVED, no_answer_message="Nothing found.")
    service = make_service(agent, models={"scripted": scripted({"text": ["A ", "guess [1]."]})})
    tokens: list[str] = []
    answer = await service.answer("scripted", QUESTION, on_token=tokens.append)
    assert not answer.no_answer
    assert tokens == ["A ", "guess [1]."]
    assert answer.text == "A guess."  # the dangling [1] is removed; the contract has no sources
    assert answer.sources == []
    assert [d.number for d in answer.dangling] == [1]


@pytest.mark.parametrize("streaming", [False, True])
async def test_no_text_at_all_gets_the_no_answer_message_on_both_paths(
    make_service: ServiceFactory, streaming: bool
) -> None:
    agent = scripted_agent(no_answer_message="Nothing found.")
    service = make_service(agent, models={"scripted": scripted({"text": ["", ""]})})
    tokens: list[str] = []
    answer = await service.answer(
        "scripted", QUESTION, on_token=tokens.append if streaming else None
    )
    assert answer.no_answer
    assert answer.text == "Nothing found."
    assert tokens == []  # nothing was sent, so substituting is safe
    assert answer.sources == []


async def test_non_streaming_with_sources_keeps_an_uncited_answer(
    make_service: ServiceFactory,
) -> None:
    service = make_service(scripted_agent(), models={"scripted": scripted({"text": "Maybe."})})
    answer = await service.answer("scripted", QUESTION)
    assert not answer.no_answer
    assert answer.text == "Maybe."
    assert answer.sources == []
    assert len(answer.dropped) == len(answer.forced[0].returned)


# --- failures -------------------------------------------------------------------------------------


async def test_a_model_failing_mid_stream_leaves_the_conversation_usable(
    make_service: ServiceFactory,
) -> None:
    model = scripted(
        {"text": "180 ECTS [1]."},
        {"text": ["It ", "is "], "error_after": 1, "error": "connection lost"},
        {"text": "Recovered [1]."},
    )
    logs = MemoryLogStore()
    service = make_service(scripted_agent(), models={"scripted": model}, logs=logs)
    first = await service.answer("scripted", QUESTION)
    before = await service.conversation(first.conversation_id)
    tokens: list[str] = []
    with pytest.raises(ModelError, match="connection lost"):
        await service.answer("scripted", "And?", first.conversation_id, on_token=tokens.append)
    assert tokens == ["It "]
    assert await service.conversation(first.conversation_id) == before
    failed = (await logs.entries())[-1]
    assert "error" in failed.tags
    assert failed.extra["error"]["code"] == "model_error"
    third = await service.answer("scripted", "And now?", first.conversation_id)
    assert third.turn == 2
    assert third.text == "Recovered [1]."


async def test_a_failed_first_turn_stores_nothing(make_service: ServiceFactory) -> None:
    store = MemoryConversationStore()
    model = scripted({"text": "x", "error_after": 0})
    service = make_service(scripted_agent(), models={"scripted": model}, store=store)
    with pytest.raises(ModelError):
        await service.answer("scripted", QUESTION)
    assert await store.purge_expired(float("inf")) == 0


async def test_racing_follow_ups_on_one_conversation_conflict(
    make_service: ServiceFactory,
) -> None:
    service = make_service()
    first = await service.answer("default", QUESTION)
    results = await asyncio.gather(
        service.answer("default", "And the MSc?", first.conversation_id),
        service.answer("default", "And fees?", first.conversation_id),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in results) == ["Answer", "Conflict"]
    record = await service.conversation(first.conversation_id)
    assert len(record.turns) == 2


# --- concurrency and access -----------------------------------------------------------------------

STAFF = Reader(user_id="carol", roles=frozenset({"staff"}))
CASES = [
    ("university", QUESTION, None),
    ("university", "What does the Computer Science MSc require for admission?", None),
    ("helpcentre", "How do I reset my password?", None),
    ("helpcentre", "How do I export invoices?", None),
    ("intranet", "Where do I submit business expenses?", STAFF),
    ("intranet", "Where do I submit business expenses?", None),
    ("intranet", "How many days of annual leave do I have?", STAFF),
]
ENTITY_TYPES = {"university": {"program", "page"}, "helpcentre": {"article"}, "intranet": {"node"}}


async def test_many_concurrent_answers_never_see_each_others_sources(
    make_service: ServiceFactory, tmp_path: Any
) -> None:
    database = tmp_path / "answers.sqlite3"
    store, logs = SQLiteConversationStore(database), SQLiteLogStore(database)
    service = make_service(store=store, logs=logs)
    alone = [await service.answer(a, q, user=u) for a, q, u in CASES]
    together = await asyncio.gather(*(service.answer(a, q, user=u) for a, q, u in CASES * 6))
    for index, answer in enumerate(together):
        agent, _, reader = CASES[index % len(CASES)]
        reference = alone[index % len(CASES)]
        assert answer.text == reference.text
        assert [s.uri for s in answer.sources] == [s.uri for s in reference.sources]
        seen = {uri for r in answer.rounds for uri in r.visible_numbering.values()}
        assert {uri.split(":")[1].split("/")[0] for uri in seen} <= ENTITY_TYPES[agent]
        if agent == "intranet" and reader is None:
            assert "Harrier" not in str(answer.model_dump())
    store.close()
    logs.close()


async def test_answer_sync_works_with_and_without_a_running_loop(
    make_service: ServiceFactory,
) -> None:
    service = make_service()
    inside = service.answer_sync("default", QUESTION)  # a loop is running here
    outside = await asyncio.to_thread(service.answer_sync, "default", QUESTION)
    assert inside.text == outside.text
    assert [s.uri for s in inside.sources] == [BSC]


async def test_references_precede_tokens_and_the_done_list_replaces_them(
    make_service: ServiceFactory,
) -> None:
    events: list[str] = []
    provisional: list[list[Reference]] = []
    tokens: list[str] = []

    def on_references(references: list[Reference]) -> None:
        events.append("references")
        provisional.append(references)

    def on_token(piece: str) -> None:
        events.append("token")
        tokens.append(piece)

    answer = await make_service().answer(
        "default", QUESTION, on_references=on_references, on_token=on_token
    )
    assert events[0] == "references"
    assert set(events[1:]) == {"token"}
    assert "".join(tokens) == answer.raw_text
    provisional_uris = [r.uri for r in provisional[-1]]
    assert [s.uri for s in answer.sources] == [BSC]
    assert BSC in provisional_uris
    assert len(provisional_uris) > len(answer.sources)  # the done list drops the uncited


async def test_the_tool_rewrite_switch_reaches_the_loop(make_service: ServiceFactory) -> None:
    search = {"tool_calls": [{"name": "rag_search", "arguments": {"query": "library hours"}}]}
    model = scripted({"text": "x [1]."}, search, {"text": "y [1]."})
    agent = scripted_agent(hooks=HookSwitches(tool_rewrite=False))
    service = make_service(agent, models={"scripted": model})
    first = await service.answer("scripted", QUESTION)
    second = await service.answer("scripted", "Library?", first.conversation_id)
    assert second.rounds[0].tool_calls[0].message.startswith('{"results": [')


async def test_a_service_with_default_stores_writes_sqlite_in_its_database(
    tmp_path: Any, index_dir: Any
) -> None:
    database = tmp_path / "db.sqlite3"
    async with AnswerService(database=database, index_dir=index_dir) as service:
        answer = await service.answer("default", QUESTION)
    async with AnswerService(database=database, index_dir=index_dir) as other:
        record = await other.conversation(answer.conversation_id)
        assert record.turns[0].answer == answer.text
        assert isinstance(other.store, SQLiteConversationStore)
        assert isinstance(other.logs, SQLiteLogStore)
        assert (await other.logs.newest_for_runner(answer.runner_id)) is not None


# --- preparing, and searching in the loop ---------------------------------------------------------


class PreparedModel(ScriptedModel):
    """A scripted model that counts how often the service asked it to prepare."""

    prepared = 0

    async def prepare(self) -> None:
        self.prepared += 1


async def test_prepare_opens_the_named_agents_models_before_any_question(
    make_service: ServiceFactory,
) -> None:
    model = PreparedModel([{"text": "It is 180 ECTS [1]."}], name="scripted")
    service = make_service(scripted_agent(), models={"scripted": model})
    await service.prepare(["scripted"])
    assert model.prepared == 1
    assert model.seen == []  # nothing was asked
    answer = await service.answer("scripted", QUESTION)
    assert [s.uri for s in answer.sources] == [BSC]


async def test_prepare_refuses_unknown_and_disabled_agents(make_service: ServiceFactory) -> None:
    service = make_service(scripted_agent(enabled=False), models={"scripted": scripted()})
    with pytest.raises(NotFound, match="agent 'ghost' not found"):
        await service.prepare(["ghost"])
    with pytest.raises(Conflict, match="not enabled for answers"):
        await service.prepare(["scripted"])
    await service.prepare()  # every agent that can answer: the disabled one is left out


async def test_searching_in_the_loop_gives_the_same_answers_as_in_threads(
    make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    searched_in: list[int] = []
    search = RagSearch.run

    def recording(self: RagSearch, *args: Any) -> dict[str, Any]:
        searched_in.append(threading.get_ident())
        return search(self, *args)

    monkeypatch.setattr(RagSearch, "run", recording)
    threaded, inline = make_service(), make_service(tool_threads=False)
    for agent, question, reader in CASES:
        first = await threaded.answer(agent, question, user=reader)
        assert searched_in.pop() != threading.get_ident()
        second = await inline.answer(agent, question, user=reader)
        assert searched_in.pop() == threading.get_ident()
        assert second.text == first.text
        assert [s.uri for s in second.sources] == [s.uri for s in first.sources]
        assert [r.returned for r in second.forced] == [r.returned for r in first.forced]
