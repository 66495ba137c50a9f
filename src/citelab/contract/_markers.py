"""The citation marker grammar: which ``[n]`` in an answer are citations.

The one home of every marker rule in Python: finalize, rendering, judges, scorers and the
external formats read markers through this module (the front end's copy, ``citations.js``, is
cross-checked against it by a test). The grammar itself is specified in the rest of this
docstring; the *variants* at the end are the few other readings a component's exactness
needs, each named for what it reproduces (ALCE's ``eval.py``, the lexical judges' features).

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
- a chain followed by ``:`` that opens a line after at most three spaces, at the start of
  the text or after a blank line: a reference definition ``[1]: url`` or ``  [1]: x`` (after
  a line of text it is the paragraph's text, and a citation, as in Markdown);
- a chain inside the text of an inline link, ``[see [1]](url)``: brackets (balanced, not
  escaped, not code) around it, closed by ``](`` and a destination up to ``)`` (an image's
  text, ``![see [1]](x.png)``, is read as text is, as markdown-it reads it);
- footnotes ``[^1]`` and anything else outside the grammar (``[01]``, ``[ 1 ]``, ``[1;2]``);
- a reversed range ``[4-2]``, or a group naming more than 50 numbers (``[1-100]``);
- a chain inside brackets with only marker characters between (``[[1]]``, ``[1, [2]]``):
  removing it could otherwise join the text around it into a new marker.

``great![1]`` is a citation (an image needs ``(`` or ``[`` after the label). A year in
brackets, ``[2023]``, fits the grammar and is treated as a (dangling) citation.

How it is read fast (answers run to thousands of markers): one regex split cuts the text
into *chains*, runs of adjacent bracketed groups of marker characters, which hold every
candidate. A chain that is one valid group in plain context is a marker as it stands: its
numbers come from a table (``[n]``) or are read once per distinct text (``[1, 3]``).
Every other chain (several groups, an invalid group, code overlapping it, or a neighbour
the rules above look at: ``]``, ``\\``, ``(``, ``[``, ``:``, brackets around) is read
candidate by candidate with the full rules; chains never touch, so the rules can be applied
to one chain at a time.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import cache
from itertools import accumulate, compress, count, repeat
from operator import is_, itemgetter
from typing import NamedTuple, cast

from citelab.contract._code import Range, code_ranges, is_escaped

__all__ = [
    "ALCE_CITATION",
    "MARKER_GROUP",
    "MARKER_TEXT",
    "MAX_GROUP_NUMBERS",
    "SENTENCE_END_MARKERS",
    "Marker",
    "MarkerScan",
    "alce_cited_numbers",
    "alce_remove_citations",
    "group_numbers",
    "one_number_groups",
    "parse_markers",
    "scan_markers",
    "strip_plain_markers",
]

MAX_GROUP_NUMBERS = 50
"""A group naming more numbers than this is not a citation."""

_DIGITS = 4
_NUMBER = rf"(?:0|[1-9][0-9]{{0,{_DIGITS - 1}}})"
_ITEM = rf"{_NUMBER}(?:[-–]{_NUMBER})?"
_MARKER = re.compile(rf"\[({_ITEM}(?: *, *{_ITEM})*)\]")
MARKER_GROUP = _MARKER
"""One bracketed group of the grammar, its items (numbers, ranges, commas) in group 1; a
match is a citation when :func:`group_numbers` accepts its items and its context allows."""
_MARKER_CHARS = frozenset("0123456789 ,-–")
# Bound on the left/right scans of the bracket check: longer runs cannot form a valid group.
_CONTEXT_LIMIT = MAX_GROUP_NUMBERS * 10

# Every marker is a bracketed run of marker characters starting with a digit, so adjacent
# runs of those (a chain) hold every chain of markers; one split finds them all.
_GROUP = r"\[[0-9][0-9 ,\-–]*\]"
_CHAINS = re.compile(rf"({_GROUP}(?:{_GROUP})*)")  # unrolled, rather than (…)+
_NUMBER_LIST = re.compile(rf"\[{_NUMBER}(?: *, *{_NUMBER}){{0,{MAX_GROUP_NUMBERS - 1}}}\]")
# Where a chain may not be a plain citation: a "]" or "\" right before it, or after it a
# "(", "[" or ":", or marker characters up to a "]" (the bracket check of _is_citation_chain).
# Two patterns, each opening with a literal: the regex engine then skips ahead fast.
_HAZARDS = (
    re.compile(rf"\](?=[\[(:]|[0-9 ,\-–]{{0,{_CONTEXT_LIMIT - 1}}}+\])"),
    re.compile(r"\\(?=\[)"),
)
_INNER = itemgetter(slice(1, -1))


class Marker(NamedTuple):
    """One citation marker: its span in code points, the numbers it names, its text."""

    start: int
    end: int
    numbers: tuple[int, ...]
    raw: str


@dataclass(frozen=True, slots=True)
class MarkerScan:
    """A text cut into chains of bracketed groups and the text between them.

    A *plain* chain is one marker as it stands, with its ``numbers``; a *special* one
    (``numbers`` is ``None``) was read candidate by candidate into ``special``.
    """

    parts: list[str]
    """Text between chains at even indices, chains at odd ones: ``"".join(parts)`` is the
    text."""
    offsets: list[int]
    """Where each part starts, and the text's length last."""
    numbers: list[tuple[int, ...] | None]
    """Per chain: the numbers of its one marker, or ``None`` when it is special."""
    special: dict[int, list[Marker]]
    """Per special chain: the markers it holds (often none), in order."""
    groups: dict[str, tuple[int, ...] | None]
    """Per distinct chain text other than ``[n]``: its numbers when it is one marker group,
    else ``None``."""

    @property
    def chains(self) -> list[str]:
        """The text of each chain, in order."""
        return self.parts[1::2]

    def markers(self) -> list[Marker]:
        """Every marker, in order."""
        parts, offsets = self.parts, self.offsets
        plain = map(
            tuple.__new__,
            repeat(Marker),
            zip(offsets[1::2], offsets[2::2], self.numbers, parts[1::2], strict=False),
        )
        markers: list[Marker] = list(plain)
        # Few chains are special: splice their markers in, from the end so indices hold.
        for index in sorted(self.special, reverse=True):
            markers[index : index + 1] = self.special[index]
        return markers

    def numbers_in_order(self) -> list[tuple[int, ...]]:
        """Per chain, the numbers its markers name, in written order."""
        numbers = list(self.numbers)
        for index, markers in self.special.items():
            numbers[index] = tuple(n for marker in markers for n in marker.numbers)
        return cast(list[tuple[int, ...]], numbers)  # every None was replaced


