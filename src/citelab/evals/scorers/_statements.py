"""Statements of an answer: the units citation recall and precision are measured on.

Two splitters:

``split_statements`` (citelab's own)
    Markdown-aware: every line (list item, heading, paragraph line) is split into sentences;
    markers follow citelab's grammar (:func:`citelab.sources.parse_markers`: ``[1]``,
    ``[1][3]``, ``[1, 3]``…); a marker group that opens a sentence ("Foo. [1] Bar.") belongs
    to the sentence before it on the same line; a statement's citations are deduplicated in
    order; pieces without a word are not statements.

``split_statements_alce``
    ALCE's parsing (Gao et al. 2023, ``eval.py``), so figures compare with published ones:
    the output is stripped, only its first line is read and ``<|im_end|>`` is removed; its
    sentences are NLTK's ``sent_tokenize`` (punkt, English, offline: see
    :mod:`citelab.evals.scorers._punkt`); a
    citation is every ``[<digits>`` in the sentence (so ``[1, 3]`` cites only 1 and
    ``[1][1]`` cites 1 twice); the claim is the sentence with ALCE's citation-removal rule
    applied. QAMPARI answers are lists: split on commas, each item after the question.

``split_statements_by_span``
    The granularity a vendor cites at (Anthropic cites text blocks, each a claim of its own):
    each cited span is a statement with the sources cited for it, and each sentence that no
    span touches is an uncited statement. The rest of a sentence that a span covers in part
    is not a statement (the vendor said which part its citation supports).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from citelab.contract import (
    SENTENCE_END_MARKERS,
    Marker,
    alce_cited_numbers,
    alce_remove_citations,
    parse_markers,
)

__all__ = [
    "Statement",
    "alce_output",
    "alce_remove_citations",
    "sentence_spans",
    "split_statements",
    "split_statements_alce",
    "split_statements_by_span",
]


@dataclass(frozen=True)
class Statement:
    """One statement of an answer and the source numbers it cites."""

    index: int
    """Position among the answer's statements, from 0."""
    text: str
    """The statement as written (markers included)."""
    claim: str
    """What is checked against the sources: the text with markers and Markdown removed."""
    citations: tuple[int, ...]
    """Cited source numbers in order of appearance."""
    start: int
    """Offset of the statement in the answer text (code points)."""
    end: int
    """One past its last code point."""


# Abbreviations after which a full stop does not end a sentence (en/de/fr).
_ABBREVIATION_TEXT = (
    "e.g i.e etc vs cf dr mr mrs ms prof no nr st approx incl z.b d.h bzw ca usw vgl mme"
)
_ABBREVIATIONS = frozenset(_ABBREVIATION_TEXT.split())
_BOUNDARY = re.compile(r"(?<=[.!?…])[\"'”’)]*\s+")
# citelab's splitter also ends a sentence after markers glued to its full stop ("Foo.[1] Bar").
_BOUNDARY_MARKERS = re.compile(rf"(?<=[.!?…])[\"'”’)]*{SENTENCE_END_MARKERS}\s+")
_LIST_PREFIX = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)*")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w")


