"""The chat widget's kernel side, driven through a recording comm (no kernel, no browser)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from citelab import Conflict, InvalidInput, ModelError, NotFound
from citelab._paths import CACHE_ENV
from citelab.agent import AgentConfig
from citelab.answers import AnswerService
from citelab.models import FinishDelta, TextDelta
from citelab.sources import RetrievalSettings
from citelab.widget import RECORD_COLUMNS, Chat

from .conftest import ServiceFactory, comm_of, scripted, scripted_agent, typeset_text

pytestmark = pytest.mark.usefixtures("comms")

FEES = "Every student pays a semester fee [1]."


def kinds(messages: list[dict[str, Any]]) -> list[str]:
    return [message["type"] for message in messages]


def scripted_chat(make_service: ServiceFactory, *rounds: dict[str, Any], **options: Any) -> Chat:
    service = make_service(scripted_agent("scripted"), models={"scripted": scripted(*rounds)})
    return Chat(service, agent="scripted", **options)


@pytest.mark.anyio
async def test_a_turn_sends_turn_start_references_tokens_then_done(
    make_service: ServiceFactory,
) -> None:
    chat = scripted_chat(make_service, {"text": ["Every student ", "pays a semester fee [1]."]})
    answer = await chat.ask("What does a semester cost?")

    sent = comm_of(chat).custom
    assert kinds(sent)[0] == "turn_start"
    assert kinds(sent)[-1] == "done"
    first_token = kinds(sent).index("token")
    assert "references" in kinds(sent)[1:first_token]
    assert set(kinds(sent)[first_token:-1]) == {"token"}
    turn_id = sent[0]["turn_id"]
    assert all(message["turn_id"] == turn_id for message in sent)
    assert sent[0] == {
        "type": "turn_start",
        "turn_id": turn_id,
        "question": "What does a semester cost?",
        "followup": False,
    }
    assert "".join(m["text"] for m in sent if m["type"] == "token") == answer.raw_text
    done = sent[-1]
    assert done["text"] == answer.text == FEES
    assert done["conversation_id"] == answer.conversation_id
    assert done["message"] == answer.message.to_wire()
    assert [r["uri"] for r in done["references"]] == [s.uri for s in answer.sources]


@pytest.mark.anyio
async def test_tokens_are_coalesced_into_fewer_messages(make_service: ServiceFactory) -> None:
    pieces = [f"w{i} " for i in range(300)]
    chat = scripted_chat(make_service, {"text": [*pieces, "[1]."]})
    answer = await chat.ask("What does a semester cost?")

    tokens = [m["text"] for m in comm_of(chat).custom if m["type"] == "token"]
    assert 1 <= len(tokens) < len(pieces) / 4
    assert "".join(tokens) == answer.raw_text == answer.text
    record = chat.last_record()
    assert record["tokens"] == len(pieces) + 1
    assert record["token_messages"] == len(tokens)


@pytest.mark.anyio
async def test_batch_size_bounds_each_message(make_service: ServiceFactory) -> None:
    pieces = [f"{i}," for i in range(23)]
    chat = scripted_chat(make_service, {"text": pieces}, token_interval=3600.0, max_batch_tokens=5)
    await chat.ask("Count.")
    tokens = [m["text"] for m in comm_of(chat).custom if m["type"] == "token"]
    assert tokens == ["".join(pieces[i : i + 5]) for i in range(0, 23, 5)]


@pytest.mark.anyio
async def test_no_coalescing_sends_every_token(make_service: ServiceFactory) -> None:
    pieces = ["Every ", "student ", "pays ", "[1]."]
    chat = scripted_chat(make_service, {"text": pieces}, token_interval=0.0)
    await chat.ask("Who pays?")
    assert [m["text"] for m in comm_of(chat).custom if m["type"] == "token"] == pieces


@pytest.mark.anyio
async def test_settled_state_is_in_the_traits_after_done(make_service: ServiceFactory) -> None:
    chat = scripted_chat(
        make_service,
        {"text": FEES, "suggested_replies": [{"label": "And the deadline?"}]},
    )
    answer = await chat.ask("What does a semester cost?")

    assert chat.conversation_id == answer.conversation_id
    [turn] = chat.turns
    assert turn["status"] == "done"
    assert turn["text"] == FEES
    assert turn["question"] == "What does a semester cost?"
    assert turn["references"] == [r.model_dump(mode="json") for r in answer.references]
    assert turn["suggested_replies"] == [{"label": "And the deadline?"}]
    assert turn["conversation_id"] == answer.conversation_id
    assert turn["turn"] == 1
    assert turn["log_id"] == answer.log_id
    assert turn["error"] is None
    # The front end got that same state (what a reload or a second view starts from).
    assert comm_of(chat).states("turns")[-1] == chat.turns
    assert comm_of(chat).states("conversation_id")[-1] == answer.conversation_id
    assert chat.last_message == answer.message


@pytest.mark.anyio
async def test_a_failing_model_sends_an_error_and_the_conversation_stays_usable(
    make_service: ServiceFactory,
) -> None:
    chat = scripted_chat(
        make_service,
        {"text": FEES},
        {"text": ["Half an ans"], "error_after": 1, "error": "the model fell over"},
        {"text": "The fee is due in March [1]."},
    )
    first = await chat.ask("What does a semester cost?")
    with pytest.raises(ModelError, match="fell over"):
        await chat.ask("When is it due?", followup=True)

    sent = comm_of(chat).custom
    failed = [m for m in sent if m["turn_id"] == sent[-1]["turn_id"]]
    assert [k for k in kinds(failed) if k != "references"] == ["turn_start", "token", "error"]
    assert failed[-1]["code"] == "model_error"
    assert "fell over" in failed[-1]["message"]
    assert [t["status"] for t in chat.turns] == ["done", "error"]
    assert chat.turns[1]["error"] == {"code": "model_error", "message": "the model fell over"}
    assert chat.conversation_id == first.conversation_id

    again = await chat.ask("When is it due?", followup=True)
    assert again.conversation_id == first.conversation_id
    assert again.turn == 2
    assert [t["status"] for t in chat.turns] == ["done", "error", "done"]
    assert chat.to_pandas()["status"].tolist() == ["done", "error", "done"]


@pytest.mark.anyio
async def test_a_new_question_starts_a_new_conversation_and_clears_the_turns(
    make_service: ServiceFactory,
) -> None:
    chat = scripted_chat(
        make_service, {"text": FEES}, {"text": "Due in March [1]."}, {"text": FEES}
    )
    first = await chat.ask("What does a semester cost?")
    second = await chat.ask("When is it due?", followup=True)
    assert second.conversation_id == first.conversation_id
    assert [t["question"] for t in chat.turns] == ["What does a semester cost?", "When is it due?"]

    third = await chat.ask("Fees again?")
    assert third.conversation_id != first.conversation_id
    assert third.turn == 1
    assert [t["question"] for t in chat.turns] == ["Fees again?"]
    assert len(chat.history) == 3
    frame = chat.to_pandas()
    assert list(frame.columns) == list(RECORD_COLUMNS)
    assert frame["conversation_id"].nunique() == 2
    assert frame["followup"].tolist() == [False, True, False]


@pytest.mark.anyio
async def test_questions_asked_together_run_one_after_another(
    make_service: ServiceFactory,
) -> None:
    chat = scripted_chat(make_service, {"text": FEES}, {"text": "Due in March [1]."})
    first_task = chat.ask("What does a semester cost?")
    second_task = chat.ask("When is it due?", followup=True)
    first, second = await asyncio.gather(first_task, second_task)
    assert (second.conversation_id, second.turn) == (first.conversation_id, 2)
    order = kinds(comm_of(chat).custom)
    assert order.index("done") < order.index("turn_start", 1)


@pytest.mark.anyio
async def test_a_question_from_the_front_end_is_acknowledged_and_answered(
    make_service: ServiceFactory,
) -> None:
    chat = scripted_chat(make_service, {"text": FEES})
    comm_of(chat).from_front_end(
        {"type": "ask", "request_id": "r1", "question": "  Fees?  ", "followup": False}
    )
    await chat.wait()
    sent = comm_of(chat).custom
    assert sent[0] == {"type": "ack", "request_id": "r1"}
    assert kinds(sent)[1] == "turn_start"
    assert sent[1]["question"] == "Fees?"
    assert kinds(sent)[-1] == "done"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("content", "error"),
    [
        ({"type": "ask", "request_id": "r2", "question": "   "}, "must not be empty"),
        ({"type": "ask", "request_id": "r3"}, "question: Field required"),
        ({"type": "ask", "request_id": "r4", "question": "x" * 20_001}, "too long"),
        ({"type": "shout", "request_id": "r5"}, "does not match any of the expected tags"),
    ],
)
async def test_a_bad_request_from_the_front_end_gets_an_error_ack(
    make_service: ServiceFactory, content: dict[str, Any], error: str
) -> None:
    chat = scripted_chat(make_service, {"text": FEES})
    comm_of(chat).from_front_end(content)
    await chat.wait()
    [ack] = comm_of(chat).custom
    assert ack["type"] == "ack"
    assert ack["request_id"] == content["request_id"]
    assert error in ack["error"]
    assert chat.turns == []


@pytest.mark.anyio
async def test_feedback_from_the_front_end_reaches_the_feedback_logger(
    make_service: ServiceFactory,
) -> None:
    chat = scripted_chat(make_service, {"text": FEES})
    answer = await chat.ask("What does a semester cost?")
    turn_id = chat.turns[0]["turn_id"]
    comm_of(chat).from_front_end(
        {
            "type": "feedback",
            "request_id": "f1",
            "turn_id": turn_id,
            "value": "down",
            "comment": "too short",
        }
    )
    await chat.wait()

    assert comm_of(chat).custom[-1] == {"type": "ack", "request_id": "f1"}
    assert answer.log_id is not None
    entry = await chat.service.logs.get(answer.log_id)
    assert entry is not None
    assert "feedback:down" in entry.tags
    assert entry.extra["ai_answers_feedback"]["comment"] == "too short"
    assert chat.turns[0]["feedback"] == {"value": "down", "comment": "too short"}
    assert chat.last_record()["feedback"] == "down"

    # A second rating replaces the first (one feedback tag).
    await chat.rate("up")
    entry = await chat.service.logs.get(answer.log_id)
    assert entry is not None
    assert [t for t in entry.tags if t.startswith("feedback:")] == ["feedback:up"]


@pytest.mark.anyio
async def test_feedback_refused_by_the_agent_is_an_error_ack(make_service: ServiceFactory) -> None:
    agent = scripted_agent("scripted", feedback_enabled=False)
    service = make_service(agent, models={"scripted": scripted({"text": FEES})})
    chat = Chat(service, agent="scripted")
    assert chat.feedback_enabled is False
    await chat.ask("What does a semester cost?")
    for turn_id, expected in [
        (chat.turns[0]["turn_id"], "does not accept feedback"),
        ("nope", "no turn 'nope'"),
    ]:
        comm_of(chat).from_front_end(
            {"type": "feedback", "request_id": "f2", "turn_id": turn_id, "value": "up"}
        )
        await chat.wait()
        ack = comm_of(chat).custom[-1]
        assert ack["request_id"] == "f2"
        assert expected in ack["error"]


def test_ask_sync_answers_in_a_script_and_ask_needs_a_loop(make_service: ServiceFactory) -> None:
    chat = scripted_chat(make_service, {"text": FEES})
    with pytest.raises(Conflict, match="ask_sync"):
        chat.ask("Fees?")
    answer = chat.ask_sync("What does a semester cost?")
    assert answer.text == FEES
    assert chat.turns[0]["status"] == "done"
    assert kinds(comm_of(chat).custom)[-1] == "done"


def test_a_front_end_question_without_a_running_loop_is_answered_in_place(
    make_service: ServiceFactory,
) -> None:
    chat = scripted_chat(make_service, {"text": FEES})
    comm_of(chat).from_front_end({"type": "ask", "request_id": "r1", "question": "Fees?"})
    assert kinds(comm_of(chat).custom)[0] == "ack"
    assert chat.turns[0]["status"] == "done"


@pytest.mark.anyio
async def test_ask_sync_refuses_to_block_a_running_loop(make_service: ServiceFactory) -> None:
    chat = scripted_chat(make_service, {"text": FEES})
    with pytest.raises(Conflict, match=r"await chat\.ask"):
        chat.ask_sync("Fees?")
    with pytest.raises(InvalidInput, match="must not be empty"):
        chat.ask(" \n")


def test_the_service_can_be_given_as_an_agent_config_a_mapping_or_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))  # the default SQLite file goes here
    agent = AgentConfig(name="fees", corpus="university", retrieval=RetrievalSettings())
    assert Chat(agent).agent == "fees"
    assert Chat({"fees": agent}, agent="fees").service.agents["fees"] == agent
    path = tmp_path / "agents.toml"
    path.write_text('[agents.fees]\ncorpus = "university"\nfeedback_enabled = false\n')
    from_file = Chat(path, agent="fees")
    assert from_file.agent == "fees"
    assert from_file.feedback_enabled is False
    assert Chat(None).service.agents.keys() >= {"default", "university"}


def test_bad_service_sources_and_agents_say_what_is_wrong(make_service: ServiceFactory) -> None:
    agent = AgentConfig(name="fees", corpus="university")
    with pytest.raises(InvalidInput, match="not int"):
        Chat(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"\['x'\]: expected an AgentConfig"):
        Chat({"x": "fees"})  # type: ignore[dict-item]
    with pytest.raises(NotFound, match="agent 'nobody' not found"):
        Chat(make_service(), agent="nobody")
    with pytest.raises(Exception, match="config given is 'fees'"):
        Chat(agent, agent="other")
    chat = Chat(make_service())
    with pytest.raises(NotFound, match="agent 'ghost' not found"):
        chat.agent = "ghost"
    with pytest.raises(InvalidInput, match="max_tokens"):
        Chat(make_service(), max_batch_tokens=0)
    with pytest.raises(InvalidInput, match="user"):
        Chat(make_service(), user="  ")
    with pytest.raises(NotFound, match="no turns yet"):
        chat.last_record()
    assert chat.last_message is None
    assert chat.to_pandas().empty


@pytest.mark.anyio
async def test_the_default_agent_answers_with_the_extractive_model(
    make_service: ServiceFactory,
) -> None:
    service: AnswerService = make_service()
    chat = Chat(service, user="student-7")
    answer = await chat.ask("When are tuition fees due?")
    assert answer.sources, "the offline model cites the fixture corpus"
    assert chat.turns[0]["references"][0]["title"] == answer.sources[0].title
    record = chat.last_record()
    assert record["n_sources"] == len(answer.sources)
    assert record["seconds"] >= record["first_token_seconds"] >= 0
    conversation = await service.conversation(answer.conversation_id, chat.user)
    assert conversation.owner == "student-7"


class HeldModel:
    """Streams a first piece, then holds until released (or cancelled)."""

    name = "held"

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    async def stream(self, messages: Any, tools: Any = None, **options: Any) -> Any:
        yield TextDelta(text="Every student ")
        self.started.set()
        await self.release.wait()
        yield TextDelta(text="pays a semester fee [1].")
        yield FinishDelta(reason="stop")


def held_chat(make_service: ServiceFactory) -> tuple[Chat, HeldModel]:
    model = HeldModel()
    service = make_service(scripted_agent("held"), models={"held": model})
    return Chat(service, agent="held"), model


@pytest.mark.anyio
async def test_cancel_ends_the_running_and_the_waiting_questions(
    make_service: ServiceFactory,
) -> None:
    chat, model = held_chat(make_service)
    running = chat.ask("What does a semester cost?")
    waiting = chat.ask("And when?", followup=True)
    await model.started.wait()
    assert chat.cancel() == 2
    results = await asyncio.gather(running, waiting, return_exceptions=True)
    assert all(isinstance(result, asyncio.CancelledError) for result in results)

    sent = comm_of(chat).custom
    assert kinds(sent) == ["turn_start", "references", "token", "error"]
    assert sent[-1]["code"] == "cancelled"
    assert chat.turns[0]["status"] == "error"
    assert chat.cancel() == 0

    model.release.set()
    answer = await chat.ask("What does a semester cost?")
    assert answer.text == FEES
    assert chat.turns[0]["status"] == "done"


@pytest.mark.anyio
async def test_a_stopped_turn_is_shown_as_stopped_not_as_an_error(
    make_service: ServiceFactory,
) -> None:
    # #24: the view said "Error: …" for a turn the person stopped; so did the static copy.
    chat, model = held_chat(make_service)
    running = chat.ask("What does a semester cost?")
    await model.started.wait()
    chat.cancel()
    await asyncio.gather(running, return_exceptions=True)
    shown = chat.static_html()
    assert "Error" not in shown
    assert "Every student" in shown
    assert "Stopped: the answer is incomplete." in shown


@pytest.mark.anyio
async def test_a_new_question_from_the_page_replaces_the_one_streaming(
    make_service: ServiceFactory,
) -> None:
    chat, model = held_chat(make_service)
    front_end = comm_of(chat)
    front_end.from_front_end({"type": "ask", "request_id": "r1", "question": "Fees?"})
    await model.started.wait()
    front_end.from_front_end({"type": "ask", "request_id": "r2", "question": "Costs?"})
    model.release.set()
    await chat.wait()

    sent = [m for m in front_end.custom if m["type"] in ("turn_start", "error", "done")]
    assert [(m["type"], m.get("question", m.get("code"))) for m in sent] == [
        ("turn_start", "Fees?"),
        ("error", "cancelled"),
        ("turn_start", "Costs?"),
        ("done", None),
    ]
    assert [t["question"] for t in chat.turns] == ["Costs?"]
    assert chat.turns[0]["status"] == "done"


@pytest.mark.anyio
async def test_an_unexpected_feedback_failure_still_gets_an_ack(
    make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = scripted_chat(make_service, {"text": FEES})
    await chat.ask("What does a semester cost?")

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the log store is gone")

    monkeypatch.setattr(chat.service.feedback, "record", broken)
    turn_id = chat.turns[0]["turn_id"]
    comm_of(chat).from_front_end(
        {"type": "feedback", "request_id": "f3", "turn_id": turn_id, "value": "up"}
    )
    await chat.wait()
    assert comm_of(chat).custom[-1] == {
        "type": "ack",
        "request_id": "f3",
        "error": "RuntimeError: the log store is gone",
    }
    assert chat.turns[0]["feedback"] is None


def test_a_failing_turn_asked_from_a_script_driven_comm_does_not_raise(
    make_service: ServiceFactory,
) -> None:
    chat = scripted_chat(make_service, {"text": ["Half"], "error_after": 1})
    comm_of(chat).from_front_end({"type": "ask", "request_id": "r1", "question": "Fees?"})
    assert kinds(comm_of(chat).custom)[-1] == "error"
    assert chat.last_record()["error_code"] == "model_error"


@pytest.mark.anyio
async def test_the_static_copy_is_never_typeset_as_math(make_service: ServiceFactory) -> None:
    # JupyterLab typesets `$…$` in HTML outputs: "$5 or $7" would become a formula (#24).
    chat = scripted_chat(make_service, {"text": "It costs $5 or $7 [1]."})
    await chat.ask("What does a semester cost?")
    copy = chat.static_copy_html()
    assert "$5 or $7" in copy
    assert [text for text in typeset_text(copy) if "$" in text] == []
