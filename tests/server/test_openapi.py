"""The OpenAPI document: well-formed 3.1, every reference resolves, and real bodies match it."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest

from citelab.server import openapi_document
from citelab.server._handlers import wants_event_stream

from .conftest import Live


def refs_in(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in refs_in(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in refs_in(value)]
    return []


def resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def validator(document: dict[str, Any], name: str) -> jsonschema.Draft202012Validator:
    schema = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="module")
def document(live: Live) -> dict[str, Any]:
    response = httpx.get(f"{live.url}/api/openapi.json")
    assert response.status_code == 200
    loaded: dict[str, Any] = response.json()
    return loaded


def test_document_is_openapi_3_1_with_every_endpoint(document: dict[str, Any]) -> None:
    assert document["openapi"] == "3.1.0"
    assert set(document["paths"]) == {
        "/api/question",
        "/api/feedback",
        "/api/document",
        "/api/conversations",
        "/api/conversations/{conversation_id}",
        "/api/openapi.json",
        "/",
    }
    question = document["paths"]["/api/question"]["post"]
    assert {"200", "400", "401", "403", "404", "409", "413", "500"} <= set(question["responses"])
    content = question["responses"]["200"]["content"]
    assert set(content) == {"application/json", "text/event-stream"}
    assert set(content["text/event-stream"]["x-events"]) == {"references", "token", "done", "error"}
    assert document["components"]["securitySchemes"]["csrf"]["name"] == "X-CSRF-Token"


def test_every_reference_resolves_and_every_schema_is_json_schema_2020_12(
    document: dict[str, Any],
) -> None:
    refs = refs_in(document)
    assert len(refs) > 10
    for ref in refs:
        resolve(document, ref)
    for schema in document["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)


def test_real_bodies_match_the_document(live: Live, document: dict[str, Any]) -> None:
    client = live.client("alice")
    answer = client.post("/api/question", json={"question": "How much is the semester fee?"})
    validator(document, "DoneEvent").validate(answer.json())
    validator(document, "Question").validate({"question": "Hi", "agent": "default"})
    refused = client.post("/api/question", json={"question": 1})
    validator(document, "ErrorBody").validate(refused.json())
    with pytest.raises(jsonschema.ValidationError):
        validator(document, "Question").validate({"question": 1})
    rating = {"conversation_id": answer.json()["conversation_id"], "turn": 1, "value": "up"}
    validator(document, "FeedbackRequest").validate(rating)
    validator(document, "FeedbackResult").validate(client.post("/api/feedback", json=rating).json())


def test_anonymous_servers_say_so_in_the_security_list() -> None:
    closed = openapi_document(version="1", cookie_name="c", anonymous=False, max_body_bytes=10)
    opened = openapi_document(version="1", cookie_name="c", anonymous=True, max_body_bytes=10)
    assert {} not in closed["security"]
    assert {} in opened["security"]


@pytest.mark.parametrize(
    ("accept", "wanted"),
    [
        ("text/event-stream", True),
        ("application/json, text/event-stream;q=0.5", True),
        ("TEXT/EVENT-STREAM", True),
        ("text/event-stream;q=0", False),
        ("text/event-stream; q=0.0", False),
        ("*/*", False),
        ("", False),
        ("application/json", False),
        ("text/event-stream;q=bogus", True),
    ],
)
def test_accept_negotiation(accept: str, wanted: bool) -> None:
    assert wants_event_stream(accept) is wanted


@pytest.mark.parametrize("blank", ["", "   ", "\n\t "])
def test_blank_questions_are_outside_the_schema_as_the_server_refuses_them(
    live: Live, document: dict[str, Any], blank: str
) -> None:
    with pytest.raises(jsonschema.ValidationError):
        validator(document, "Question").validate({"question": blank})
    assert live.client("alice").post("/api/question", json={"question": blank}).status_code == 400


def test_an_integral_number_is_an_integer_as_the_schema_says(
    live: Live, document: dict[str, Any]
) -> None:
    client = live.client("alice")
    asked = client.post("/api/question", json={"question": "How much is the semester fee?"})
    rating = {"conversation_id": asked.json()["conversation_id"], "turn": 1.0, "value": "up"}
    validator(document, "FeedbackRequest").validate(rating)
    assert client.post("/api/feedback", json=rating).json()["turn"] == 1
    for wrong in ["1", True, 1.5]:
        with pytest.raises(jsonschema.ValidationError):
            validator(document, "FeedbackRequest").validate({**rating, "turn": wrong})
        assert client.post("/api/feedback", json={**rating, "turn": wrong}).status_code == 400


def test_every_streamed_event_is_one_the_document_names_and_shapes(
    live: Live, document: dict[str, Any]
) -> None:
    from .conftest import ask_sse

    response = document["paths"]["/api/question"]["post"]["responses"]["200"]
    events = response["content"]["text/event-stream"]["x-events"]
    streamed = ask_sse(live.client("alice"), {"question": "How much is the semester fee?"})
    assert [e.event for e in streamed][-1] == "done"
    for event in streamed:
        assert event.event in events
        schema = {**events[event.event], "components": document["components"]}
        jsonschema.Draft202012Validator(schema).validate(json.loads(event.data))


def test_the_statuses_the_server_now_answers_are_documented(document: dict[str, Any]) -> None:
    responses = document["paths"]["/api/question"]["post"]["responses"]
    assert {"405", "408", "502", "503", "504"} <= set(responses)
    assert "Allow" in responses["405"]["headers"]
    assert "Retry-After" in responses["503"]["headers"]
