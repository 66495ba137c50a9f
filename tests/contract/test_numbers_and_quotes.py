"""Conversation-wide numbers on sources (citelab/number) and source quotes on anchors."""

from __future__ import annotations

from typing import Any

import pytest

from citelab import InvalidInput
from citelab.contract import (
    SOURCE_NUMBER_KEY,
    SOURCE_QUOTES_KEY,
    AnswerMessage,
    build_message,
    render_answer_html,
    render_message_html,
    render_sources_markdown,
    validate_message,
)

TEXT = "Fees are due in May [2]. Loans open in June [5]."
FEES, LOANS = "entity:node/2", "entity:node/5"


def _message(**changes: Any) -> Any:
    return build_message(
        TEXT,
        [
            {"uri": FEES, "title": "Fees", "number": 2},
            {"uri": LOANS, "title": "Loans", "number": 5},
        ],
        anchors=[
            {
                "sourceUri": FEES,
                "citedText": "Fees are due in May",
                "startIndex": 0,
                "endIndex": 19,
            },
        ],
        **changes,
    )


def test_numbers_other_than_positions_go_on_every_link() -> None:
    message = _message()
    wire = message.to_wire()
    links = [b for b in wire["content"] if b["type"] == "resource_link"]
    assert [link["_meta"][SOURCE_NUMBER_KEY] for link in links] == [2, 5]
    assert [n for n, _ in message.numbered_sources] == [2, 5]
    assert validate_message(wire) == []
    # Positions 1..k need no number: the wire shape stays as it was.
    plain = build_message("A [1].", [{"uri": FEES, "title": "Fees", "number": 1}])
    assert "_meta" not in plain.to_wire()["content"][1]


@pytest.mark.parametrize(
    ("numbers", "problem"),
    [((2, 2), "must be distinct"), ((2, 0), "integer >= 1"), ((3, None), "integer >= 1")],
)
def test_unusable_numbers_are_refused(numbers: tuple[Any, Any], problem: str) -> None:
    sources = [{"uri": FEES, "number": numbers[0]}, {"uri": LOANS, "number": numbers[1]}]
    with pytest.raises(InvalidInput, match=problem):
        build_message(TEXT, sources)


@pytest.mark.parametrize("bad", [0, True, "2", 1.5])
def test_a_bad_number_payload_is_a_violation(bad: object) -> None:
    wire = _message().to_wire()
    wire["content"][1]["_meta"][SOURCE_NUMBER_KEY] = bad
    violations = validate_message(wire)
    assert [v.path for v in violations] == [f'content[1]._meta["{SOURCE_NUMBER_KEY}"]']


def test_renderers_use_the_numbers_the_text_uses() -> None:
    message = _message()
    html = render_answer_html(message)
    assert 'data-ref-index="2"' in html
    assert 'data-ref-index="5"' in html
    sources = render_message_html(message)
    assert "<ul" in sources
    assert 'data-ref-index="5"' in sources
    assert "[5] " in sources
    assert render_sources_markdown(message).splitlines()[1].startswith("5. ")
    # A repeated number makes readers fall back to positions 1..k.
    wire = message.to_wire()
    wire["content"][2]["_meta"][SOURCE_NUMBER_KEY] = 2
    assert validate_message(wire) == []  # each payload is valid on its own
    again = AnswerMessage.model_validate(wire)
    assert [n for n, _ in again.numbered_sources] == [1, 2]


def test_source_quotes_are_checked_against_the_anchors() -> None:
    good = {"anchorIndex": 0, "sourceUri": FEES, "text": "Tuition is due by 31 May."}
    message = _message(source_quotes=[good])
    assert validate_message(message) == []
    assert message.source_quotes[0].text == "Tuition is due by 31 May."
    wire = message.to_wire()
    wire["content"][0]["_meta"][SOURCE_QUOTES_KEY] = [
        {**good, "anchorIndex": 3},
        {**good, "sourceUri": LOANS},
        {**good, "startIndex": 4},
        {**good, "startIndex": 9, "endIndex": 2},
        {"anchorIndex": -1, "sourceUri": FEES, "text": "x"},
    ]
    prefix = f'content[0]._meta["{SOURCE_QUOTES_KEY}"]'
    assert sorted((v.path, v.code) for v in validate_message(wire)) == [
        (f"{prefix}[0].anchorIndex", "unknown_anchor"),
        (f"{prefix}[1].sourceUri", "source_mismatch"),
        (f"{prefix}[2]", "bad_span"),
        (f"{prefix}[3]", "bad_span"),
        (f"{prefix}[4].anchorIndex", "out_of_range"),
    ]
