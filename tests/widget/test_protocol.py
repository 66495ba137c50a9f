"""The front-end messages: parsed into models, every wrong field named."""

from __future__ import annotations

import pytest

from citelab import InvalidInput
from citelab.events import DoneEvent, ErrorEvent, Reference
from citelab.widget._protocol import (
    AskRequest,
    FeedbackRequest,
    ack_message,
    done_message,
    error_message,
    parse_chat_request,
    parse_reply,
    references_message,
    request_id_of,
)


def test_requests_are_parsed_by_type() -> None:
    ask = parse_chat_request({"type": "ask", "request_id": "r1", "question": "Q", "extra": 1})
    assert ask == AskRequest(type="ask", request_id="r1", question="Q", followup=False)
    rating = parse_chat_request(
        {"type": "feedback", "request_id": "r2", "turn_id": "t", "value": "up"}
    )
    assert isinstance(rating, FeedbackRequest)
    assert rating.comment is None
    assert parse_reply({"type": "reply", "text": "More?"}).text == "More?"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("ask", "Input should be a valid dictionary"),
        ({"type": "feedback", "turn_id": "t", "value": "meh"}, "feedback.value: Input should be"),
        ({"type": "ask", "question": 5}, "ask.question: Input should be a valid string"),
        ({"question": "Q"}, "Unable to extract tag using discriminator"),
    ],
)
def test_bad_requests_name_what_is_wrong(content: object, problem: str) -> None:
    with pytest.raises(InvalidInput, match="bad front-end message") as caught:
        parse_chat_request(content)
    assert problem in str(caught.value)
    with pytest.raises(InvalidInput, match="text"):
        parse_reply({"type": "reply", "text": ""})


def test_request_ids_are_echoed_only_when_usable() -> None:
    assert request_id_of({"request_id": "r9"}) == "r9"
    assert request_id_of({"request_id": 9}) is None
    assert request_id_of({"request_id": "x" * 201}) is None
    assert request_id_of(["r9"]) is None


def test_kernel_messages_are_the_event_payloads_with_a_turn_id() -> None:
    reference = Reference(number=1, uri="entity:node/1", title="Fees")
    assert references_message("t1", [reference]) == {
        "type": "references",
        "turn_id": "t1",
        "references": [reference.model_dump(mode="json")],
    }
    done = DoneEvent(text="x", references=[], message={}, conversation_id="c", turn=1)
    assert done_message("t1", done)["type"] == "done"
    assert done_message("t1", done)["no_answer"] is False
    assert error_message("t1", ErrorEvent(code="c", message="m")) == {
        "type": "error",
        "turn_id": "t1",
        "code": "c",
        "message": "m",
    }
    assert ack_message("r1") == {"type": "ack", "request_id": "r1"}
    assert ack_message("r1", "no") == {"type": "ack", "request_id": "r1", "error": "no"}
