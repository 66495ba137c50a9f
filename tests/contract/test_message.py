"""AnswerMessage and build_message: the wire shape, the source interface, accessors."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

import pytest
from mcp.types import CallToolResult, ResourceLink, TextContent
from mcp_types import Annotations

from citelab import InvalidInput
from citelab.contract import (
    CITATIONS_KEY,
    SUGGESTED_REPLIES_KEY,
    Anchor,
    AnswerMessage,
    SuggestedReply,
    build_message,
    source_priority,
    validate_message,
)


@dataclass
class Hit:
    """A retrieval hit with attributes, as another part of citelab would pass it."""

    entity_type: str
    entity_id: str
    title: str


def _no_nulls(value: Any) -> bool:
    if isinstance(value, dict):
        return all(v is not None and _no_nulls(v) for v in value.values())
    if isinstance(value, list):
        return all(_no_nulls(v) for v in value)
    return value is not None


def test_wire_json_uses_meta_camel_case_and_no_nulls(example_message: AnswerMessage) -> None:
    wire = json.loads(example_message.to_json())
    assert wire["role"] == "assistant"
    assert [block["type"] for block in wire["content"]] == ["text"] + ["resource_link"] * 3
    assert set(wire["content"][0]["_meta"]) == {CITATIONS_KEY}
    assert set(wire["content"][0]["_meta"][CITATIONS_KEY][0]) == {
        "sourceUri", "citedText", "startIndex", "endIndex",
    }  # fmt: skip
    assert set(wire["_meta"]) == {SUGGESTED_REPLIES_KEY}
    assert _no_nulls(wire)
    assert "meta" not in json.dumps(wire).replace("_meta", "")


def test_wire_json_round_trips_unchanged(example_message: AnswerMessage) -> None:
    text = example_message.to_json()
    again = AnswerMessage.model_validate_json(text)
    assert again == example_message
    assert again.to_json() == text
    assert AnswerMessage.model_validate(json.loads(text)).to_wire() == json.loads(text)


def test_wire_json_validates_with_the_mcp_sdk(example_message: AnswerMessage) -> None:
    wire = example_message.to_wire()
    result = CallToolResult.model_validate({"content": wire["content"], "_meta": wire["_meta"]})
    assert isinstance(result.content[0], TextContent)
    assert [type(b) for b in result.content[1:]] == [ResourceLink] * 3
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped["content"] == wire["content"]
    assert dumped["_meta"] == wire["_meta"]
    sdk_result = example_message.to_call_tool_result()
    assert sdk_result.content == result.content


def test_sources_become_resource_links_with_falling_priorities(
    example_message: AnswerMessage,
) -> None:
    sources = example_message.sources
    assert [s.uri for s in sources] == [
        "entity:node/101",
        "entity:node/102",
        "https://example.org/exam-weeks",
    ]
    assert sources[0].name == "Harbour Library opening hours"
    assert sources[0].description == "Opening hours of the Harbour Library, term and holidays."
    priorities = [s.annotations.priority for s in sources if s.annotations]
    assert priorities == [1.0, 2 / 3, 1 / 3]
    assert all(s.annotations and s.annotations.audience == ["user"] for s in sources)


@pytest.mark.parametrize("count", [1, 2, 7, 1000])
def test_priority_strictly_decreases_within_zero_and_one(count: int) -> None:
    values = [source_priority(i, count) for i in range(count)]
    assert all(0 < v <= 1 for v in values)
    assert all(a > b for a, b in itertools.pairwise(values))


def test_source_items_may_be_mappings_objects_or_resource_links() -> None:
    link = ResourceLink(
        uri="https://x.example/a",
        name="Ready",
        annotations=Annotations(priority=0.1, last_modified="2025-01-01T00:00:00Z"),
    )
    message = build_message(
        "t",
        [
            Hit("node", "5", "Admissions"),
            {"uri": "", "entity_type": "media", "entity_id": 9, "label": "A video"},
            {"url": "https://example.org/p"},
            link,
        ],
    )
    sources = message.sources
    assert [(s.uri, s.name) for s in sources] == [
        ("entity:node/5", "Admissions"),
        ("entity:media/9", "A video"),
        ("https://example.org/p", "https://example.org/p"),
        ("https://x.example/a", "Ready"),
    ]
    # A ready link keeps its own fields but takes its place in the citation order.
    assert sources[3].annotations is not None
    assert sources[3].annotations.priority == 0.25
    assert sources[3].annotations.last_modified == "2025-01-01T00:00:00Z"


def test_uri_wins_over_entity_and_url() -> None:
    item = {"uri": "entity:node/1", "entity_type": "node", "entity_id": "2", "url": "https://u"}
    assert build_message("t", [item]).sources[0].uri == "entity:node/1"


@pytest.mark.parametrize(
    "item", [{}, {"uri": ""}, {"entity_type": "node"}, {"title": "no uri"}, object()]
)
def test_a_source_without_a_usable_uri_is_invalid_input_naming_its_index(item: object) -> None:
    with pytest.raises(InvalidInput, match=r"sources\[1\] \(cited as \[2\]\) has no usable uri"):
        build_message("t", [{"uri": "ok"}, item])


def test_bad_titles_anchors_and_replies_are_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="source title must be a string, not int"):
        build_message("t", [{"uri": "u", "title": 5}])
    with pytest.raises(InvalidInput, match=r"anchors\[0\] is not a valid Anchor"):
        build_message("t", [], anchors=[{"sourceUri": "u"}])
    with pytest.raises(InvalidInput, match=r"suggested_replies\[1\] is not a valid SuggestedReply"):
        build_message("t", [], suggested_replies=["ok", {"label": " "}])
    with pytest.raises(InvalidInput, match="text must be a string, not NoneType"):
        build_message(None, [])  # type: ignore[arg-type]


def test_anchors_and_replies_accept_models_dicts_and_strings() -> None:
    anchor = Anchor(source_uri="u", cited_text="Fees", start_index=0, end_index=4)
    message = build_message(
        "Fees [1].",
        [{"uri": "u", "title": "U"}],
        anchors=[anchor, {"sourceUri": "u", "citedText": "", "startIndex": 9, "endIndex": 9}],
        suggested_replies=[
            SuggestedReply(label="More"),
            {"label": "Deadlines", "message": "When are the deadlines?"},
            "Thanks",
        ],
    )
    assert message.anchors[0] == anchor
    assert message.anchors[1].start_index == 9
    assert [r.text_to_send for r in message.suggested_replies] == [
        "More",
        "When are the deadlines?",
        "Thanks",
    ]
    assert message.to_wire()["_meta"][SUGGESTED_REPLIES_KEY][0] == {"label": "More"}
    assert validate_message(message) == []


def test_sources_sort_by_priority_and_keep_ties_stable() -> None:
    def link(uri: str, priority: float | None) -> ResourceLink:
        return ResourceLink(uri=uri, name=uri, annotations=Annotations(priority=priority))

    message = AnswerMessage(
        content=[
            TextContent(text="t"),
            link("c", 0.2),
            link("none", None),
            link("a", 0.9),
            link("b1", 0.5),
            link("b2", 0.5),
        ]
    )
    assert [s.uri for s in message.sources] == ["a", "b1", "b2", "c", "none"]


def test_a_message_without_meta_has_empty_accessors() -> None:
    message = AnswerMessage(content=[TextContent(text="Hello")])
    assert (message.text, message.anchors, message.suggested_replies) == ("Hello", [], [])
    assert AnswerMessage(content=[]).text == ""


def test_accessors_refuse_a_malformed_payload() -> None:
    message = AnswerMessage(content=[TextContent(text="t", _meta={CITATIONS_KEY: [{"x": 1}]})])
    with pytest.raises(InvalidInput, match="does not match its schema"):
        _ = message.anchors


def test_a_consumer_ignoring_meta_still_gets_a_usable_source_list(
    example_message: AnswerMessage,
) -> None:
    wire = example_message.to_wire()
    wire.pop("_meta")
    for block in wire["content"]:
        block.pop("_meta", None)
    # A plain MCP client: no citelab, no _meta, just the SDK's own result model.
    result = CallToolResult.model_validate({"content": wire["content"]})
    links = [b for b in result.content if isinstance(b, ResourceLink)]
    ordered = sorted(links, key=lambda b: -((b.annotations and b.annotations.priority) or 0.0))
    assert [(b.name, b.uri) for b in ordered] == [
        ("Harbour Library opening hours", "entity:node/101"),
        ("Booking a study room", "entity:node/102"),
        ("Exam weeks on campus", "https://example.org/exam-weeks"),
    ]
    assert isinstance(result.content[0], TextContent)
    assert "[1]" in result.content[0].text
    assert validate_message(wire) == []
