"""Finalize: keep cited sources, renumber by first citation, rewrite and clean the text."""

from __future__ import annotations

import pytest
from sources_builders import entity, numbered

from citelab import InvalidInput
from citelab.sources import DanglingCitation, Source, finalize_citations


def test_renumbers_by_first_citation_and_drops_the_uncited() -> None:
    sources = numbered(1, 2, 3, 4)
    result = finalize_citations("Fees [3]. Dates [1]. Fees again [3].", sources)
    assert result.text == "Fees [1]. Dates [2]. Fees again [1]."
    assert [(s.number, s.entity_id) for s in result.sources] == [(1, "3"), (2, "1")]
    assert [s.entity_id for s in result.dropped] == ["2", "4"]
    assert [s.number for s in result.dropped] == [2, 4]
    assert dict(result.renumbering) == {3: 1, 1: 2}
    assert result.dangling == ()


def test_nothing_cited_means_no_sources() -> None:
    result = finalize_citations("No citations here.", numbered(1, 2))
    assert result.text == "No citations here."
    assert result.sources == ()
    assert len(result.dropped) == 2


def test_groups_keep_their_style_and_collapse_duplicates() -> None:
    sources = numbered(1, 2, 3, 4, 5)
    text = "A [5]. B [3, 1]. C [4,4,2]. D [2-4]. E [1][3]."
    result = finalize_citations(text, sources)
    # first citations: 5→1, 3→2, 1→3, 4→4, 2→5
    assert result.text == "A [1]. B [2, 3]. C [4,5]. D [2, 4-5]. E [3][2]."


def test_a_range_stays_a_range_when_its_numbers_stay_consecutive() -> None:
    result = finalize_citations("Only [3–5].", numbered(1, 2, 3, 4, 5))
    assert result.text == "Only [1–3]."


def test_dangling_numbers_leave_their_group_and_are_reported() -> None:
    text = "Fees [1, 9]. Dates [0]. More [2]."
    result = finalize_citations(text, numbered(1, 2))
    assert result.text == "Fees [1]. Dates. More [2]."
    assert result.dangling == (
        DanglingCitation(9, 5, 11, "[1, 9]"),
        DanglingCitation(0, 19, 22, "[0]"),
    )
    assert text[19:22] == "[0]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Claim [9].", "Claim."),
        ("Claim [9] and more [1].", "Claim and more [1]."),
        ("Claim[9] and more", "Claim and more"),
        ("Claim [8][9].", "Claim."),
        ("Claim [9] [1].", "Claim [1]."),
        ("Claim [9][1].", "Claim [1]."),
        ("**Bold claim [9]**", "**Bold claim**"),
        ("[9] Starts a line.", "Starts a line."),
        ("  [9] Indented line.", "  Indented line."),
        ("Line one.\n[9]\nLine two [1].", "Line one.\nLine two [1]."),
        ("Line one [1].\n[9]", "Line one [1]."),
        ("Line one [1].\n  [9] [8]  \nNext", "Line one [1].\nNext"),
        ("- [9] Item text", "- Item text"),
        ("Text [1]\n\n[9]    still text", "Text [1]\n\nstill text"),
        ("--- [9] and [1]", "--- and [1]"),
        ("Pi is 3.14 [9] exactly", "Pi is 3.14 exactly"),
    ],
)
def test_removed_groups_take_their_extra_space_with_them(text: str, expected: str) -> None:
    result = finalize_citations(text, numbered(1))
    assert result.text == expected
    assert not result.dangling_escaped


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Removing would make a heading, a fence, a list, a definition, a bare list item,
        # join two backtick runs, or turn the indented line after it into code.
        ("[9]# Not a heading", r"\[9\]# Not a heading"),
        ("[9] ```\ncode [1]", "\\[9\\] ```\ncode [1]"),
        ("[9] - not an item", r"\[9\] - not an item"),
        ("[9] [1]: not a definition", r"\[9\] [1]: not a definition"),
        ("- [9]\n- next [1]", "- \\[9\\]\n- next [1]"),
        ("1. [9]", r"1. \[9\]"),
        ("Tick ``[9]` here [1]", r"Tick ``\[9\]` here [1]"),
        ("\n[9]\n    more text [1]", "\n\\[9\\]\n    more text [1]"),
    ],
)
def test_dangling_markers_are_escaped_when_removal_would_change_the_markdown(
    text: str, expected: str
) -> None:
    result = finalize_citations(text, numbered(1, 2))
    assert result.text == expected
    assert result.dangling_escaped
    assert [d.number for d in result.dangling] == [9]


