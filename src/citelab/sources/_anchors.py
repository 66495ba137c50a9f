"""Inline citation anchors: the claim each marker closes, as ``_meta`` anchors.

The claim of a marker is the text before it, back to the nearest of:

- the end of the previous sentence or clause: ``.``, ``!``, ``?``, ``;``, ``:`` or ``…``
  followed by whitespace (punctuation right before the marker belongs to the claim, so
  ``"One. Two.[2]"`` anchors ``"Two."``);
- the end of the previous marker chain;
- the start of the line, skipping a list bullet, an ordered-list number, a heading's ``#``
  or a quote's ``>``.

Whitespace is trimmed from both ends; markers are never inside a span. Markers separated
only by spaces or tabs (``[1] [2]``, ``[1][2]``) form one chain and share the span of the
first. A marker citing several sources yields one anchor per source, all with the same span.
A marker with nothing before it on its line (an empty claim) yields no anchor.

Each claim is one regex match on the text between two markers (the rules above, as a
pattern).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import repeat
from operator import itemgetter
from typing import cast

from citelab.contract import Anchor, Marker, SourceQuote
from citelab.sources._finalize import FinalizedAnswer
from citelab.sources._source import Source
from citelab.sources._support import supporting_span

__all__ = ["build_anchors", "source_quotes"]

_BLOCK_PREFIX = r"[ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+|#{1,6}[ \t]+|>[ \t]?)*"
# The last sentence or clause end with text after it: a terminator, then whitespace.
_SENTENCE_END = r".*[.!?;:…]\s(?=\s*\S)"
# The claim a marker closes, matched on the text between the previous marker and this one:
# after the last line break (then a sentence end, else the block prefix is skipped), or,
# with no line break, after a sentence end or from the start; trimmed of whitespace.
_CLAIM = re.compile(
    rf"(?:(?s:.*\n)(?:{_SENTENCE_END}|(?>{_BLOCK_PREFIX}))|{_SENTENCE_END}|)"
    r"\s*(\S(?:.*\S)?)?\s*\Z"
)
# The same for the first marker, whose window starts a line.
_FIRST_CLAIM = re.compile(
    rf"(?s:.*\n)?(?:{_SENTENCE_END}|(?>{_BLOCK_PREFIX}))\s*(\S(?:.*\S)?)?\s*\Z"
)
_SPACES = re.compile(r"[ \t]*")
# Two markers with only spaces or tabs between them share a claim; this finds where they may.
_MAYBE_CHAINED = re.compile(r"\][ \t]*\[")
_START = itemgetter(0)
_END = itemgetter(1)
_NUMBERS = itemgetter(2)


def build_anchors(finalized: FinalizedAnswer) -> list[Anchor]:
    """One anchor per cited source per marker chain, in text order; offsets in code points."""
    markers = finalized.markers
    if not markers:
        return []
    text = finalized.text
    starts = list(map(_START, markers))
    lows = [0, *map(_END, markers[:-1])]
    spans = _claims(text, lows, starts)
    if _any_chained(text, starts, lows):
        chained = [None, *map(_SPACES.fullmatch, repeat(text), lows[1:], starts[1:])]
        return _anchors_by_chain(text, markers, spans, chained, finalized)
    # The common case: no marker follows another across spaces only, so each has its claim.
    uri_of = _uris(finalized)
    return [
        _anchor(uri_of[number], text, start, end)
        for numbers, (start, end) in zip(map(_NUMBERS, markers), spans, strict=True)
        if start >= 0
        for number in numbers
    ]


def source_quotes(anchors: list[Anchor], sources: Iterable[Source]) -> list[SourceQuote]:
    """The source-side passage of each anchor whose source knows its supporting passage
    (``Source.passage``): the sentence(s) of that passage the anchor's claim rests on
    (:func:`~citelab.sources.supporting_span`), not the whole chunk, with their offsets in
    the source's text when the passage's are known."""
    by_uri = {source.uri: source for source in sources if source.passage}
    quotes = []
    for index, anchor in enumerate(anchors):
        source = by_uri.get(anchor.source_uri)
        if source is None or source.passage is None:
            continue
        start, end = supporting_span(anchor.cited_text, source.passage)
        located = source.passage_start is not None and source.passage_end is not None
        offset = source.passage_start or 0
        quotes.append(
            SourceQuote(
                anchor_index=index,
                source_uri=source.uri,
                text=source.passage[start:end],
                start_index=offset + start if located else None,
                end_index=offset + end if located else None,
            )
        )
    return quotes


def _anchor(uri: str, text: str, start: int, end: int) -> Anchor:
    return Anchor(source_uri=uri, cited_text=text[start:end], start_index=start, end_index=end)


def _uris(finalized: FinalizedAnswer) -> dict[int, str]:
    """Each final source's uri, by its number."""
    return {source.number: source.uri for source in finalized.sources if source.number}


def _any_chained(text: str, starts: list[int], lows: list[int]) -> bool:
    """True when a marker follows the previous one across spaces or tabs only."""
    for gap in _MAYBE_CHAINED.finditer(text):
        # A "]", spaces, a "[": the end of one marker and the start of the next?
        index = bisect_left(starts, gap.end() - 1)
        following = 0 < index < len(starts) and starts[index] == gap.end() - 1
        if following and lows[index] == gap.start() + 1:
            return True
    return False


def _claims(text: str, lows: list[int], starts: list[int]) -> list[tuple[int, int]]:
    """Per marker, the span of its claim; ``(-1, -1)`` when it is empty."""
    # Both patterns match every window (each of their parts is optional), so no None.
    first = cast(re.Match[str], _FIRST_CLAIM.match(text, 0, starts[0]))
    others = cast(Iterator[re.Match[str]], map(_CLAIM.match, repeat(text), lows[1:], starts[1:]))
    return [first.span(1), *map(re.Match.span, others, repeat(1))]


def _anchors_by_chain(
    text: str,
    markers: tuple[Marker, ...],
    spans: list[tuple[int, int]],
    chained: list[re.Match[str] | None],
    finalized: FinalizedAnswer,
) -> list[Anchor]:
    """Markers separated only by spaces or tabs share the first one's claim, and anchor each
    source once."""
    uri_of = _uris(finalized)
    made: list[Anchor] = []
    span = (-1, -1)
    anchored: set[int] = set()
    for marker, own, follows in zip(markers, spans, chained, strict=True):
        if follows is None:
            span, anchored = own, set()
        start, end = span
        if start < 0:
            continue
        for number in marker.numbers:
            if number not in anchored:
                anchored.add(number)
                made.append(_anchor(uri_of[number], text, start, end))
    return made