def sentence_spans(
    text: str, start: int = 0, end: int | None = None, *, glued_markers: bool = False
) -> list[tuple[int, int]]:
    """Sentence spans of ``text[start:end]`` (one line), whitespace trimmed, none empty.

    With ``glued_markers``, markers right after a full stop stay with that sentence.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    boundary = _BOUNDARY_MARKERS if glued_markers else _BOUNDARY
    for match in boundary.finditer(text, start, end):
        stop = match.start() + len(match.group().rstrip())
        if _ends_in_abbreviation(text, cursor, match.start()) or _lower_follows(text, match.end()):
            continue
        spans.append((cursor, stop))
        cursor = match.end()
    spans.append((cursor, end))
    return [span for span in (_trim(text, s, e) for s, e in spans) if span[0] < span[1]]


def split_statements(text: str) -> list[Statement]:
    """citelab's statements: line- and sentence-split, markers per citelab's grammar."""
    return list(_split_statements(text))


@lru_cache(maxsize=4096)  # several scorers split the same answer
def _split_statements(text: str) -> tuple[Statement, ...]:
    markers = parse_markers(text)
    spans = [
        span
        for line in _line_spans(text)
        for span in sentence_spans(text, *line, glued_markers=True)
    ]
    spans = _attach_leading_markers(text, spans, markers)
    statements: list[Statement] = []
    starts = [marker.start for marker in markers]
    for start, end in spans:
        inside = _markers_within(markers, bisect.bisect_left(starts, start), end)
        numbers = [n for marker in inside for n in marker.numbers]
        spans_in = [(m.start - start, m.end - start) for m in inside]
        claim = _clean_claim(text[start:end], spans_in)
        if not _WORD.search(claim):
            continue
        cited = tuple(dict.fromkeys(numbers))
        statements.append(Statement(len(statements), text[start:end], claim, cited, start, end))
    return tuple(statements)


def split_statements_by_span(
    text: str, spans: Sequence[tuple[int, int, tuple[int, ...]]]
) -> list[Statement]:
    """Statements at the granularity of cited spans (see the module docs).

    ``spans`` are ``(start, end, numbers)`` in ``text`` (code points, end exclusive): one per
    citation anchor. Anchors on the same span make one statement citing their numbers in
    order; a span without a word (zero-width) is none.
    """
    cited: dict[tuple[int, int], list[int]] = {}
    for start, end, numbers in spans:
        if start < end:
            found = cited.setdefault((start, end), [])
            found.extend(n for n in numbers if n not in found)
    pieces = [
        (start, end, text[start:end], _clean_claim(text[start:end], []), tuple(numbers))
        for (start, end), numbers in cited.items()
    ]
    for sentence in split_statements(text):
        if not any(start < sentence.end and sentence.start < end for start, end in cited):
            pieces.append((sentence.start, sentence.end, sentence.text, sentence.claim, ()))
    pieces.sort(key=lambda piece: (piece[0], piece[1]))
    kept = [piece for piece in pieces if _WORD.search(piece[3])]
    return [
        Statement(index, written, claim, numbers, start, end)
        for index, (start, end, written, claim, numbers) in enumerate(kept)
    ]


_ALCE_END_TOKEN = "<|im_end|>"


def alce_output(text: str) -> str:
    """The output as ALCE scores it: stripped, its first line only, ``<|im_end|>`` removed."""
    return text.strip().split("\n")[0].replace(_ALCE_END_TOKEN, "")


def split_statements_alce(
    text: str, *, question: str = "", qampari: bool = False
) -> list[Statement]:
    """ALCE's statements (see the module docs); ``qampari`` reads the answer as a list.

    Sentences are NLTK's punkt split (English, offline). In
    ``qampari`` mode the output is split on commas and each item is prefixed with
    ``question`` and a space, as ALCE does; an empty output is then one item, not none.
    """
    return list(_split_statements_alce(text, question, qampari))


@lru_cache(maxsize=4096)
def _split_statements_alce(text: str, question: str, qampari: bool) -> tuple[Statement, ...]:
    output = alce_output(text)
    where = _raw_positions(text)
    pieces = _qampari_items(output, question) if qampari else _punkt_pieces(output)
    statements: list[Statement] = []
    for sentence, start, end in pieces:
        numbers = alce_cited_numbers(sentence)
        claim = alce_remove_citations(sentence).strip()
        raw_start = where[start] if start < len(where) else len(text)
        raw_end = where[end - 1] + 1 if end > start else raw_start
        statements.append(Statement(len(statements), sentence, claim, numbers, raw_start, raw_end))
    return tuple(statements)


def _raw_positions(text: str) -> Sequence[int]:
    """For each character of :func:`alce_output`, its offset in ``text``."""
    first = text.strip().split("\n")[0]
    base = text.find(first) if first else 0
    if _ALCE_END_TOKEN not in first:
        return range(base, base + len(first))
    positions: list[int] = []
    cursor = 0
    while cursor < len(first):
        if first.startswith(_ALCE_END_TOKEN, cursor):
            cursor += len(_ALCE_END_TOKEN)
            continue
        positions.append(base + cursor)
        cursor += 1
    return positions


def _punkt_pieces(output: str) -> list[tuple[str, int, int]]:
    from citelab.evals.scorers._punkt import punkt_spans

    return [(output[start:end], start, end) for start, end in punkt_spans(output)]


def _qampari_items(output: str, question: str) -> list[tuple[str, int, int]]:
    # ALCE: output.rstrip().rstrip(".").rstrip(",").split(","), each item stripped and put
    # after the question. Offsets point at the item in the output.
    body = output.rstrip().rstrip(".").rstrip(",")
    items: list[tuple[str, int, int]] = []
    cursor = 0
    for raw in body.split(","):
        item = raw.strip()
        start = cursor + (raw.find(item) if item else 0)
        items.append((question + " " + item, start, start + len(item)))
        cursor += len(raw) + 1
    return items


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    cursor = 0
    for line in text.split("\n"):
        spans.append((cursor, cursor + len(line)))
        cursor += len(line) + 1
    return spans


def _attach_leading_markers(
    text: str, spans: list[tuple[int, int]], markers: list[Marker]
) -> list[tuple[int, int]]:
    """Move a marker group that opens a sentence to the sentence before it on the same line."""
    out: list[tuple[int, int]] = []
    for start, end in spans:
        lead_end = _leading_markers_end(text, start, end, markers)
        same_line = out and "\n" not in text[out[-1][1] : start]
        begin = start
        if lead_end > start and same_line:
            out[-1] = (out[-1][0], lead_end)
            begin = _skip_space(text, lead_end, end)
        if begin < end:
            out.append((begin, end))
    return out


def _markers_within(markers: list[Marker], first: int, end: int) -> list[Marker]:
    """The markers from index ``first`` on that end by ``end`` (markers are in text order)."""
    inside = []
    for marker in markers[first:]:
        if marker.end > end:
            break
        inside.append(marker)
    return inside


def _leading_markers_end(text: str, start: int, end: int, markers: list[Marker]) -> int:
    """Where the marker groups that open ``text[start:end]`` end (``start`` if none do)."""
    stop = start
    first = bisect.bisect_left(markers, start, key=lambda marker: marker.start)
    for marker in markers[first:]:
        if marker.end > end or text[stop : marker.start].strip():
            break
        stop = marker.end
    return stop


def _skip_space(text: str, start: int, end: int) -> int:
    while start < end and text[start].isspace():
        start += 1
    return start


def _clean_claim(sentence: str, marker_spans: list[tuple[int, int]]) -> str:
    parts = []
    cursor = 0
    for start, end in marker_spans:
        parts.append(sentence[cursor:start])
        cursor = end
    parts.append(sentence[cursor:])
    plain = _EMPHASIS.sub("", _LIST_PREFIX.sub("", "".join(parts)))
    plain = _SPACE.sub(" ", plain).strip()
    # A marker removed before the full stop leaves "word ." behind.
    return re.sub(r"\s+([.,;:!?…])", r"\1", plain)


def _ends_in_abbreviation(text: str, start: int, stop: int) -> bool:
    before = text[start:stop].rstrip("\"'”’)]")
    if not before.endswith("."):
        return False
    word = before[:-1].rsplit(None, 1)[-1] if before[:-1].split() else ""
    word = word.lstrip("(\"'“‘").casefold()
    if word in _ABBREVIATIONS:
        return True
    # A single letter is an initial ("J. Smith"), not a sentence.
    return len(word) == 1 and word.isalpha()


def _lower_follows(text: str, position: int) -> bool:
    """A lower-case letter after the gap: "click 'Forgot password?' on the page" goes on."""
    return position < len(text) and text[position].islower()


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
