"""The chat's controls, kernel side: Stop, New conversation, the local document view, the
demo pace, and the per-turn "prompt and rounds" data (through a recording comm)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from citelab import InvalidInput
from citelab.agent import resolve_corpus_path
from citelab.corpus import Reader, load_corpus
from citelab.widget import Chat

from .conftest import ServiceFactory, comm_of, scripted, scripted_agent
from .test_chat import FEES, held_chat, kinds, scripted_chat

pytestmark = pytest.mark.usefixtures("comms")


def acks(chat: Chat) -> dict[str, dict[str, Any]]:
    return {m["request_id"]: m for m in comm_of(chat).custom if m["type"] == "ack"}


@pytest.mark.anyio
async def test_stop_from_the_front_end_cancels_the_answer_streaming(
    make_service: ServiceFactory,
) -> None:
    chat, model = held_chat(make_service)
    front_end = comm_of(chat)
    front_end.from_front_end({"type": "ask", "request_id": "r1", "question": "Fees?"})
    await model.started.wait()
    front_end.from_front_end({"type": "stop", "request_id": "r2"})
    await chat.wait()

    assert acks(chat)["r2"] == {"type": "ack", "request_id": "r2"}
    assert kinds(front_end.custom)[-1] == "error"
    assert front_end.custom[-1]["code"] == "cancelled"
    assert chat.turns[0]["status"] == "error"  # the turn stays shown, stopped
    # Stop with nothing running is accepted and changes nothing.
    front_end.from_front_end({"type": "stop", "request_id": "r3"})
    assert "error" not in acks(chat)["r3"]
    assert len(chat.turns) == 1


@pytest.mark.anyio
async def test_new_conversation_cancels_clears_every_view_and_forgets_the_conversation(
    make_service: ServiceFactory,
) -> None:
    chat, model = held_chat(make_service)
    model.release.set()
    first = await chat.ask("What does a semester cost?")
    assert chat.conversation_id == first.conversation_id
    model.release.clear()
    front_end = comm_of(chat)
    front_end.from_front_end(
        {"type": "ask", "request_id": "r1", "question": "And when?", "followup": True}
    )
    await asyncio.sleep(0.05)
    front_end.from_front_end({"type": "new_conversation", "request_id": "r2"})
    await chat.wait()

    assert "error" not in acks(chat)["r2"]
    assert {"type": "reset"} in front_end.custom
    assert chat.turns == []
    assert chat.conversation_id is None
    model.release.set()
    second = await chat.ask("What does a semester cost?", followup=True)
    assert second.conversation_id != first.conversation_id  # a new conversation


@pytest.mark.anyio
async def test_the_document_request_returns_the_entity_as_the_reader_may_read_it(
    make_service: ServiceFactory,
) -> None:
    chat = Chat(make_service(), agent="university")
    answer = await chat.ask("What does the Data Science MSc cost?")
    uri = answer.references[0].uri
    front_end = comm_of(chat)
    front_end.from_front_end({"type": "document", "request_id": "d1", "uri": uri})
    await chat.wait()
    document = acks(chat)["d1"]["document"]
    assert document["uri"] == uri
    assert document["title"] == answer.references[0].title
    assert document["content"]  # the whole text, not a snippet

    front_end.from_front_end({"type": "document", "request_id": "d2", "uri": "entity:node/nope"})
    front_end.from_front_end({"type": "document", "request_id": "d3", "uri": "https://x.org/"})
    front_end.from_front_end({"type": "document", "request_id": "d4"})
    await chat.wait()
    assert "not found" in acks(chat)["d2"]["error"]
    assert "not an entity:<type>/<id> URI" in acks(chat)["d3"]["error"]
    assert "uri: Field required" in acks(chat)["d4"]["error"]
    assert "document" not in acks(chat)["d2"]


@pytest.mark.anyio
async def test_restricted_documents_are_not_found_for_readers_without_access(
    make_service: ServiceFactory,
) -> None:
    # The intranet corpus has documents only staff may read.
    corpus = load_corpus(resolve_corpus_path("intranet"))
    restricted = next(doc for doc in corpus if not doc.access.public)
    service = make_service()
    anonymous = Chat(service, agent="intranet")
    comm_of(anonymous).from_front_end(
        {"type": "document", "request_id": "d1", "uri": restricted.uri}
    )
    await anonymous.wait()
    assert "not found" in acks(anonymous)["d1"]["error"]
    assert "document" not in acks(anonymous)["d1"]

    allowed = Reader(
        user_id=next(iter(restricted.access.users), "someone"), roles=restricted.access.roles
    )
    staff = Chat(service, agent="intranet", user=allowed)
    comm_of(staff).from_front_end({"type": "document", "request_id": "d2", "uri": restricted.uri})
    await staff.wait()
    assert "error" not in acks(staff)["d2"]
    shown = acks(staff)["d2"]["document"]
    assert shown["entity_id"] == restricted.entity_id
    assert shown["uri"] == restricted.uri


@pytest.mark.anyio
async def test_the_demo_pace_spreads_the_tokens_over_time(make_service: ServiceFactory) -> None:
    pieces = [f"word{i} " for i in range(10)] + ["[1]."]
    # Set-up (the index) first, so the paced turn's time is the turn's own.
    await scripted_chat(make_service, {"text": pieces}).ask("Fees?")

    paced = scripted_chat(make_service, {"text": pieces}, pace=0.05, token_interval=0)
    started = time.monotonic()
    answer = await paced.ask("Fees?")
    paced_seconds = time.monotonic() - started
    # 11 tokens, 0.05 s after each: at least half a second, whatever the machine's load.
    assert paced_seconds >= 0.5
    sent = comm_of(paced).custom
    assert kinds(sent)[0] == "turn_start"
    assert kinds(sent)[-1] == "done"
    tokens = [m["text"] for m in sent if m["type"] == "token"]
    assert "".join(tokens) == answer.raw_text
    assert len(tokens) == len(pieces)  # one message per token: nothing joined while paced
    # The references still come before the first token.
    assert kinds(sent).index("references") < kinds(sent).index("token")


def test_pace_values_are_checked(make_service: ServiceFactory) -> None:
    service = make_service()
    assert Chat(service, pace="demo").pace == "demo"
    for bad in ("fast", -1, 99, float("nan"), True):
        with pytest.raises(InvalidInput, match="pace"):
            Chat(service, pace=bad)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_done_turn_carries_its_message_and_its_prompt_and_rounds(
    make_service: ServiceFactory,
) -> None:
    model = scripted(
        {"tool_calls": [{"name": "rag_search", "arguments": {"query": "semester fee"}}]},
        {"text": [FEES]},
    )
    service = make_service(scripted_agent("scripted"), models={"scripted": model})
    chat = Chat(service, agent="scripted")
    answer = await chat.ask("What does a semester cost?")
    turn = chat.turns[0]
    assert turn["message"] == answer.message.to_wire()
    rounds = turn["rounds"]
    assert rounds["system_prompt"].startswith("You are the scripted test agent.")
    assert "<source" in rounds["system_prompt"] or "[1]" in rounds["system_prompt"]
    assert [r["index"] for r in rounds["rounds"]] == [1, 2]
    call = rounds["rounds"][0]["tool_calls"][0]
    assert call["name"] == "rag_search"
    assert '"semester fee"' in call["arguments"]
    assert call["message"]  # the tool message as rewritten, what the model read next
    assert rounds["rounds"][1]["text"] == FEES
    assert rounds["forced"]
    assert rounds["forced"][0]["name"] == "rag_search"


@pytest.mark.anyio
async def test_the_live_done_message_carries_the_prompt_and_rounds(
    make_service: ServiceFactory,
) -> None:
    # The view draws a turn from the live messages first (the trait may come later, or be
    # one sync behind): a `done` without `rounds` left "Prompt and rounds" hidden (#24).
    model = scripted(
        {"tool_calls": [{"name": "rag_search", "arguments": {"query": "semester fee"}}]},
        {"text": [FEES]},
    )
    service = make_service(scripted_agent("scripted"), models={"scripted": model})
    chat = Chat(service, agent="scripted")
    await chat.ask("What does a semester cost?")
    done = [m for m in comm_of(chat).custom if m["type"] == "done"]
    assert len(done) == 1
    assert done[0]["rounds"] == chat.turns[-1]["rounds"]
    assert [r["index"] for r in done[0]["rounds"]["rounds"]] == [1, 2]


def test_the_chat_names_its_kernel_session_for_the_front_end(
    make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Outside a kernel there is none to name; in one, the chat carries the session id the
    # kernel writes into every message's header (js/kernel/kernel_watch.js compares the two).
    service = make_service()
    assert Chat(service)._kernel_session == ""

    class Session:
        session = "4b1c-kernel-session"

    class Kernel:
        session = Session()

    class Shell:
        kernel = Kernel()

    import IPython

    monkeypatch.setattr(IPython, "get_ipython", Shell)
    chat = Chat(service)
    assert chat._kernel_session == "4b1c-kernel-session"
    assert "_kernel_session" in chat.get_state()
