"""Inline citation markers, as the perturbing model reads and rewrites them.

The grammar is the pipeline's own (:func:`citelab.contract.parse_markers`: ``[n]``,
``[n, m]``, ranges ``[2-4]``, chains ``[1][3]``; nothing inside code or links), so a fault is
injected exactly where the evaluations will look for citations. Each *number* a marker names
is one citable unit, indexed 0.. in reading order across the text.
"""

from __future__ import annotations

from collections.abc import Callable

from citelab.contract import Marker, parse_markers

__all__ = ["marker_numbers", "rewrite_markers"]

Replacement = Callable[[int, int], int | None]
"""``(marker_index, number) -> new number``, or ``None`` to remove it."""


def marker_numbers(text: str) -> list[int]:
    """Every cited number, in reading order (``[2-4]`` counts as 2, 3, 4)."""
    return [number for marker in parse_markers(text) for number in marker.numbers]


def rewrite_markers(text: str, replace: Replacement) -> str:
    """Rewrite each cited number through ``replace``.

    An unchanged marker keeps its exact text; a changed one is written ``[a]`` or
    ``[a, b]``; a marker left empty disappears, and a chain left empty takes the spaces
    before it along, so ``claim [2].`` becomes ``claim.`` while ``claim [1][2].`` minus
    ``[1]`` becomes ``claim [2].``.
    """
    parts: list[str] = []
    position = 0
    index = 0
    for chain in _chains(parse_markers(text)):
        written = []
        for marker in chain:
            numbers = [replace(index + i, n) for i, n in enumerate(marker.numbers)]
            index += len(marker.numbers)
            written.append(_written(marker, [n for n in numbers if n is not None]))
        before = text[position : chain[0].start]
        replacement = "".join(written)
        parts.append(before + replacement if replacement else before.rstrip(" \t"))
        position = chain[-1].end
    parts.append(text[position:])
    return "".join(parts)


def _chains(markers: list[Marker]) -> list[list[Marker]]:
    """Markers grouped into runs that touch (``[1][3]`` is one chain)."""
    chains: list[list[Marker]] = []
    for marker in markers:
        if chains and chains[-1][-1].end == marker.start:
            chains[-1].append(marker)
        else:
            chains.append([marker])
    return chains


def _written(marker: Marker, numbers: list[int]) -> str:
    if tuple(numbers) == marker.numbers:
        return marker.raw
    return "[" + ", ".join(map(str, numbers)) + "]" if numbers else ""
