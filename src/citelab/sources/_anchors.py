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
"""

from __future__ import annotations

import re

from pydantic import TypeAdapter

from citelab.contract import Anchor
from citelab.sources._finalize import FinalizedAnswer

__all__ = ["build_anchors"]

_ANCHORS = TypeAdapter(list[Anchor])

_TERMINATORS = ".!?;:…"
_CLAIM_START = re.compile(r"(?s:.*[.!?;:…]\s)")
_BLOCK_PREFIX = re.compile(r"[ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+|#{1,6}[ \t]+|>[ \t]?)*")


def build_anchors(finalized: FinalizedAnswer) -> list[Anchor]:
    """One anchor per cited source per marker chain, in text order; offsets in code points."""
    text = finalized.text
    uri_of = {source.number: source.uri for source in finalized.sources}
    payloads: list[dict[str, object]] = []
    span: tuple[int, int] | None = None
    anchored: set[int] = set()
    previous_end = 0
    for index, marker in enumerate(finalized.markers):
        if index == 0 or text[previous_end : marker.start].strip(" \t"):
            span = _claim(text, previous_end, marker.start)
            anchored = set()
        previous_end = marker.end
        if span is None:
            continue
        for number in marker.numbers:
            if number not in anchored:
                anchored.add(number)
                payloads.append(
                    {
                        "source_uri": uri_of[number],
                        "cited_text": text[span[0] : span[1]],
                        "start_index": span[0],
                        "end_index": span[1],
                    }
                )
    # One validation call for the whole list: thousands of anchors are common in evaluations.
    return _ANCHORS.validate_python(payloads)


def _claim(text: str, low: int, marker_start: int) -> tuple[int, int] | None:
    """The span ``[start, end)`` of the claim a marker at ``marker_start`` closes."""
    line_start = text.rfind("\n", low, marker_start) + 1
    at_line_start = line_start > low or low == 0 or text[low - 1] == "\n"
    low = max(low, line_start)
    window = text[low:marker_start]
    end = len(window.rstrip())
    start = _sentence_start(window[:end].rstrip(_TERMINATORS))
    if start == 0 and at_line_start:
        prefix = _BLOCK_PREFIX.match(window)
        start = prefix.end() if prefix else 0
    start = end - len(window[start:end].lstrip())
    if start >= end:
        return None
    return low + start, low + end


def _sentence_start(body: str) -> int:
    """Just past the last sentence or clause end in ``body`` (0 when there is none)."""
    match = _CLAIM_START.match(body)
    return match.end() if match else 0