def test_output_is_reread_and_every_dangling_marker_escaped_if_it_reads_differently() -> None:
    # Stripping the space before "[9]" would leave "[1]:" at the line start: a reference
    # definition, no longer a citation. The re-read catches it.
    result = finalize_citations("[2] [9]: the fee. Also [8].", numbered(1, 2))
    assert result.text == r"[1] \[9\]: the fee. Also \[8\]."
    assert result.dangling_escaped
    assert [d.number for d in result.dangling] == [9, 8]


def test_markers_inside_code_are_left_alone() -> None:
    text = "Use `rows[2]` as shown [2].\n\n```\nvalues[1] = 0  # [3]\n```\n"
    result = finalize_citations(text, numbered(1, 2, 3))
    assert result.text == "Use `rows[2]` as shown [1].\n\n```\nvalues[1] = 0  # [3]\n```\n"
    assert [s.entity_id for s in result.sources] == ["2"]


def test_links_and_footnotes_are_not_rewritten() -> None:
    text = "See [1](https://x.example), [2][ref], [^3] and [3]."
    result = finalize_citations(text, numbered(1, 2, 3))
    assert result.text == "See [1](https://x.example), [2][ref], [^3] and [1]."


def test_final_markers_match_the_final_text() -> None:
    result = finalize_citations("😀 one [4]. two [9] [2, 4].", numbered(2, 4))
    assert result.text == "😀 one [1]. two [1, 2]."
    for marker in result.markers:
        assert result.text[marker.start : marker.end] == marker.raw
    assert [m.numbers for m in result.markers] == [(1,), (1, 2)]


def test_references_are_the_final_cards() -> None:
    result = finalize_citations("A [2].", numbered(1, 2))
    [reference] = result.references()
    assert (reference.number, reference.uri) == (1, "entity:node/2")


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        ([entity("a")], r"sources\[0\] \(entity:node/a\) has no number: number it first"),
        (numbered(1) + numbered(1, entity_type="doc"), r"sources\[1\] .* repeats number 1"),
    ],
)
def test_sources_must_be_numbered_once(sources: list[Source], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        finalize_citations("A [1].", sources)


def test_at_conversation_scope_the_conversations_numbers_stay() -> None:
    # 1 and 2 are the conversation's; 3..5 were shown to the model as candidates.
    sources = numbered(1, 2, 3, 4, 5)
    result = finalize_citations("New [5]. Old [2]. Other new [3]. Old again [2].", sources, keep=2)
    assert result.text == "New [3]. Old [2]. Other new [4]. Old again [2]."
    assert [(s.number, s.entity_id) for s in result.sources] == [(3, "5"), (2, "2"), (4, "3")]
    assert dict(result.renumbering) == {5: 3, 2: 2, 3: 4}
    assert [s.entity_id for s in result.dropped] == ["1", "4"]


def test_at_conversation_scope_groups_and_dangling_numbers_follow_the_same_rules() -> None:
    result = finalize_citations("A [4, 1, 9]. B [2-4].", numbered(1, 2, 3, 4), keep=3)
    assert result.text == "A [1, 4]. B [2-4]."
    assert [d.number for d in result.dangling] == [9]


def test_keep_must_not_be_negative() -> None:
    with pytest.raises(InvalidInput, match="keep must be 0 or more"):
        finalize_citations("A [1].", numbered(1), keep=-1)
