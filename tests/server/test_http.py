"""Answers over real HTTP (uvicorn on loopback): JSON, SSE, and every error mapping."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Iterator

import pytest

from citelab.contract import validate_message
from citelab.events import DoneEvent, ErrorEvent, ReferencesEvent, TokenEvent

from .conftest import MAX_BODY_BYTES, Live, ask_sse
from .doubles import CRASH_AT_ONCE, CRASH_HARD, CRASH_MIDWAY, SECRET

QUESTION = "How much is the semester fee?"


def test_json_answer_is_the_done_payload_with_a_valid_contract_message(live: Live) -> None:
    response = live.client("alice").post("/api/question", json={"question": QUESTION})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "no-store"
    done = DoneEvent.model_validate(response.json())
    assert "312 euros" in done.text
    assert [ref.uri for ref in done.references] == ["entity:page/semester-fee"]
    assert done.turn == 1
    assert validate_message(done.message) == []


def test_sse_answer_streams_references_tokens_then_done(live: Live) -> None:
    events = ask_sse(live.client("alice"), {"question": QUESTION})
    names = [event.event for event in events]
    assert names[0] == "references"
    assert names[-1] == "done"
    assert set(names[1:-1]) == {"token"}
    assert len(names) > 3
    references = ReferencesEvent.model_validate_json(events[0].data)
    tokens = [TokenEvent.model_validate_json(e.data).text for e in events[1:-1]]
    done = DoneEvent.model_validate_json(events[-1].data)
    assert "entity:page/semester-fee" in [ref.uri for ref in references.references]
    # The streamed pieces are the raw text; done carries it finalized (here: unchanged).
    assert "".join(tokens) == done.text
    assert validate_message(done.message) == []


def test_accept_negotiation_q_zero_means_json(live: Live) -> None:
    client = live.client("alice")
    headers = {"Accept": "text/event-stream;q=0, application/json"}
    response = client.post("/api/question", json={"question": QUESTION}, headers=headers)
    assert response.headers["content-type"] == "application/json"
    DoneEvent.model_validate(response.json())


def test_a_follow_up_continues_the_conversation(live: Live) -> None:
    client = live.client("alice")
    first = client.post("/api/question", json={"question": QUESTION}).json()
    follow = {"question": "What does the fee include?", "conversation_id": first["conversation_id"]}
    second = client.post("/api/question", json=follow)
    assert second.status_code == 200
    assert second.json()["turn"] == 2
    assert second.json()["conversation_id"] == first["conversation_id"]


def error_of(response_json: dict[str, object]) -> tuple[str, str]:
    error = response_json["error"]
    assert isinstance(error, dict)
    assert set(error) == {"code", "message"}
    return str(error["code"]), str(error["message"])


@pytest.mark.parametrize(
    "case",
    [
        ({"question": QUESTION, "agent": "disabled"}, 409, "conflict", "not enabled"),
        ({"question": QUESTION, "agent": "no_such_agent"}, 404, "not_found", "no_such_agent"),
        ({"question": QUESTION, "conversation_id": "nope"}, 404, "not_found", "'nope' not found"),
        ({"question": "   "}, 400, "invalid_input", "must not be empty"),
        ({"question": 42}, 400, "invalid_input", "question: Input should be a valid string"),
        ({"question": QUESTION, "extra": 1}, 400, "invalid_input", "extra: Extra inputs"),
        ([QUESTION], 400, "invalid_input", "body: Input should be an object"),
    ],
)
@pytest.mark.parametrize("accept", ["application/json", "text/event-stream"])
def test_question_errors_map_to_status_and_json_body(
    live: Live, case: tuple[object, int, str, str], accept: str
) -> None:
    body, status, code, says = case
    response = live.client("alice").post("/api/question", json=body, headers={"Accept": accept})
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    got_code, message = error_of(response.json())
    assert got_code == code
    assert says in message


def test_invalid_json_is_400(live: Live) -> None:
    client = live.client("alice")
    headers = {"Content-Type": "application/json"}
    response = client.post("/api/question", content=b'{"question": "unterminated', headers=headers)
    assert response.status_code == 400
    assert "not valid JSON" in error_of(response.json())[1]


def test_declared_oversized_body_is_413_before_it_is_read(live: Live) -> None:
    client = live.client("alice")
    body = json.dumps({"question": "x" * (MAX_BODY_BYTES + 10)})
    response = client.post(
        "/api/question", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert error_of(response.json())[0] == "payload_too_large"


def test_chunked_oversized_body_is_cut_off_while_reading(live: Live) -> None:
    sent: list[int] = []

    def chunks() -> Iterator[bytes]:
        yield b'{"question": "'
        for _ in range(64):
            sent.append(1)
            yield b"y" * 4096
        yield b'"}'

    client = live.client("alice")
    response = client.post(
        "/api/question", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert "content-length" not in response.request.headers  # really chunked
    assert response.status_code == 413
    assert error_of(response.json())[0] == "payload_too_large"


def test_unknown_route_and_wrong_method_are_json_errors(live: Live) -> None:
    client = live.client("alice")
    missing = client.get("/api/nothing-here")
    assert missing.status_code == 404
    assert error_of(missing.json())[0] == "not_found"
    wrong = client.get("/api/question")
    assert wrong.status_code == 405
    assert error_of(wrong.json())[0] == "method_not_allowed"


def test_non_json_body_is_415(live: Live) -> None:
    response = live.client("alice").post(
        "/api/question", content=QUESTION, headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 415
    assert error_of(response.json())[0] == "unsupported_media_type"


def logged_error(caplog: pytest.LogCaptureFixture, message: str) -> logging.LogRecord:
    """The one log record of the error id a generic message quotes."""
    found = re.search(r"error id (\w+)", message)
    assert found is not None, message
    error_id = found.group(1)
    logged = [r for r in caplog.records if r.name == "citelab.server" and error_id in r.message]
    assert len(logged) == 1
    return logged[0]


def test_a_model_crash_is_502_with_a_generic_message_and_a_logged_traceback(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    body = {"agent": "tripwire", "question": f"{QUESTION} {CRASH_AT_ONCE}"}
    with caplog.at_level(logging.ERROR, logger="citelab.server"):
        response = live.client("alice").post("/api/question", json=body)
    assert response.status_code == 502
    code, message = error_of(response.json())
    assert code == "model_error"
    assert message.startswith("The model failed to answer (error id ")
    assert SECRET not in response.text
    assert "RuntimeError" not in response.text
    record = logged_error(caplog, message)
    assert record.exc_info is not None
    assert SECRET in str(record.exc_info[1])


def test_a_crash_once_the_stream_started_is_a_generic_error_event(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    body = {"agent": "tripwire", "question": f"{QUESTION} {CRASH_AT_ONCE}"}
    with caplog.at_level(logging.ERROR, logger="citelab.server"):
        events = ask_sse(live.client("alice"), body)
    # The forced search sent the references before the model was called.
    assert [event.event for event in events] == ["references", "error"]
    error = ErrorEvent.model_validate_json(events[-1].data)
    assert error.code == "model_error"  # the code a JSON answer's 502 carries
    assert SECRET not in events[-1].data
    assert logged_error(caplog, error.message).exc_info is not None


def test_an_error_mid_stream_is_an_error_event_and_the_conversation_goes_on(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    client = live.client("bob")
    first = client.post("/api/question", json={"agent": "tripwire", "question": QUESTION})
    conversation = first.json()["conversation_id"]

    with caplog.at_level(logging.ERROR, logger="citelab.server"):
        events = ask_sse(
            client, {"question": f"Tell me more {CRASH_MIDWAY}", "conversation_id": conversation}
        )
    names = [event.event for event in events]
    assert names[-1] == "error"
    assert "token" in names
    assert "done" not in names
    error = ErrorEvent.model_validate_json(events[-1].data)
    assert error.code == "model_error"
    assert SECRET not in events[-1].data
    assert logged_error(caplog, error.message).exc_info is not None

    follow = {"question": "What does the fee include?", "conversation_id": conversation}
    done = DoneEvent.model_validate_json(ask_sse(client, follow)[-1].data)
    assert done.conversation_id == conversation
    assert done.turn == 2  # the failed turn was not kept
    assert done.text


def test_a_crash_that_is_not_an_exception_still_ends_the_stream(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    body = {"agent": "tripwire", "question": f"{QUESTION} {CRASH_HARD}"}
    with caplog.at_level(logging.ERROR, logger="citelab.server"):
        events = ask_sse(live.client("alice"), body)
    assert [event.event for event in events][-1] == "error"
    error = ErrorEvent.model_validate_json(events[-1].data)
    assert error.code == "internal_error"
    assert logged_error(caplog, error.message).exc_info is not None


def test_feedback_is_recorded_and_replaced(live: Live) -> None:
    client = live.client("alice")
    answer = client.post("/api/question", json={"question": QUESTION}).json()
    rating = {"conversation_id": answer["conversation_id"], "turn": 1, "value": "down"}
    first = client.post("/api/feedback", json={**rating, "comment": "too short"})
    assert first.status_code == 200
    assert first.json() == rating
    second = client.post("/api/feedback", json={**rating, "value": "up"})
    assert second.status_code == 200
    entry = asyncio.run(live.service.logs.get(answer["log_id"]))
    assert entry is not None
    assert [tag for tag in entry.tags if tag.startswith("feedback:")] == ["feedback:up"]


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"turn": 7}, 404, "not_found"),
        ({"conversation_id": "unknown"}, 404, "not_found"),
        ({"value": "meh"}, 400, "invalid_input"),
        ({"turn": "1"}, 400, "invalid_input"),
        ({"turn": True}, 400, "invalid_input"),
        ({"comment": "x" * 2001}, 400, "invalid_input"),
    ],
)
def test_feedback_errors(live: Live, change: dict[str, object], status: int, code: str) -> None:
    client = live.client("alice")
    answer = client.post("/api/question", json={"question": QUESTION}).json()
    rating = {"conversation_id": answer["conversation_id"], "turn": 1, "value": "up", **change}
    response = client.post("/api/feedback", json=rating)
    assert response.status_code == status
    assert error_of(response.json())[0] == code


def test_feedback_on_an_agent_without_feedback_is_409(live: Live) -> None:
    client = live.client("alice")
    answer = client.post("/api/question", json={"agent": "no_feedback", "question": QUESTION})
    rating = {"conversation_id": answer.json()["conversation_id"], "turn": 1, "value": "up"}
    response = client.post("/api/feedback", json=rating)
    assert response.status_code == 409
    assert error_of(response.json())[0] == "conflict"
