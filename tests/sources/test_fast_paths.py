"""The fast paths of finalize and anchors agree with the full rules they stand in for.

Each test switches a shortcut off (every chain read candidate by candidate, every removal
re-read, every claim taken by the chain rules) and checks
that the result is the same on generated Markdown full of the hard cases.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sources_builders import numbered

from citelab.contract import _markers as markers_module
from citelab.sources import (
    FinalizedAnswer,
    Source,
    build_anchors,
    finalize_citations,
    parse_markers,
)
from citelab.sources import _anchors as anchors_module
from citelab.sources import _finalize as finalize_module

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
    ";",
    "…",
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
    "* ",
    "1. ",
    "# ",
    "> ",
    "---",
    "`",
    "``",
    "```\n",
    "~~~\n",
    "[ref]",
    "[^1]",
    "(https://x.example)",
    "\n- Listed claim ",
    "\nText line ",
    "\n\nParagraph ",
]
_NUMBER = st.integers(min_value=0, max_value=12)
_MARKER = st.one_of(
    _NUMBER.map(lambda n: f"[{n}]"),
    st.tuples(_NUMBER, _NUMBER).map(lambda p: f"[{p[0]}, {p[1]}]"),
    st.tuples(_NUMBER, _NUMBER).map(lambda p: f"[{p[0]},{p[1]}]"),
    st.tuples(_NUMBER, st.integers(0, 3), st.sampled_from("-–")).map(
        lambda p: f"[{p[0]}{p[2]}{p[0] + p[1]}]"
    ),
    st.tuples(_NUMBER, _NUMBER).map(lambda p: f"[{p[0]}][{p[1]}]"),
    st.tuples(_NUMBER, _NUMBER).map(lambda p: f"[{p[0]}] [{p[1]}]"),
)
ANSWERS = st.lists(st.one_of(_MARKER, _MARKER, st.sampled_from(_PIECES)), max_size=30).map("".join)
NUMBERS = st.sets(st.integers(min_value=1, max_value=10), max_size=10)


def sources_numbered(numbers: set[int]) -> list[Source]:
    return [
        Source(number=n, entity_type="node", entity_id=f"e{n}", title=f"Source {n}")
        for n in sorted(numbers)
    ]


def as_values(result: FinalizedAnswer) -> tuple[object, ...]:
    """Everything a finalized answer holds, the renumbering's order included."""
    return (
        result.text,
        result.sources,
        result.dropped,
        result.dangling,
        list(result.renumbering.items()),
        result.markers,
        result.dangling_escaped,
    )


def every_chain_special(text: str, offsets: list[int]) -> set[int]:
    """A stand-in for the hazard search that sends every chain through the full rules."""
    return set(range(len(offsets) // 2 - 1))  # offsets: one per part, and the end


@settings(max_examples=300, deadline=None)
@given(text=ANSWERS)
def test_plain_chains_read_as_the_full_rules_read_them(text: str) -> None:
    fast = parse_markers(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markers_module, "_hazards", every_chain_special)
        assert parse_markers(text) == fast


@settings(max_examples=300, deadline=None)
@given(text=ANSWERS, numbers=NUMBERS)
def test_the_table_rewrite_writes_what_marker_by_marker_writes(
    text: str, numbers: set[int]
) -> None:
    sources = sources_numbered(numbers)
    fast = finalize_citations(text, sources)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markers_module, "_hazards", every_chain_special)
        assert as_values(finalize_citations(text, sources)) == as_values(fast)


@settings(max_examples=300, deadline=None)
@given(text=ANSWERS, numbers=NUMBERS)
def test_skipping_the_reread_after_local_removals_changes_nothing(
    text: str, numbers: set[int]
) -> None:
    sources = sources_numbered(numbers)
    fast = finalize_citations(text, sources)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(finalize_module, "keeps_reading", lambda *_: False)
        assert as_values(finalize_citations(text, sources)) == as_values(fast)


@pytest.mark.parametrize(
    ("text", "reread"),
    [
        ("A claim [9]. More [1].", False),  # mid-line, a letter left of the join
        ("A claim [9] and more [1].", False),
        ("Both [1] [9]. More.", True),  # a marker left of the join: its context changed
        ("[1] [9]: the fee.", True),
        ("a\\ [9]][1] b", True),  # a backslash left of the join would escape the "]"
        ("Line [1].\n[9]\nNext.", True),  # a whole line removed
        ("- [9] Item [1]", True),  # the prefix case
    ],
)
def test_which_removals_are_re_read(text: str, reread: bool) -> None:
    plan = finalize_module._Plan.make(markers_module.scan_markers(text), {1: numbered(1)[0]})
    rewrite = finalize_module._Rewrite(text, plan)
    rewrite.run(remove=True)
    assert rewrite.removed
    assert rewrite.must_reread() is reread


def test_a_join_that_escapes_a_bracket_is_caught_by_the_reread() -> None:
    # Removing "[9]" and its space would leave "\\]": the "]" escaped, "[1]" a citation.
    result = finalize_citations("a\\ [9]][1] b", numbered(1))
    assert result.text == "a\\ \\[9\\]][1] b"
    assert result.dangling_escaped


# The claim rules of _anchors, written out plainly: the oracle for its one-regex version.
_TERMINATORS = ".!?;:…"
_SENTENCE = re.compile(r"(?s:.*[.!?;:…]\s)")
_PREFIX = re.compile(r"[ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+|#{1,6}[ \t]+|>[ \t]?)*")


def claim_by_the_rules(text: str, low: int, marker_start: int) -> tuple[int, int]:
    line_start = text.rfind("\n", low, marker_start) + 1
    at_line_start = line_start > low or low == 0 or text[low - 1] == "\n"
    low = max(low, line_start)
    window = text[low:marker_start]
    end = len(window.rstrip())
    sentence = _SENTENCE.match(window[:end].rstrip(_TERMINATORS))
    start = sentence.end() if sentence else 0
    if start == 0 and at_line_start:
        prefix = _PREFIX.match(window)
        start = prefix.end() if prefix else 0
    start = end - len(window[start:end].lstrip())
    return (low + start, low + end) if start < end else (-1, -1)


_WINDOW_PIECES = [*_PIECES, "[1]", ". ", "! ", "?\t", ":", "…", "1.5", "12) ", "## ", ">", "\u00a0"]


@settings(max_examples=400, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_WINDOW_PIECES), max_size=12),
    first=st.booleans(),
)
def test_claim_spans_follow_the_rules(pieces: list[str], first: bool) -> None:
    text = "[1]" + "".join(pieces) + "[2]"
    low, start = (0, len(text) - 3) if first else (3, len(text) - 3)
    starts, lows = ([start], [0]) if first else ([0, start], [0, low])
    spans = anchors_module._claims(text, lows, starts)
    assert spans[-1] == claim_by_the_rules(text, low, start)