def parse_markers(text: str) -> list[Marker]:
    """Every citation marker in ``text``, in order (see the module docstring for the rules)."""
    return scan_markers(text).markers()


def scan_markers(text: str) -> MarkerScan:
    """Cut ``text`` into chains and read their markers (see :class:`MarkerScan`)."""
    parts = _CHAINS.split(text)
    offsets = list(accumulate(map(len, parts), initial=0))
    chains = parts[1::2]
    # Most chains are one number, read with one look-up each; the others by distinct text.
    numbers: list[tuple[int, ...] | None] = list(map(one_number_groups().get, chains))
    others = list(compress(count(), map(is_, numbers, repeat(None))))
    groups = _groups({chains[index]: None for index in others})
    for index in others:
        numbers[index] = groups[chains[index]]
    code = code_ranges(text)
    links = _link_texts(text, code) if "](" in text else []
    for index in _hazards(text, offsets) | _in_code(code, offsets) | _in_code(links, offsets):
        numbers[index] = None
    inside = _inside(links, offsets) if links else set()  # a link's text holds no marker
    special = {
        index: []
        if index in inside
        else _chain_markers(text, code, offsets[2 * index + 1], offsets[2 * index + 2])
        for index in compress(count(), map(is_, numbers, repeat(None)))
    }
    return MarkerScan(parts, offsets, numbers, special, groups)


