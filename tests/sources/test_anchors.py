"""Anchors: the claim each marker closes, as ``_meta`` citation anchors."""

from __future__ import annotations

import pytest
from sources_builders import numbered

from citelab.sources import build_anchors, finalize_citations


def anchors(text: str, *numbers: int) -> list[tuple[str, str]]:
    finalized = finalize_citations(text, numbered(*(numbers or range(1, 10))))
    return [
        (a.source_uri.removeprefix("entity:node/"), a.cited_text) for a in build_anchors(finalized)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One claim. Another claim [1].", [("1", "Another claim")]),
        ("One.[1] Two.[2]", [("1", "One."), ("2", "Two.")]),
        ("First [1] and second [2].", [("1", "First"), ("2", "and second")]),
        ("Clause one; clause two [1]", [("1", "clause two")]),
        ("Note: the fee is 300 euros [1].", [("1", "the fee is 300 euros")]),
        ("Pi is 3.14 [1].", [("1", "Pi is 3.14")]),
        ("Wait… really [1]", [("1", "really")]),
        ("- A listed claim [1]\n- Another [2]", [("1", "A listed claim"), ("2", "Another")]),
        ("## A heading claim [1]", [("1", "A heading claim")]),
        ("> Quoted claim [1]", [("1", "Quoted claim")]),
        ("12. Numbered claim [1]", [("1", "Numbered claim")]),
        ("Line one\nline two [1]", [("1", "line two")]),
        ("[1] leads the line.", []),
    ],
)
def test_the_span_is_the_claim_the_marker_closes(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert anchors(text) == expected


def test_a_group_yields_one_anchor_per_source_on_the_same_span() -> None:
    finalized = finalize_citations("Both agree [2, 1].", numbered(1, 2))
    result = build_anchors(finalized)
    assert [(a.source_uri, a.start_index, a.end_index) for a in result] == [
        ("entity:node/2", 0, 10),
        ("entity:node/1", 0, 10),
    ]


def test_a_chain_shares_the_first_markers_span() -> None:
    assert anchors("Both agree [1][2] [3]. Next [1][1].") == [
        ("1", "Both agree"),
        ("2", "Both agree"),
        ("3", "Both agree"),
        ("1", "Next"),
    ]


def test_offsets_are_code_points_in_the_final_text() -> None:
    finalized = finalize_citations("😀 Émile’s claim [7].", numbered(7))
    [anchor] = build_anchors(finalized)
    assert finalized.text == "😀 Émile’s claim [1]."
    assert (anchor.start_index, anchor.end_index) == (0, 15)
    assert anchor.cited_text == "😀 Émile’s claim"
    assert anchor.model_dump(by_alias=True) == {
        "sourceUri": "entity:node/7",
        "citedText": "😀 Émile’s claim",
        "startIndex": 0,
        "endIndex": 15,
    }


def test_no_markers_no_anchors() -> None:
    assert anchors("Nothing cited here.") == []
