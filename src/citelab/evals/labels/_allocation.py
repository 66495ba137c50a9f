"""How the stratified design shares a sample between strata, before any label is given.

A judge's score ``s`` (its calibrated probability that a pair is supported) predicts how
much people's labels vary among pairs with that score: a label is a coin with chance ``s``,
so in a stratum of pairs the spread of ``y − s`` (the rectifier of classic PPI) is about
``√mean s(1 − s)``. Neyman allocation gives each stratum labels in proportion to its size
times that spread, which minimises the variance of the stratified mean; a stratum of pairs the
judge is sure about (``s`` near 0 or 1) needs few labels, one it is unsure about many. The
strata are quantile bins of the score (:func:`score_bins`), the spreads predicted from it
(:func:`predicted_spreads`), halfway-plus shrunk towards their mean because nothing shows the
scores are calibrated before the first label (a miscalibrated judge then costs little), and
:func:`allocate` turns them into whole numbers of labels with a minimum per stratum (so each
stratum has a variance estimate). The specification, and the figures: ``docs/corrected-
metrics.md`` ("Designs") and ``docs/performance.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from citelab._errors import InvalidInput

__all__ = [
    "MAX_BINS",
    "MIN_PER_STRATUM",
    "TRUST",
    "allocate",
    "bin_count",
    "predicted_spreads",
    "score_bins",
]

MIN_PER_STRATUM = 5
"""Labels every stratum keeps (when it has that many pairs): its variance needs a few."""

MAX_BINS = 10
"""Score bins at most in one population (more bins leave each too few labels)."""

TRUST = 0.7
"""How far the spreads predicted from the scores are trusted: each is ``TRUST·σₕ +
(1 − TRUST)·σ̄`` (σ̄ the size-weighted mean), so a judge whose scores are not calibrated
moves the allocation only part of the way from proportional."""


def bin_count(wanted: int, size: int) -> int:
    """Score bins for ``wanted`` labels among ``size`` pairs: one per ten labels, between 2
    and :data:`MAX_BINS`, and no more than leave each bin :data:`MIN_PER_STRATUM` pairs."""
    return max(1, min(MAX_BINS, max(2, wanted // 10), size // MIN_PER_STRATUM))


def score_bins(scores: Sequence[float], bins: int, ties: Sequence[str] | None = None) -> list[int]:
    """Each pair's bin (0 … ``bins − 1``) by its score's rank: equal-sized quantile bins, so
    equal scores may be split between two bins, by ``ties`` (else by position). The sample
    drawn from a bin must not depend on how its ties were split: ``ties`` are then keys
    unrelated to the order the bin's pairs are drawn in."""
    if bins < 1:
        raise InvalidInput(f"bins must be a positive number, got {bins}")
    for score in scores:
        if not (isinstance(score, int | float) and 0.0 <= score <= 1.0):
            raise InvalidInput(f"a judge's score must be a probability in [0, 1], got {score!r}")
    if ties is not None and len(ties) != len(scores):
        raise InvalidInput(f"expected {len(scores)} tie-breaking keys, got {len(ties)}")
    ranked = sorted(range(len(scores)), key=lambda i: (scores[i], ties[i] if ties else "", i))
    out = [0] * len(scores)
    for rank, index in enumerate(ranked):
        out[index] = rank * bins // len(scores)
    return out


def predicted_spreads(scores: Sequence[float], bins: Sequence[int], count: int) -> list[float]:
    """Each bin's predicted spread of the labels, ``√mean s(1 − s)`` over its pairs, shrunk
    by :data:`TRUST` towards the size-weighted mean (0 for an empty bin)."""
    sums = [0.0] * count
    sizes = [0] * count
    for score, stratum in zip(scores, bins, strict=True):
        sums[stratum] += score * (1.0 - score)
        sizes[stratum] += 1
    raw = [math.sqrt(s / n) if n else 0.0 for s, n in zip(sums, sizes, strict=True)]
    total = sum(sizes)
    mean = sum(n * r for n, r in zip(sizes, raw, strict=True)) / total if total else 0.0
    return [TRUST * r + (1.0 - TRUST) * mean if n else 0.0 for r, n in zip(raw, sizes, strict=True)]


def allocate(
    sizes: Sequence[int],
    spreads: Sequence[float] | None,
    wanted: int,
    minimum: int = MIN_PER_STRATUM,
) -> list[int]:
    """Labels per stratum: ``wanted`` shared in proportion to ``size × spread`` (Neyman;
    ``spreads`` None: in proportion to size), each stratum taking at least ``minimum`` (or
    all it has) and at most its size; whole numbers by largest remainders, summing to
    ``min(wanted, Σ sizes)``."""
    if any(n < 0 for n in sizes):
        raise InvalidInput(f"stratum sizes must not be negative, got {list(sizes)}")
    weights = [1.0] * len(sizes) if spreads is None else [float(s) for s in spreads]
    if len(weights) != len(sizes) or any(not (w >= 0 and math.isfinite(w)) for w in weights):
        raise InvalidInput(f"expected {len(sizes)} spreads, finite and not negative")
    total = min(wanted, sum(sizes))
    if total == sum(sizes):
        return list(sizes)
    filled = sum(1 for n in sizes if n)
    minimum = min(minimum, total // filled)  # a sample too small for every minimum
    need = [n * max(w, 1e-9) for n, w in zip(sizes, weights, strict=True)]
    share = [0.0] * len(sizes)
    fixed = [n == 0 for n in sizes]
    # Neyman's shares, then pin each stratum that falls below its minimum or above its size
    # there and share the rest again among the others (at most one pass per stratum).
    for _ in range(len(sizes) + 1):
        left = total - sum(share[h] for h in range(len(sizes)) if fixed[h])
        free = sum(need[h] for h in range(len(sizes)) if not fixed[h])
        changed = False
        for h, n in enumerate(sizes):
            if fixed[h]:
                continue
            raw = left * need[h] / free if free > 0 else 0.0
            floor = min(minimum, n)
            if raw < floor or raw > n:
                share[h] = float(floor if raw < floor else n)
                fixed[h] = changed = True
            else:
                share[h] = raw
        if not changed:
            break
    take = [min(n, math.floor(s)) for s, n in zip(share, sizes, strict=True)]
    order = sorted(range(len(sizes)), key=lambda h: (-(share[h] - math.floor(share[h])), h))
    short = total - sum(take)
    for h in order * 2:  # a second round when the first ran into full strata
        if short <= 0:
            break
        if take[h] < sizes[h]:
            take[h] += 1
            short -= 1
    return take
