"""The citation marker grammar: which ``[n]`` in an answer are citations.

A marker is a bracketed group of numbers and ranges::

    marker := "[" item ( " "* "," " "* item )* "]"
    item   := number | number "-" number | number "–" number     (hyphen or en dash)
    number := "0" | [1-9][0-9]{0,3}                               (no leading zeros)

so ``[3]``, ``[1, 3]``, ``[1,3]``, ``[2-4]``, ``[2–4]`` and ``[1, 3-5]`` are markers, and
``[1][3]`` is a chain of two adjacent markers. ``numbers`` expands ranges in written order.
``0`` parses (and is dangling: sources are numbered from 1).

Not citations (left as text):

- anything in code: inline code spans, fenced and indented code blocks (see ``_code``);
- an escaped bracket ``\\[1]`` (odd number of backslashes before it);
- a chain followed directly by ``(`` or ``[``: links ``[1](url)``, images ``![1](src)``,
  reference links ``[1][ref]``, ``[1][]``;
- a chain preceded directly by an unescaped ``]``: the label of a reference link
  ``[text][1]``;
- a chain at column 0 followed by ``:``: a reference definition ``[1]: url`` (only column 0:
  an indented ``  [1]: x`` reads as a citation);
- footnotes ``[^1]`` and anything else outside the grammar (``[01]``, ``[ 1 ]``, ``[1;2]``);
- a reversed range ``[4-2]``, or a group naming more than 50 numbers (``[1-100]``);
- a chain inside brackets with only marker characters between (``[[1]]``, ``[1, [2]]``):
  removing it could otherwise join the text around it into a new marker.

``great![1]`` is a citation (an image needs ``(`` or ``[`` after the label). A year in
brackets, ``[2023]``, fits the grammar and is treated as a (dangling) citation.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from citelab.sources._code import code_ranges, is_escaped

__all__ = ["MAX_GROUP_NUMBERS", "Marker", "parse_markers"]

MAX_GROUP_NUMBERS = 50
"""A group naming more numbers than this is not a citation."""

_NUMBER = r"(?:0|[1-9][0-9]{0,3})"
_ITEM = rf"{_NUMBER}(?:[-–]{_NUMBER})?"
_MARKER = re.compile(rf"\[({_ITEM}(?: *, *{_ITEM})*)\]")
_MARKER_CHARS = frozenset("0123456789 ,-–")
# Bound on the left/right scans of the bracket check: longer runs cannot form a valid group.
_CONTEXT_LIMIT = MAX_GROUP_NUMBERS * 10


class Marker(NamedTuple):
    """One citation marker: its span in code points, the numbers it names, its text."""

    start: int
    end: int
    numbers: tuple[int, ...]
    raw: str


def parse_markers(text: str) -> list[Marker]:
    """Every citation marker in ``text``, in order (see the module docstring for the rules)."""
    code = code_ranges(text)
    code_index, code_count = 0, len(code)
    markers: list[Marker] = []
    chain_first, chain_end = 0, -1
    for match in _MARKER.finditer(text):
        start, end = match.span()
        if code_count:
            while code_index < code_count and code[code_index][1] <= start:
                code_index += 1
            if code_index < code_count and code[code_index][0] < end:
                continue
        if start and text[start - 1] == "\\" and is_escaped(text, start):
            continue
        items = match[1]
        numbers = (int(items),) if items.isdigit() else _numbers(items)
        if numbers is None:
            continue
        if start != chain_end:
            _close_chain(text, markers, chain_first, chain_end)
            chain_first = len(markers)
        markers.append(Marker(start, end, numbers, match[0]))
        chain_end = end
    _close_chain(text, markers, chain_first, chain_end)
    return markers


def _close_chain(text: str, markers: list[Marker], first: int, end: int) -> None:
    """Drop the chain ``markers[first:]`` (adjacent candidates) unless it is a citation."""
    if first < len(markers) and not _is_citation_chain(text, markers[first].start, end):
        del markers[first:]


def _numbers(items: str) -> tuple[int, ...] | None:
    """The numbers of a group with commas or ranges, or None when it is not a citation."""
    numbers: list[int] = []
    for item in items.replace("–", "-").split(","):
        first, _, last = item.strip(" ").partition("-")
        low = int(first)
        high = int(last) if last else low
        if high < low:
            return None
        numbers.extend(range(low, high + 1))
        if len(numbers) > MAX_GROUP_NUMBERS:
            return None
    return tuple(numbers)


def _is_citation_chain(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else "\n"
    after = text[end] if end < len(text) else "\n"
    if (before == "]" and not is_escaped(text, start - 1)) or after in "([":
        return False
    if after == ":" and before == "\n":
        return False
    # Right side first: it almost always fails at once (a citation is followed by text).
    return not (_closes_right(text, end) and _opens_left(text, start))


def _opens_left(text: str, start: int) -> bool:
    """True when only marker characters lie between an opening bracket and ``start``."""
    stop = max(0, start - _CONTEXT_LIMIT)
    position = start - 1
    while position >= stop and text[position] in _MARKER_CHARS:
        position -= 1
    return position >= stop and text[position] == "["


def _closes_right(text: str, end: int) -> bool:
    """True when only marker characters lie between ``end`` and a closing bracket."""
    stop = min(len(text), end + _CONTEXT_LIMIT)
    position = end
    while position < stop and text[position] in _MARKER_CHARS:
        position += 1
    return position < stop and text[position] == "]"
