"""Finalize an answer's citations: keep what is cited, renumber it, rewrite the markers.

``finalize_citations(text, sources, keep=m)`` reads every marker (see ``_markers``) in one
pass:

- a number naming a source keeps it; sources get new numbers in order of first citation
  (markers in text order, numbers in the order written): at turn scope (``keep=0``) 1..k;
  at conversation scope the numbers ``1..m`` are the conversation's own (sources cited in
  earlier turns, shown to the model under those numbers), so a cited one keeps its number
  and every other cited source continues the count, ``m+1, m+2…``;
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

As a safety net, finalize re-reads its output whenever it removed a marker in a way that
may change how the text reads (one removed from the middle of a line, with an ordinary
character left of the join, provably cannot: see ``_removal.keeps_reading``); if the markers
found differ from the ones it wrote (a removal turned code into text, or a citation into
code), it starts again and escapes every dangling marker, which leaves the Markdown
structure exactly as the model wrote it. ``dangling_escaped`` tells when any was escaped.

Speed: answers run to thousands of markers, so the common case is done per distinct marker
text rather than per marker: a one-group chain in plain context whose numbers all name
sources is rewritten through a table, and the text is joined once (see
docs/performance.md). Chains with dangling numbers, several groups or odd neighbours (see
``MarkerScan``) go marker by marker, exactly as the rules above say.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, count, repeat
from operator import add, attrgetter, is_
from typing import NamedTuple, cast

from citelab._errors import InvalidInput
from citelab.contract import Marker, MarkerScan, scan_markers
from citelab.events import Reference
from citelab.sources._removal import in_line, keeps_reading, remove_marker
from citelab.sources._source import Source

__all__ = ["DanglingCitation", "FinalizedAnswer", "finalize_citations"]

_SEPARATOR = re.compile(r" *, *")
_NUMBER = attrgetter("number")


# Plain value types rather than pydantic models: an answer can hold thousands of markers
# (see docs/performance.md).
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
    """The cited sources under their final numbers, in first-citation order (at turn scope
    numbered 1..k; at conversation scope a number up to ``keep`` stays, others follow it)."""
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


def finalize_citations(text: str, sources: Sequence[Source], *, keep: int = 0) -> FinalizedAnswer:
    """Drop uncited sources, renumber the rest by first citation, rewrite the markers.

    ``keep`` is how many numbers the conversation has given out (``0``: number this turn
    alone): a cited source numbered ``1..keep`` keeps its number, and the other cited sources
    are numbered from ``keep + 1`` in first-citation order.
    """
    if keep < 0:
        raise InvalidInput(f"keep must be 0 or more, got {keep}")
    by_number = _by_number(sources)
    plan = _Plan.make(scan_markers(text), by_number, keep)
    rewrite = _Rewrite(text, plan)
    finalized = rewrite.run(remove=True)
    if rewrite.must_reread() and not rewrite.reads_back(finalized):
        # Removing a marker changed how the text reads (see the module docstring): escape
        # dangling markers instead, which leaves the Markdown structure exactly as it was.
        finalized = _Rewrite(text, plan).run(remove=False)
    return finalized


@dataclass(frozen=True, slots=True)
class _Plan:
    """What finalizing a scanned text does, before writing it."""

    scan: MarkerScan
    by_number: dict[int, Source]
    renumbering: dict[int, int]
    """Old number → new number, in first-citation order."""
    written: list[str | None]
    """Per chain: its rewritten text, or ``None`` when it goes marker by marker."""
    cited: dict[str, tuple[int, ...]]
    """Rewritten one-group chain → the new numbers it names."""

    @classmethod
    def make(cls, scan: MarkerScan, by_number: dict[int, Source], keep: int = 0) -> _Plan:
        renumbering = _renumbering(scan, by_number, keep)
        written, cited = _rewritten_chains(scan, renumbering)
        return cls(scan, by_number, renumbering, written, cited)


def _renumbering(scan: MarkerScan, by_number: dict[int, Source], keep: int) -> dict[int, int]:
    """Old number → new number for every number a marker cites, in first-citation order:
    numbers up to ``keep`` stay, the others count on from ``keep + 1``."""
    order = dict.fromkeys(chain.from_iterable(scan.numbers_in_order()))
    cited = filter(by_number.__contains__, order)
    if not keep:
        return dict(zip(cited, count(1), strict=False))
    fresh = count(keep + 1)
    return {number: number if number <= keep else next(fresh) for number in cited}


def _rewritten_chains(
    scan: MarkerScan, renumbering: dict[int, int]
) -> tuple[list[str | None], dict[str, tuple[int, ...]]]:
    """Per chain, its rewritten text (``None``: it goes marker by marker), and the new
    numbers each rewritten text names."""
    new_texts = _group_texts(renumbering.values())
    cited: dict[str, tuple[int, ...]] = dict(zip(new_texts, zip(renumbering.values()), strict=True))
    # A chain of one number is rewritten by a table look-up (None when the number dangles)...
    table = dict(zip(_group_texts(renumbering), new_texts, strict=True))
    chains = scan.chains
    written: list[str | None] = list(map(table.get, chains))
    for index in scan.special:
        written[index] = None
    # ...a group of several numbers once per distinct text.
    groups = _groups_rewritten(scan, renumbering, cited)
    for index in compress(count(), map(is_, written, repeat(None))):
        if index not in scan.special:
            written[index] = groups.get(chains[index])
    return written, cited


def _group_texts(numbers: Iterable[int]) -> list[str]:
    """``"[n]"`` for each number."""
    return [f"[{number}]" for number in numbers]


def _groups_rewritten(
    scan: MarkerScan, renumbering: dict[int, int], cited: dict[str, tuple[int, ...]]
) -> dict[str, str]:
    """Each group of several numbers, rewritten, unless one of its numbers dangles (or the
    group is a citation nowhere: then its numbers have no new numbers)."""
    rewritten: dict[str, str] = {}
    for raw, numbers in scan.groups.items():
        if numbers and all(map(renumbering.__contains__, numbers)):
            new = tuple(sorted(set(map(renumbering.__getitem__, numbers))))
            rewritten[raw] = written = _write(new, raw)
            cited[written] = new
    return rewritten


@dataclass(slots=True)
class _Rewrite:
    """One pass writing the final text (a new one for each pass): whole runs of chains from
    the table at once, the other chains marker by marker."""

    text: str
    plan: _Plan
    pieces: list[str] = field(default_factory=list)
    written_at: list[int] = field(default_factory=list)
    """Index in ``pieces`` of each written marker."""
    written: list[str] = field(default_factory=list)
    cited: list[tuple[int, ...]] = field(default_factory=list)
    dangling: list[DanglingCitation] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    """Where each written marker starts in the final text."""
    copied: int = 0
    """How much of ``text`` is written (or skipped)."""
    removed: bool = False
    """True when a dangling marker was removed."""
    unsure: bool = False
    """True when a removal may have changed how the rest of the text reads."""
    escaped: bool = False

    def run(self, *, remove: bool) -> FinalizedAnswer:
        """The finalized answer."""
        plan = self.plan
        parts = plan.scan.parts.copy()
        # A chain going marker by marker gets None here, and is never copied from parts.
        parts[1::2] = cast(list[str], plan.written)
        by_marker = list(compress(count(), map(is_, plan.written, repeat(None))))
        if by_marker:
            self.write_by_marker(parts, by_marker, remove=remove)
        else:
            # The common case: every chain comes from the table.
            self.pieces = parts
            self.written_at = list(range(1, len(parts), 2))
            self.written = cast(list[str], plan.written)  # no None: nothing went by marker
            self.cited = list(map(plan.cited.__getitem__, self.written))
        return self.finalized()

    def write_by_marker(self, parts: list[str], by_marker: list[int], *, remove: bool) -> None:
        """Chains from the table between the ``by_marker`` ones, which go marker by marker."""
        special = self.plan.scan.special
        done = 0
        for index in by_marker:
            self.copy_chains(parts, done, index)
            markers = special.get(index)
            for marker in [self.plain_marker(index)] if markers is None else markers:
                self.marker(marker, remove=remove)
            done = index + 1
        self.copy_chains(parts, done, len(self.plan.written))
        self.pieces.append(self.text[self.copied :])

    def must_reread(self) -> bool:
        """Whether the output must be re-read: a marker was removed in a way that may have
        changed how the text reads (see ``_removal.keeps_reading``)."""
        return self.removed and self.unsure

    def reads_back(self, finalized: FinalizedAnswer) -> bool:
        """True when the final text reads as exactly the markers written."""
        scan = scan_markers(finalized.text)
        if scan.special:
            return scan.markers() == list(finalized.markers)
        # No special chain: one marker per chain, so compare the lists whole.
        written = len(self.written)
        return (
            scan.chains == self.written
            and scan.numbers == self.cited
            and scan.offsets[1 : 2 * written : 2] == self.starts
        )

    def copy_chains(self, parts: list[str], first: int, stop: int) -> None:
        """Write chains ``first..stop-1`` from the table, and the text up to chain ``stop``."""
        if first >= stop:
            return
        offsets = self.plan.scan.offsets
        if offsets[2 * first + 1] > self.copied:
            self.pieces.append(self.text[self.copied : offsets[2 * first + 1]])
        base = len(self.pieces)
        self.pieces += parts[2 * first + 1 : 2 * stop + 1]
        self.written_at += range(base, base + 2 * (stop - first), 2)
        chains = cast(list[str], self.plan.written[first:stop])  # plain chains: no None
        self.written += chains
        self.cited += map(self.plan.cited.__getitem__, chains)
        self.copied = offsets[2 * stop + 1]

    def plain_marker(self, index: int) -> Marker:
        """The one marker of a plain chain (one that names a dangling number)."""
        scan = self.plan.scan
        numbers = scan.numbers[index]
        assert numbers is not None
        start, end = scan.offsets[2 * index + 1], scan.offsets[2 * index + 2]
        return Marker(start, end, numbers, scan.parts[2 * index + 1])

    def marker(self, marker: Marker, *, remove: bool) -> None:
        if marker.start > self.copied:
            self.pieces.append(self.text[self.copied : marker.start])
        plan = self.plan
        cited = _renumber(marker, plan.by_number, plan.renumbering, self.dangling)
        if cited:
            written = f"[{cited[0]}]" if len(cited) == 1 else _write(cited, marker.raw)
            self.written_at.append(len(self.pieces))
            self.written.append(written)
            self.cited.append(cited)
            self.pieces.append(written)
            self.copied = marker.end
        elif remove and (resume := self.remove(marker)) is not None:
            self.copied = resume
            self.removed = True
        else:
            self.pieces.append(_escape(marker.raw))
            self.escaped = True
            self.copied = marker.end

    def remove(self, marker: Marker) -> int | None:
        """Remove a dangling marker (see ``_removal``); where copying resumes, or ``None``."""
        local = in_line(self.pieces)
        resume = remove_marker(self.pieces, self.text, marker.end)
        if resume is not None and not (local and keeps_reading(self.pieces, self.text, resume)):
            self.unsure = True
        return resume

    def finalized(self) -> FinalizedAnswer:
        # Removal only ever trims pieces after the last written marker, so indices hold.
        offsets = list(accumulate(map(len, self.pieces), initial=0))
        self.starts = starts = list(map(offsets.__getitem__, self.written_at))
        ends = map(add, starts, map(len, self.written))
        fields = zip(starts, ends, self.cited, self.written, strict=True)
        markers: Iterable[Marker] = map(tuple.__new__, repeat(Marker), fields)
        plan = self.plan
        by_number, renumbering = plan.by_number, plan.renumbering
        return FinalizedAnswer(
            text="".join(self.pieces),
            sources=tuple(_renumbered(by_number[old], new) for old, new in renumbering.items()),
            dropped=tuple(s for number, s in by_number.items() if number not in renumbering),
            dangling=tuple(self.dangling),
            renumbering=dict(renumbering),
            markers=tuple(markers),
            dangling_escaped=self.escaped,
        )


def _renumbered(source: Source, number: int) -> Source:
    return source if source.number == number else source.model_copy(update={"number": number})


def _escape(raw: str) -> str:
    """``[9]`` → ``\\[9\\]``: shown as text, read by no one as a citation."""
    return "\\" + raw[:-1] + "\\]"


def _by_number(sources: Sequence[Source]) -> dict[int, Source]:
    numbered = dict(zip(map(_NUMBER, sources), sources, strict=True))
    if None not in numbered and len(numbered) == len(sources):
        return cast(dict[int, Source], numbered)
    # Look again, one by one, to say which source is wrong.
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
    """The marker's new numbers (sorted, distinct); dangling ones go to ``dangling``."""
    # The plan numbered every number a marker names that names a source.
    cited: set[int] = set()
    missing: set[int] = set()
    for number in marker.numbers:
        if number in by_number:
            cited.add(renumbering[number])
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