@cache
def one_number_groups() -> dict[str, tuple[int, ...]]:
    """Every one-number group, ``"[0]"`` to ``"[9999]"``, and the numbers it names (a table
    of 10,000 entries built on first use: reading a group is then one dictionary look-up)."""
    return {f"[{number}]": (number,) for number in range(10**_DIGITS)}


def _groups(chains: dict[str, None]) -> dict[str, tuple[int, ...] | None]:
    """The numbers of each chain that is one valid group (``None`` for the others)."""
    # Lists of plain numbers (most groups) are read without a Python-level loop.
    lists = list(filter(_NUMBER_LIST.fullmatch, chains))
    items = map(str.split, map(_INNER, lists), repeat(","))
    groups: dict[str, tuple[int, ...] | None] = dict(
        zip(lists, map(tuple, map(map, repeat(int), items)), strict=True)  # int() skips spaces
    )
    for chain in chains.keys() - groups.keys():
        group = _MARKER.fullmatch(chain)
        groups[chain] = _numbers(group[1]) if group else None
    return groups


def _hazards(text: str, offsets: list[int]) -> set[int]:
    """Chains whose neighbours call for the full chain rules (see ``_HAZARDS``)."""
    found: set[int] = set()
    for pattern in _HAZARDS:
        for hazard in pattern.finditer(text):
            boundary = hazard.end()
            part = bisect_left(offsets, boundary)
            if part < len(offsets) - 1 and offsets[part] == boundary:
                # The part starting here: a chain (its left neighbour) or the text after one.
                found.add((part - 1) // 2)
    return found


def _in_code(code: list[Range], offsets: list[int]) -> set[int]:
    """Chains that overlap code."""
    found: set[int] = set()
    ends = offsets[2::2]
    for start, end in code:
        index = bisect_left(ends, start + 1)  # first chain ending after the code starts
        while index < len(ends) and offsets[2 * index + 1] < end:
            found.add(index)
            index += 1
    return found


_LINK_CLOSE = re.compile(r"\]\(")
_LINK_TAIL = re.compile(
    r"\(\s*(?:<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*\)"
)
"""What follows an inline link's ``]``: ``(``, a destination (``<…>`` or no spaces, balanced
parentheses), an optional title, ``)``."""


def _link_texts(text: str, code: list[Range]) -> list[Range]:
    """The ``[start, end)`` ranges of inline links' texts (inside the brackets), sorted: each
    ``](`` with a destination after it, and the unescaped ``[`` that balances its ``]``."""
    found: list[Range] = []
    for close in (m.start() for m in _LINK_CLOSE.finditer(text)):
        if is_escaped(text, close) or _at_code(code, close):
            continue
        if not _LINK_TAIL.match(text, close + 1):
            continue
        depth, position, stop = 0, close - 1, max(0, close - _CONTEXT_LIMIT)
        while position >= stop and not text.startswith("\n\n", position):
            char = text[position]
            if char in "[]" and not is_escaped(text, position) and not _at_code(code, position):
                if char == "]":
                    depth += 1
                elif depth:
                    depth -= 1
                else:  # an image's text is read as markers, as markdown-it does
                    if not (position and text[position - 1] == "!"):
                        found.append((position + 1, close))
                    break
            position -= 1
    return sorted(found)


def _at_code(code: list[Range], position: int) -> bool:
    index = bisect_left(code, (position + 1, -1)) - 1
    return index >= 0 and code[index][0] <= position < code[index][1]


def _inside(ranges: list[Range], offsets: list[int]) -> set[int]:
    """Chains that lie wholly inside one of ``ranges``."""
    found: set[int] = set()
    ends = offsets[2::2]
    for start, end in ranges:
        index = bisect_left(ends, start + 1)
        while index < len(ends) and offsets[2 * index + 1] < end:
            if offsets[2 * index + 1] >= start and ends[index] <= end:
                found.add(index)
            index += 1
    return found


def _chain_markers(text: str, code: list[Range], start: int, end: int) -> list[Marker]:
    """The markers of the chain ``text[start:end]``, candidate by candidate (full rules)."""
    code_index, code_count = max(bisect_left(code, (start, -1)) - 1, 0), len(code)
    markers: list[Marker] = []
    chain_first, chain_end = 0, -1
    for match in _MARKER.finditer(text, start, end):
        first, last = match.span()
        if code_count:
            while code_index < code_count and code[code_index][1] <= first:
                code_index += 1
            if code_index < code_count and code[code_index][0] < last:
                continue
        if first and text[first - 1] == "\\" and is_escaped(text, first):
            continue
        items = match[1]
        numbers = (int(items),) if items.isdigit() else _numbers(items)
        if numbers is None:
            continue
        if first != chain_end:
            _close_chain(text, markers, chain_first, chain_end)
            chain_first = len(markers)
        markers.append(Marker(first, last, numbers, match[0]))
        chain_end = last
    _close_chain(text, markers, chain_first, chain_end)
    return markers


def _close_chain(text: str, markers: list[Marker], first: int, end: int) -> None:
    """Drop the chain ``markers[first:]`` (adjacent candidates) unless it is a citation."""
    if first < len(markers) and not _is_citation_chain(text, markers[first].start, end):
        del markers[first:]


def group_numbers(items: str) -> tuple[int, ...] | None:
    """The numbers the items of a :data:`MARKER_GROUP` match name, ranges expanded; ``None``
    for a reversed range or more than :data:`MAX_GROUP_NUMBERS` numbers (not a citation)."""
    return _numbers(items)


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
    if after == ":" and _opens_definition_line(text, start):
        return False
    # Right side first: it almost always fails at once (a citation is followed by text).
    return not (_closes_right(text, end) and _opens_left(text, start))


def _opens_definition_line(text: str, start: int) -> bool:
    """True when ``start`` opens a line after at most three spaces, and that line begins the
    text or follows a blank one (where Markdown reads a reference definition)."""
    line = text.rfind("\n", 0, start) + 1
    if start - line > 3 or text[line:start].strip(" "):
        return False
    if line == 0:
        return True
    previous = text.rfind("\n", 0, line - 1) + 1
    return not text[previous : line - 1].strip(" \t")


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


# Variants: other readings of bracketed numbers that a component's exactness depends on. Each
# is kept as it is because changing it would change that component's output.

MARKER_TEXT = re.compile(r"\[\d+(?:[-–]\d+)?(?: *, *\d+(?:[-–]\d+)?)*\]")
"""Text shaped like a marker group anywhere, any number of digits and no context rules: what
the lexical judges blank out before reading words (their trained features depend on it)."""

SENTENCE_END_MARKERS = r"(?:\[\d+(?:\s*[,;]\s*\d+)*\])*"
"""Marker groups glued to a full stop (``Foo.[1] Bar``), a regex fragment for citelab's
sentence splitter: lists only, ``;`` allowed as a separator, no ranges."""

ALCE_CITATION = re.compile(r"\[\d+")
"""ALCE's ``eval.py`` marker: an opening bracket and digits (the closing one is not read)."""
_ALCE_SPACED = re.compile(r" \[\d+")
_PLAIN_MARKER = re.compile(r"\s*\[\d+\]")


def alce_cited_numbers(sentence: str) -> tuple[int, ...]:
    """The numbers ALCE's ``eval.py`` reads as citations of ``sentence``, in order."""
    return tuple(int(found[1:]) for found in ALCE_CITATION.findall(sentence))


def alce_remove_citations(sentence: str) -> str:
    """ALCE's ``remove_citations``: drop `` [<digits>`` first, then ``[<digits>``, then
    `` |`` and every ``]`` left over."""
    once = ALCE_CITATION.sub("", _ALCE_SPACED.sub("", sentence))
    return once.replace(" |", "").replace("]", "")


def strip_plain_markers(text: str) -> str:
    """``text`` without its one-number markers ``[n]`` and the spaces before each (how the
    claims of ALCE's human-evaluation file are read)."""
    return _PLAIN_MARKER.sub("", text)