@settings(max_examples=200, deadline=None)
@given(text=ANSWERS, numbers=NUMBERS)
def test_anchors_without_chains_are_those_the_chain_rules_make(
    text: str, numbers: set[int]
) -> None:
    finalized = finalize_citations(text, sources_numbered(numbers))
    fast = build_anchors(finalized)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(anchors_module, "_any_chained", lambda *_: True)
        assert build_anchors(finalized) == fast


def long_answer(seed: int, dangling: float) -> str:
    """An answer like the benchmark's: paragraphs, lists, code spans, one fence."""
    rng = random.Random(seed)
    words = ["fees", "rise", "each", "autumn", "and", "housing", "is", "separate"]
    blocks = []
    for block in range(60):
        lines = []
        for line in range(6):
            number = rng.randint(13, 20) if rng.random() < dangling else rng.randint(1, 12)
            code = " with `x[2]`" if (block + line) % 7 == 0 else ""
            sentence = " ".join(rng.choice(words) for _ in range(5))
            lines.append(f"{sentence.capitalize()}{code} [{number}].")
        joined = "\n".join(f"- {line}" for line in lines) if block % 3 else " ".join(lines)
        blocks.append(joined)
    blocks.insert(30, "```\nrows[1][2]  # [3]\n```")
    return "\n\n".join(blocks)


@pytest.mark.parametrize("dangling", [0.0, 0.05])
def test_a_long_answer_finalizes_as_the_full_rules_do(dangling: float) -> None:
    text = long_answer(seed=7, dangling=dangling)
    sources = numbered(*range(1, 13))
    fast = finalize_citations(text, sources)
    assert len(fast.markers) > 300
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markers_module, "_hazards", every_chain_special)
        patch.setattr(finalize_module, "keeps_reading", lambda *_: False)
        full = finalize_citations(text, sources)
        patch.setattr(anchors_module, "_any_chained", lambda *_: True)
        full_anchors = build_anchors(full)
    assert as_values(fast) == as_values(full)
    assert build_anchors(fast) == full_anchors


# Dense, adversarial answers: dangling markers next to brackets, colons, line starts, code.
_TIGHT_PIECES = ["a", "b ", " ", "\t", "\n", "\n\n", "    ", "- ", "1. ", "# ", "> ", "`", "``"]
_TIGHT_PIECES += ["```", "\\", "\\ ", "[", "]", "] ", "(", ")", ":", ",", "-", "5", ".", "*"]
_TIGHT_PIECES += ["é", "[x]", "]:"]
_TIGHT_MARKERS = ["[1]", "[2]", "[9]", "[8]", "[0]", "[1, 9]", "[9, 8]", "[9-9]", "[1][9]"]
_TIGHT_MARKERS += ["[9][1]", "[9] [1]"]


def tight_answers(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(
            rng.choice(_TIGHT_MARKERS) if rng.random() < 0.4 else rng.choice(_TIGHT_PIECES)
            for _ in range(rng.randint(1, 16))
        )
        for _ in range(count)
    ]


def test_tight_answers_read_and_finalize_as_the_full_rules_do() -> None:
    sources = numbered(1, 2)
    texts = tight_answers(seed=3, count=2000)
    fast = [(parse_markers(text), as_values(finalize_citations(text, sources))) for text in texts]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markers_module, "_hazards", every_chain_special)
        patch.setattr(finalize_module, "keeps_reading", lambda *_: False)
        full = [
            (parse_markers(text), as_values(finalize_citations(text, sources))) for text in texts
        ]
    for text, got, expected in zip(texts, fast, full, strict=True):
        assert got == expected, text
