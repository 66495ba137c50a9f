"""Finalize an answer's citations: keep what is cited, renumber it, rewrite the markers.

``finalize_citations(text, sources)`` reads every marker (see ``_markers``) in one pass:

- a number naming a source keeps it; sources get new numbers 1..k in order of first citation
  (markers in text order, numbers in the order written);
- a number naming no source (out of range, ``0``) is *dangling*: it is removed from its group
  and reported with the marker's position; it never points at another source;
- every source no marker cites is dropped; nothing cited means no sources at all.

Rewriting a group: its numbers become the new ones, sorted, duplicates collapsed; a group
written with ``", "`` or ``","`` keeps that separator, and a group written with a range keeps
writing consecutive numbers as ranges with the same dash. So ``[3, 1]`` may become ``[1, 2]``
and ``[2-4]`` may become ``[1-3]``.

A group whose every number dangles disappears with the space it leaves (see ``_removal``:
``"Claim [9]."`` becomes ``"Claim."``, a line left empty goes). Text outside markers is
otherwise copied unchanged. Where removing would change how Markdown reads a line
(``"[9]# x"`` would become a heading, ``"- [9]"`` an empty list item), the marker is
*escaped* instead: ``\\[9\\]`` shows as the text ``[9]`` and cites nothing.

As a safety net, finalize re-reads its output whenever it removed a marker; if the markers
found differ from the ones it wrote (a removal turned code into text, or a citation into
code), it starts again and escapes every dangling marker, which leaves the Markdown
structure exactly as the model wrote it. ``dangling_escaped`` tells when any was escaped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import NamedTuple

from citelab._errors import InvalidInput
from citelab.events import Reference
from citelab.sources._markers import Marker, parse_markers
from citelab.sources._removal import remove_marker
from citelab.sources._source import Source

__all__ = ["DanglingCitation", "FinalizedAnswer", "finalize_citations"]

_SEPARATOR = re.compile(r" *, *")


# Plain value types rather than pydantic models: an answer can hold thousands of markers,
# and validating each would cost more than parsing the whole text.
class DanglingCitation(NamedTuple):
    """A number that named no source, and where its marker was in the original text."""

    number: int
    start: int
    end: int
    raw: str


@dataclass(frozen=True, slots=True)
class FinalizedAnswer:
    """The answer as the client gets it, and what finalizing changed."""

    text: str
    """The text with markers rewritten to the new numbers and dangling ones removed."""
    sources: tuple[Source, ...]
    """The cited sources, numbered 1..k in first-citation order."""
    dropped: tuple[Source, ...] = ()
    """Sources no marker cited, with their numbers before finalizing."""
    dangling: tuple[DanglingCitation, ...] = ()
    """Numbers that named no source, with their positions in the original text."""
    renumbering: Mapping[int, int] = field(default_factory=dict)
    """Old number → new number, for every cited source."""
    markers: tuple[Marker, ...] = ()
    """The markers of ``text`` (positions in the final text, new numbers)."""
    dangling_escaped: bool = False
    """True when dangling markers were escaped (``\\[9\\]``) rather than removed."""

    def references(self) -> list[Reference]:
        """The final source list as client cards."""
        return [source.to_reference() for source in self.sources]


def finalize_citations(text: str, sources: Sequence[Source]) -> FinalizedAnswer:
    """Drop uncited sources, renumber the rest by first citation, rewrite the markers."""
    by_number = _by_number(sources)
    markers = parse_markers(text)
    finalized, removed = _rewrite(text, markers, by_number, remove=True)
    if removed and parse_markers(finalized.text) != list(finalized.markers):
        # Removing a marker changed how the text reads (see the module docstring): escape
        # dangling markers instead, which leaves the Markdown structure exactly as it was.
        finalized, _ = _rewrite(text, markers, by_number, remove=False)
    return finalized


def _rewrite(
    text: str, markers: list[Marker], by_number: dict[int, Source], *, remove: bool
) -> tuple[FinalizedAnswer, bool]:
    """One pass over the markers; returns the result and whether any marker was removed."""
    renumbering: dict[int, int] = {}
    dangling: list[DanglingCitation] = []
    pieces: list[str] = []
    written_at: list[tuple[int, tuple[int, ...], str]] = []  # (piece index, numbers, text)
    copied = 0
    removed = escaped = False
    for marker in markers:
        if marker.start > copied:
            pieces.append(text[copied : marker.start])
        cited = _renumber(marker, by_number, renumbering, dangling)
        if cited:
            written = f"[{cited[0]}]" if len(cited) == 1 else _write(cited, marker.raw)
            written_at.append((len(pieces), cited, written))
            pieces.append(written)
            copied = marker.end
        elif remove and (resume := remove_marker(pieces, text, marker.end)) is not None:
            copied = resume
            removed = True
        else:
            pieces.append(_escape(marker.raw))
            escaped = True
            copied = marker.end
    pieces.append(text[copied:])
    # Removal only ever trims pieces after the last written marker, so indices hold.
    offsets = list(accumulate(map(len, pieces), initial=0))
    final_markers = tuple(
        Marker(offsets[index], offsets[index] + len(written), cited, written)
        for index, cited, written in written_at
    )
    kept = sorted(renumbering.items(), key=lambda pair: pair[1])
    finalized = FinalizedAnswer(
        text="".join(pieces),
        sources=tuple(by_number[old].model_copy(update={"number": new}) for old, new in kept),
        dropped=tuple(s for number, s in by_number.items() if number not in renumbering),
        dangling=tuple(dangling),
        renumbering=renumbering,
        markers=final_markers,
        dangling_escaped=escaped,
    )
    return finalized, removed


def _escape(raw: str) -> str:
    """``[9]`` → ``\\[9\\]``: shown as text, read by no one as a citation."""
    return "\\" + raw[:-1] + "\\]"


def _by_number(sources: Sequence[Source]) -> dict[int, Source]:
    by_number: dict[int, Source] = {}
    for index, source in enumerate(sources):
        if source.number is None:
            raise InvalidInput(f"sources[{index}] ({source.uri}) has no number: number it first")
        if source.number in by_number:
            raise InvalidInput(f"sources[{index}] ({source.uri}) repeats number {source.number}")
        by_number[source.number] = source
    return by_number


def _renumber(
    marker: Marker,
    by_number: Mapping[int, Source],
    renumbering: dict[int, int],
    dangling: list[DanglingCitation],
) -> tuple[int, ...]:
    """The marker's new numbers (sorted, distinct); assigns numbers on first citation."""
    numbers = marker.numbers
    if len(numbers) == 1 and numbers[0] in by_number:
        # The common case, kept short: one valid number.
        new = renumbering.get(numbers[0])
        if new is None:
            new = renumbering[numbers[0]] = len(renumbering) + 1
        return (new,)
    cited: set[int] = set()
    missing: set[int] = set()
    for number in numbers:
        if number in by_number:
            new = renumbering.get(number)
            if new is None:
                new = renumbering[number] = len(renumbering) + 1
            cited.add(new)
        elif number not in missing:
            missing.add(number)
            dangling.append(DanglingCitation(number, marker.start, marker.end, marker.raw))
    return tuple(sorted(cited))


def _write(numbers: tuple[int, ...], raw: str) -> str:
    """The group for ``numbers`` in the style ``raw`` was written in."""
    if len(numbers) == 1:
        return f"[{numbers[0]}]"
    separator_match = _SEPARATOR.search(raw)
    separator = separator_match[0] if separator_match else ", "
    dash = "–" if "–" in raw else "-" if "-" in raw else None
    items = _as_ranges(numbers, dash) if dash else [str(number) for number in numbers]
    return "[" + separator.join(items) + "]"


def _as_ranges(numbers: tuple[int, ...], dash: str) -> list[str]:
    items: list[str] = []
    low = high = numbers[0]
    for number in (*numbers[1:], None):
        if number is not None and number == high + 1:
            high = number
            continue
        items.append(str(low) if low == high else f"{low}{dash}{high}")
        if number is not None:
            low = high = number
    return items
