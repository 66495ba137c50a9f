"""Invariants of finalize_citations and build_anchors on generated Markdown-ish answers."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from citelab.sources import (
    FinalizedAnswer,
    Marker,
    Source,
    build_anchors,
    finalize_citations,
    parse_markers,
)

# Text pieces chosen to hit the hard cases: code, links, escapes, block syntax, brackets.
_PIECES = [
    "Claim",
    " and more ",
    "One claim. Another ",
    "word",
    "é",
    "😀",
    " ",
    "  ",
    "\t",
    ".",
    ",",
    "!",
    ":",
    "(",
    ")",
    "[",
    "]",
    "\\",
    "\n",
    "\n\n",
    "\r\n",
    "    ",
    "- ",
    "1. ",
    "# ",
    "---",
    "`",
    "``",
    "```\n",
    "~~~\n",
    "[ref]",
    "[^1]",
    "(https://x.example)",
]
_NUMBER = st.integers(min_value=0, max_value=12)
_MARKER = st.one_of(
    _NUMBER.map(lambda n: f"[{n}]"),
    st.tuples(_NUMBER, _NUMBER).map(lambda p: f"[{p[0]}, {p[1]}]"),
    st.tuples(_NUMBER, _NUMBER).map(lambda p: f"[{p[0]},{p[1]}]"),
    st.tuples(_NUMBER, st.integers(0, 3), st.sampled_from("-–")).map(
        lambda p: f"[{p[0]}{p[2]}{p[0] + p[1]}]"
    ),
)
ANSWERS = st.lists(st.one_of(_MARKER, _MARKER, st.sampled_from(_PIECES)), max_size=30).map("".join)
NUMBERS = st.sets(st.integers(min_value=1, max_value=10), max_size=10)
_ESCAPED_GROUP = re.compile(r"\\\[[0-9 ,\-–]+\\\]")


def sources_numbered(numbers: set[int]) -> list[Source]:
    return [
        Source(number=n, entity_type="node", entity_id=f"e{n}", title=f"Source {n}")
        for n in sorted(numbers)
    ]


def outside(text: str, markers: list[Marker] | tuple[Marker, ...]) -> list[str]:
    pieces, copied = [], 0
    for marker in markers:
        pieces.append(text[copied : marker.start])
        copied = marker.end
    pieces.append(text[copied:])
    return pieces


def first_appearances(markers: list[Marker]) -> list[int]:
    seen: list[int] = []
    for marker in markers:
        seen += [n for n in marker.numbers if n not in seen]
    return seen


def finalize(text: str, numbers: set[int]) -> FinalizedAnswer:
    return finalize_citations(text, sources_numbered(numbers))


@settings(max_examples=200, deadline=None)
@given(text=ANSWERS, numbers=NUMBERS)
def test_numbers_are_one_to_k_in_first_citation_order(text: str, numbers: set[int]) -> None:
    result = finalize(text, numbers)
    k = len(result.sources)
    assert [s.number for s in result.sources] == list(range(1, k + 1))
    reread = parse_markers(result.text)
    assert reread == list(result.markers)
    # Every kept source is cited, first appearances increase, and nothing names k+1 or more.
    assert first_appearances(reread) == list(range(1, k + 1))


@settings(max_examples=200, deadline=None)
@given(text=ANSWERS, numbers=NUMBERS)
def test_every_cited_valid_source_is_kept_and_nothing_else(text: str, numbers: set[int]) -> None:
    result = finalize(text, numbers)
    cited = {n for marker in parse_markers(text) for n in marker.numbers}
    assert set(result.renumbering) == cited & numbers
    assert {s.entity_id for s in result.sources} == {f"e{n}" for n in cited & numbers}
    assert {s.number for s in result.dropped} == numbers - cited
    assert {d.number for d in result.dangling} == cited - numbers


@settings(max_examples=200, deadline=None)
@given(text=ANSWERS, numbers=NUMBERS)
def test_each_kept_group_names_its_sources_under_their_new_numbers(
    text: str, numbers: set[int]
) -> None:
    result = finalize(text, numbers)
    kept = [m for m in parse_markers(text) if set(m.numbers) & numbers]
    assert len(kept) == len(result.markers)
    for before, after in zip(kept, result.markers, strict=True):
        expected = sorted({result.renumbering[n] for n in before.numbers if n in numbers})
        assert list(after.numbers) == expected


@settings(max_examples=200, deadline=None)
@given(text=ANSWERS, numbers=NUMBERS)
def test_text_outside_markers_is_unchanged(text: str, numbers: set[int]) -> None:
    result = finalize(text, numbers)
    before = outside(text, parse_markers(text))
    after = outside(result.text, result.markers)
    if not result.dangling:
        assert after == before  # byte-identical, piece by piece
    else:
        # Only whitespace next to removed markers changes, and escaped markers are added.
        def squeeze(pieces: list[str]) -> str:
            return re.sub(r"\s", "", _ESCAPED_GROUP.sub("", "".join(pieces)))

        assert squeeze(after) == squeeze(before)


@settings(max_examples=200, deadline=None)
@given(text=ANSWERS, numbers=NUMBERS)
def test_anchor_slices_always_match(text: str, numbers: set[int]) -> None:
    result = finalize(text, numbers)
    uris = {s.uri for s in result.sources}
    for anchor in build_anchors(result):
        assert anchor.cited_text == result.text[anchor.start_index : anchor.end_index]
        assert anchor.cited_text
        assert anchor.cited_text == anchor.cited_text.strip()
        assert anchor.source_uri in uris
        for marker in result.markers:
            assert anchor.end_index <= marker.start or anchor.start_index >= marker.end


@settings(max_examples=200, deadline=None)
@given(text=ANSWERS, numbers=NUMBERS, keep=st.integers(min_value=0, max_value=10))
def test_at_conversation_scope_kept_numbers_stay_and_new_ones_count_on(
    text: str, numbers: set[int], keep: int
) -> None:
    result = finalize_citations(text, sources_numbered(numbers), keep=keep)
    reread = parse_markers(result.text)
    assert reread == list(result.markers)
    fresh = []
    for old, new in result.renumbering.items():  # in first-citation order
        if old <= keep:
            assert new == old
        else:
            fresh.append(new)
    assert fresh == list(range(keep + 1, keep + 1 + len(fresh)))
    assert [s.number for s in result.sources] == list(result.renumbering.values())
    # The same sources survive as at turn scope: only their numbers differ.
    assert {s.entity_id for s in result.sources} == {
        s.entity_id for s in finalize(text, numbers).sources
    }
