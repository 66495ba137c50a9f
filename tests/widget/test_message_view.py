"""MessageView: any answer message, validated first; violations shown, never raised."""

from __future__ import annotations

import json
from typing import Any

import pytest

from citelab.contract import build_message
from citelab.contract.convert import from_anthropic, from_openai_chat
from citelab.widget import MessageView

from .conftest import comm_of

pytestmark = pytest.mark.usefixtures("comms")

ANTHROPIC_RESPONSE: dict[str, Any] = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "The Quillon library "},
        {
            "type": "text",
            "text": "opens at seven",
            "citations": [
                {
                    "type": "char_location",
                    "cited_text": "Doors open at 07:00.",
                    "document_index": 0,
                    "document_title": "Library hours",
                    "start_char_index": 0,
                    "end_char_index": 20,
                }
            ],
        },
        {"type": "text", "text": " on weekdays."},
    ],
}

OPENAI_MESSAGE: dict[str, Any] = {
    "role": "assistant",
    "content": "Quillon fees are due in May.",
    "annotations": [
        {
            "type": "url_citation",
            "url_citation": {
                "start_index": 0,
                "end_index": 27,
                "title": "Fee calendar",
                "url": "https://quillon.example/fees",
            },
        }
    ],
}


def test_a_converted_anthropic_message_is_shown_valid() -> None:
    message = from_anthropic(ANTHROPIC_RESPONSE)
    view = MessageView(message)
    assert view.message == message.to_wire()
    assert view.violations == []
    assert view.valid
    assert "Library hours" in view.static_html()
    assert "opens at seven" in view.static_html()


def test_a_converted_openai_message_is_shown_valid() -> None:
    message = from_openai_chat(OPENAI_MESSAGE)
    view = MessageView(message)
    assert view.valid
    [source] = view.message["content"][1:]
    assert source["uri"] == "https://quillon.example/fees"
    assert view.message["content"][0]["_meta"]["drupal.org/ai.citations"][0]["citedText"] == (
        "Quillon fees are due in May"
    )
    html = view.static_html()
    assert 'href="https://quillon.example/fees"' in html
    assert 'rel="noopener noreferrer"' in html


def test_the_fallback_links_an_entity_source_to_its_web_url() -> None:
    source = {"entity_type": "node", "entity_id": "5", "title": "Fees", "url": "/fees"}
    view = MessageView(build_message("Fees are due in May [1].", [source]))
    assert view.valid
    html = view.static_html()
    assert '<a href="/fees" target="_blank" rel="noopener noreferrer">Fees</a>' in html
    assert "<code>entity:node/5</code>" in html


def test_json_text_and_wire_dicts_are_accepted() -> None:
    message = build_message("Fees are due in May [1].", [{"uri": "entity:node/5", "title": "Fees"}])
    assert MessageView(message.to_json()).message == message.to_wire()
    assert MessageView(message.to_wire()).valid
    assert MessageView(message.to_json().encode()).valid


def test_violations_are_listed_not_raised_and_the_message_is_still_sent() -> None:
    wire = build_message("Fees are due in May [1].", [{"uri": "entity:node/5"}]).to_wire()
    wire["content"][0]["_meta"] = {
        "drupal.org/ai.citations": [
            {"sourceUri": "entity:node/9", "citedText": "Fees", "startIndex": 0, "endIndex": 3}
        ]
    }
    view = MessageView(wire)
    assert view.message == wire
    codes = {v["code"] for v in view.violations}
    assert codes == {"unknown_source", "cited_text_mismatch"}
    assert all(v["path"].startswith("content[0]._meta") for v in view.violations)
    html = view.static_html()
    assert "2 contract violation(s)" in html
    assert "entity:node/5" in html  # the source list still renders


@pytest.mark.parametrize(
    ("given", "code"),
    [
        ("{not json", "json_syntax"),
        ("[1, 2]", "not_an_object"),
        ({"role": "assistant", "content": [], "bad": {1, 2}}, "wrong_type"),
    ],
)
def test_unreadable_input_becomes_a_violation(given: object, code: str) -> None:
    view = MessageView(given)  # type: ignore[arg-type]
    assert view.message is None
    assert [v["code"] for v in view.violations] == [code]
    assert "No message to show" in view.static_html()


def test_a_new_message_is_validated_again() -> None:
    view = MessageView("{")
    assert not view.valid
    message = build_message("Fees [1].", [{"uri": "entity:node/5", "title": "Fees"}])
    view.show(message)
    assert view.valid
    view.message = {"role": "user", "content": []}
    assert {v["code"] for v in view.violations} >= {"wrong_value"}
    assert comm_of(view).states("violations")[-1] == view.violations


def test_a_clicked_reply_reaches_the_callback() -> None:
    clicked: list[str] = []
    message = build_message(
        "Fees [1].", [{"uri": "entity:node/5"}], suggested_replies=[{"label": "More?"}]
    )
    view = MessageView(message, on_reply=clicked.append)
    comm_of(view).from_front_end({"type": "reply", "text": "More?"})
    comm_of(view).from_front_end({"type": "reply"})  # malformed: ignored
    assert clicked == ["More?"]
    assert view.replies == ["More?"]
    assert json.loads(json.dumps(view.message))["_meta"]


def test_every_widget_model_has_its_own_key_in_its_first_state() -> None:
    message = build_message("Fees [1].", [{"uri": "entity:node/5"}])
    first, second = MessageView(message), MessageView(message)
    assert first._model_key != second._model_key
    assert len(first._model_key) == 32
    kind, opened = comm_of(first).published[0]
    assert kind == "comm_open"
    assert opened["state"]["_model_key"] == first._model_key
