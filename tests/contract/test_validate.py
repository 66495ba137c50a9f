"""validate_message: every violation with its path and code; never an exception."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citelab import ContractViolation
from citelab.contract import (
    CITATIONS_KEY,
    SUGGESTED_REPLIES_KEY,
    AnswerMessage,
    Violation,
    build_message,
    check_message,
    default_registry,
    raise_for_violations,
    validate_message,
)

Wire = dict[str, Any]
ANCHORS = f'content[0]._meta["{CITATIONS_KEY}"]'
REPLIES = f'_meta["{SUGGESTED_REPLIES_KEY}"]'


def found(data: object, **kwargs: Any) -> list[tuple[str, str]]:
    return [(v.path, v.code) for v in validate_message(data, **kwargs)]


def test_the_example_is_valid(example_message: AnswerMessage, example_wire: Wire) -> None:
    assert validate_message(example_message) == []
    assert validate_message(example_wire) == []
    assert validate_message(example_message.to_json()) == []
    assert validate_message(example_message.to_json().encode()) == []
    assert check_message(example_wire) == example_message
    assert check_message(example_message) is example_message


@pytest.mark.parametrize(
    "payload",
    [
        [],
        [{"sourceUri": "entity:node/101", "citedText": "", "startIndex": 0, "endIndex": 0}],
        [{"sourceUri": "entity:node/102", "citedText": "E", "startIndex": 0, "endIndex": 1}],
    ],
)
def test_valid_citation_payloads(example_wire: Wire, payload: list[Any]) -> None:
    example_wire["content"][0]["_meta"][CITATIONS_KEY] = payload
    assert found(example_wire) == []


@pytest.mark.parametrize(
    "payload",
    [[], [{"label": "More"}], [{"label": "More", "message": "Tell me more about the rooms"}]],
)
def test_valid_suggested_reply_payloads(example_wire: Wire, payload: list[Any]) -> None:
    example_wire["_meta"][SUGGESTED_REPLIES_KEY] = payload
    assert found(example_wire) == []


def _anchor(wire: Wire, index: int = 0) -> dict[str, Any]:
    anchor: dict[str, Any] = wire["content"][0]["_meta"][CITATIONS_KEY][index]
    return anchor


INVALID_CITATIONS: list[tuple[str, Callable[[Wire], object], str, str]] = [
    (
        "end past text",
        lambda w: _anchor(w, 2).update(endIndex=10_000),
        "[2].endIndex",
        "end_past_text",
    ),
    (
        "start after end",
        lambda w: _anchor(w).update(startIndex=100),
        "[0].startIndex",
        "start_after_end",
    ),
    (
        "negative start",
        lambda w: _anchor(w).update(startIndex=-1),
        "[0].startIndex",
        "out_of_range",
    ),
    (
        "text mismatch",
        lambda w: _anchor(w, 1).update(citedText="Students"),
        "[1].citedText",
        "cited_text_mismatch",
    ),
    (
        "shifted span",
        lambda w: _anchor(w).update(startIndex=1, endIndex=78),
        "[0].citedText",
        "cited_text_mismatch",
    ),
    (
        "unknown source",
        lambda w: _anchor(w, 3).update(sourceUri="entity:node/999"),
        "[3].sourceUri",
        "unknown_source",
    ),
    ("empty source", lambda w: _anchor(w).update(sourceUri=""), "[0].sourceUri", "empty_value"),
    ("missing field", lambda w: _anchor(w).pop("citedText"), "[0].citedText", "missing_field"),
    ("extra field", lambda w: _anchor(w).update(page=3), "[0].page", "unknown_field"),
    ("string index", lambda w: _anchor(w).update(endIndex="78"), "[0].endIndex", "wrong_type"),
    ("bool index", lambda w: _anchor(w).update(startIndex=False), "[0].startIndex", "wrong_type"),
    ("float index", lambda w: _anchor(w).update(endIndex=78.0), "[0].endIndex", "wrong_type"),
    (
        "item not object",
        lambda w: w["content"][0]["_meta"][CITATIONS_KEY].append("x"),
        "[6]",
        "not_an_object",
    ),
    (
        "payload not list",
        lambda w: w["content"][0]["_meta"].update({CITATIONS_KEY: {}}),
        "",
        "wrong_type",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "suffix", "code"),
    [case[1:] for case in INVALID_CITATIONS],
    ids=[case[0] for case in INVALID_CITATIONS],
)
def test_invalid_citation_payloads(
    example_wire: Wire, mutate: Callable[[Wire], object], suffix: str, code: str
) -> None:
    mutate(example_wire)
    assert found(example_wire) == [(ANCHORS + suffix, code)]


def _reply(wire: Wire, index: int = 0) -> dict[str, Any]:
    reply: dict[str, Any] = wire["_meta"][SUGGESTED_REPLIES_KEY][index]
    return reply


INVALID_REPLIES: list[tuple[str, Callable[[Wire], object], str, str]] = [
    ("empty label", lambda w: _reply(w).update(label=""), "[0].label", "empty_value"),
    ("blank label", lambda w: _reply(w, 1).update(label="  \t"), "[1].label", "empty_value"),
    ("missing label", lambda w: _reply(w, 2).pop("label"), "[2].label", "missing_field"),
    ("blank message", lambda w: _reply(w).update(message=" "), "[0].message", "empty_value"),
    ("label not string", lambda w: _reply(w).update(label=7), "[0].label", "wrong_type"),
    ("extra field", lambda w: _reply(w).update(icon="x"), "[0].icon", "unknown_field"),
    (
        "reply is string",
        lambda w: w["_meta"][SUGGESTED_REPLIES_KEY].append("x"),
        "[3]",
        "not_an_object",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "suffix", "code"),
    [case[1:] for case in INVALID_REPLIES],
    ids=[case[0] for case in INVALID_REPLIES],
)
def test_invalid_suggested_reply_payloads(
    example_wire: Wire, mutate: Callable[[Wire], object], suffix: str, code: str
) -> None:
    mutate(example_wire)
    assert found(example_wire) == [(REPLIES + suffix, code)]


INVALID_MESSAGES: list[tuple[str, Callable[[Wire], object], list[tuple[str, str]]]] = [
    ("role", lambda w: w.update(role="user"), [("role", "wrong_value")]),
    ("no role", lambda w: w.pop("role"), [("role", "missing_field")]),
    (
        "no content",
        lambda w: w.pop("content"),
        [("content", "missing_field"), ("content", "text_block_count")],
    ),
    (
        "content object",
        lambda w: w.update(content={}),
        [("content", "wrong_type"), ("content", "text_block_count")],
    ),
    (
        "priority > 1",
        lambda w: w["content"][1]["annotations"].update(priority=1.5),
        [("content[1].annotations.priority", "out_of_range")],
    ),
    (
        "priority < 0",
        lambda w: w["content"][2]["annotations"].update(priority=-0.1),
        [("content[2].annotations.priority", "out_of_range")],
    ),
    (
        "audience",
        lambda w: w["content"][1]["annotations"].update(audience=["bot"]),
        [("content[1].annotations.audience[0]", "wrong_value")],
    ),
    (
        "duplicate uri",
        lambda w: w["content"][3].update(uri="entity:node/101"),
        [
            ("content[3].uri", "duplicate_source"),
            (ANCHORS + "[3].sourceUri", "unknown_source"),
            (ANCHORS + "[5].sourceUri", "unknown_source"),
        ],
    ),
    (
        "link without name",
        lambda w: w["content"][1].pop("name"),
        [("content[1].name", "missing_field")],
    ),
    (
        "text not string",
        lambda w: w["content"][0].update(text=5),
        [("content[0].text", "wrong_type")],
    ),
    (
        "unknown block type",
        lambda w: w["content"].append({"type": "video"}),
        [("content[4].type", "wrong_value")],
    ),
    (
        "block without type",
        lambda w: w["content"].append({"uri": "x"}),
        [("content[4].type", "missing_field")],
    ),
    ("block not object", lambda w: w["content"].append([]), [("content[4]", "not_an_object")]),
    (
        "two text blocks",
        lambda w: w["content"].append({"type": "text", "text": "more"}),
        [("content", "text_block_count")],
    ),
    ("meta not object", lambda w: w.update(_meta=[]), [("_meta", "wrong_type")]),
    (
        "bad key name",
        lambda w: w["content"][0]["_meta"].update({"my key": 1}),
        [('content[0]._meta["my key"]', "meta_key_name")],
    ),
    (
        "reserved key",
        lambda w: w["_meta"].update({"io.modelcontextprotocol/x": 1}),
        [('_meta["io.modelcontextprotocol/x"]', "meta_key_reserved")],
    ),
    (
        "replies on text",
        lambda w: w["content"][0]["_meta"].update({SUGGESTED_REPLIES_KEY: []}),
        [(f'content[0]._meta["{SUGGESTED_REPLIES_KEY}"]', "meta_key_placement")],
    ),
    (
        "citations on a link",
        lambda w: w["content"][1].update(_meta={CITATIONS_KEY: []}),
        [(f'content[1]._meta["{CITATIONS_KEY}"]', "meta_key_placement")],
    ),
]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [case[1:] for case in INVALID_MESSAGES],
    ids=[case[0] for case in INVALID_MESSAGES],
)
def test_invalid_messages(
    example_wire: Wire, mutate: Callable[[Wire], object], expected: list[tuple[str, str]]
) -> None:
    mutate(example_wire)
    assert found(example_wire) == expected


def test_every_violation_is_reported_not_only_the_first(example_wire: Wire) -> None:
    broken = copy.deepcopy(example_wire)
    _anchor(broken, 0).update(endIndex=10_000)
    _anchor(broken, 1).update(startIndex=_anchor(broken, 1)["endIndex"] + 1)
    _anchor(broken, 2).update(startIndex=-1)
    _anchor(broken, 3).update(citedText="Late")
    for case in INVALID_REPLIES[:3]:
        case[1](broken)
    broken["content"][1]["annotations"]["priority"] = 2
    codes = sorted(code for _, code in found(broken))
    assert codes == sorted(
        [
            "end_past_text",
            "start_after_end",
            "out_of_range",
            "cited_text_mismatch",
            "empty_value",
            "empty_value",
            "missing_field",
            "out_of_range",
        ]
    )
    with pytest.raises(ContractViolation) as raised:
        check_message(broken)
    assert len(raised.value.violations) == 8
    assert "8 contract violation(s)" in str(raised.value)


@pytest.mark.parametrize(
    ("data", "code", "message"),
    [
        ("{not json", "json_syntax", "not JSON"),
        ("", "json_syntax", "not JSON"),
        (b"\xff\xfe", "json_syntax", "not JSON"),
        ("[" * 100_000, "json_syntax", "not JSON"),
        ("[]", "not_an_object", "not an array"),
        ("null", "not_an_object", "not null"),
        ('"text"', "not_an_object", "not a string"),
        ("3.5", "not_an_object", "not a number"),
        (None, "not_an_object", "not null"),
        (42, "not_an_object", "not a number"),
        ([{"role": "assistant"}], "not_an_object", "not an array"),
        (object(), "not_an_object", "not a Python object"),
        ({1, 2}, "not_an_object", "not a Python set"),
    ],
)
def test_garbage_is_one_violation_never_an_exception(data: object, code: str, message: str) -> None:
    violations = validate_message(data)
    assert [(v.path, v.code) for v in violations] == [("$", code)]
    assert message in violations[0].message


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"role": None, "content": None, "_meta": None},
        {"role": "assistant", "content": [None, 1, "x", [], {"type": None}]},
        {"role": "assistant", "content": [{"type": "text", "text": "t", "_meta": "x"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "t", "_meta": {1: 2}}]},
        {"role": "assistant", "content": [{"type": "text", "_meta": {CITATIONS_KEY: [[[]]]}}]},
        {"role": "assistant", "content": [{"type": "resource_link", "annotations": "high"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "t"}],
            "_meta": {SUGGESTED_REPLIES_KEY: "x"},
        },
        {"content": {"content": {"content": []}}},
        {"role": "assistant", "content": [{"type": "image", "data": 1, "mimeType": None}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "t",
                    "_meta": {
                        CITATIONS_KEY: [
                            {
                                "sourceUri": "u",
                                "citedText": "t",
                                "startIndex": 10**30,
                                "endIndex": float("nan"),
                            }
                        ]
                    },
                }
            ],
        },
    ],
)
def test_wrong_nesting_gives_violations_never_an_exception(data: object) -> None:
    violations = validate_message(data)
    assert violations
    assert all(isinstance(v, Violation) and v.path and v.code and v.message for v in violations)


def test_wrong_nesting_reports_each_problem_where_it_is() -> None:
    data = {"role": "assistant", "content": [None, {"type": "text", "text": "t", "_meta": {1: 2}}]}
    assert found(data) == [
        ("content[0]", "not_an_object"),
        ('content[1]._meta["1"]', "meta_key_name"),
    ]


def test_strict_mode_reports_unknown_fields_and_keys(example_wire: Wire) -> None:
    example_wire["extra"] = 1
    example_wire["content"][0]["_meta"]["org.example/x"] = 1
    assert found(example_wire) == []
    strict = [("extra", "unknown_field"), ('content[0]._meta["org.example/x"]', "meta_key_unknown")]
    assert found(example_wire, strict=True) == strict
    assert found(example_wire, registry=default_registry(strict=True)) == strict
    assert found(example_wire, registry=default_registry(strict=True), strict=False) == []


def test_check_message_tolerates_unknown_fields_unless_strict(example_wire: Wire) -> None:
    example_wire["x-trace"] = "abc"
    assert check_message(example_wire).to_wire() == {
        k: v for k, v in example_wire.items() if k != "x-trace"
    }
    with pytest.raises(
        ContractViolation, match=r"\$\[\"x-trace\"\]: not a message field \[unknown_field\]"
    ):
        check_message(example_wire, strict=True)


def test_raise_for_violations_raises_only_when_there_are_some() -> None:
    raise_for_violations([])
    violation = Violation(path="role", code="wrong_value", message="no")
    with pytest.raises(ContractViolation, match=r"role: no \[wrong_value\]") as raised:
        raise_for_violations(iter([violation]))
    assert raised.value.violations == [violation]
    assert raised.value.http_status == 400


# Random texts with astral characters, and random anchors over them: validation accepts
# exactly the anchors whose citedText is the slice they claim.
alphabet = st.characters(codec="utf-8", max_codepoint=0x1F9FF)


@st.composite
def texts_and_anchors(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    text = draw(st.text(alphabet=alphabet, max_size=30))
    anchors = []
    for _ in range(draw(st.integers(0, 5))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, len(text)))
        cited = text[start:end]
        if draw(st.booleans()):
            cited = draw(st.one_of(st.just(cited + "x"), st.text(alphabet=alphabet, max_size=5)))
        anchors.append({"sourceUri": "u", "citedText": cited, "startIndex": start, "endIndex": end})
    return text, anchors


@settings(max_examples=200, deadline=None)
@given(texts_and_anchors())
def test_anchors_are_accepted_exactly_when_the_slice_matches(
    case: tuple[str, list[dict[str, Any]]],
) -> None:
    text, anchors = case
    message = build_message(text, [{"uri": "u", "title": "U"}], anchors=anchors)
    reported = {v.path for v in validate_message(message.to_json())}
    for index, anchor in enumerate(anchors):
        matches = text[anchor["startIndex"] : anchor["endIndex"]] == anchor["citedText"]
        assert (f"{ANCHORS}[{index}].citedText" not in reported) is matches
    assert all(path.endswith(".citedText") for path in reported)
    assert json.loads(message.to_json())["content"][0]["text"] == text
