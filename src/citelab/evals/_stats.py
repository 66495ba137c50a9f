"""citelab's statistics, each in one place: estimates of a labelled share from people's labels
and a judge's predictions (PPI++), Wilson's and normal intervals, percentile bootstrap
resampling over cases (plain, or paired by summing several per-case columns over the same
draws, drawn in blocks so a large run never holds its whole index matrix), and agreement
figures between a judge and people (Cohen's κ, the Mann-Whitney AUC), vectorised over
resamples. Cards, result tables, corrected intervals and the support judge's training script
all ask here, so a resample drawn with one seed is the same everywhere.

Prediction-powered inference (power-tuned: PPI++, Angelopoulos et al. 2023): a population of
units (a variant's statements or citations under one model) has a judge's
prediction ``f`` for every unit — its score in ``[0, 1]`` where it has one, else its 0/1
verdict — and a person's label ``y`` for a sample of them. The share ``θ`` of units people
call supported is estimated as::

    θ̂(λ) = λ · mean(f over all N units) + Σ w̃ᵢ (yᵢ − λ fᵢ)      (w̃: weights summing to 1)

``λ = 0`` is the labels alone; ``λ = 1`` is classic prediction-powered inference (the
judge's mean, rectified by its measured error on the labels). Any fixed ``λ`` leaves the
estimate unbiased; PPI++ takes the ``λ`` that minimises the estimated variance, clipped to
``[0, 1]``, so the variance is never above that of the labels alone (``λ = 0`` is among the
choices) and a useless judge costs nothing. When labels were drawn with unequal, known
probabilities ``πᵢ`` (a stratified or disagreement-first design), each weighs ``1/πᵢ``
(Hájek's ratio form of inverse-probability weighting, design-consistent); the variance is
the linearised one of that weighted mean. Intervals are normal approximations. Below
:data:`MIN_LABELS` labels, or when the estimated variance is zero, an estimate says
:attr:`Estimate.too_few` and carries Wilson's interval of the labels instead, which stays
valid at small n. Written from the papers' formulas in numpy (the authors' ``ppi_py``
needs numba, statsmodels and scikit-learn).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "MIN_LABELS",
    "MIN_UNITS",
    "Estimate",
    "EstimateMethod",
    "Population",
    "auc",
    "cohen_kappa",
    "difference",
    "kappa_of_counts",
    "labels_for_width",
    "labels_only",
    "normal_quantile",
    "percentile_interval",
    "ppi_difference",
    "ppi_mean",
    "resample_indices",
    "resampled_sums",
    "share_interval",
    "too_few_units",
    "wilson_interval",
]

MIN_UNITS = 30
"""Fewer units than this (claims of a card, units of a metric, labels of an estimate): an
interval over them says too little to print, and the figure says "too few units" instead (a
share shows Wilson's interval, valid at small n)."""

MIN_LABELS = MIN_UNITS
"""Fewer labels than this: an estimate's normal interval is not trusted (``too_few``)."""


def too_few_units(units: float, low: float, high: float) -> bool:
    """Whether an interval over ``units`` units is not worth printing: under
    :data:`MIN_UNITS` units, or zero width (every resample the same)."""
    return units < MIN_UNITS or low == high


def share_interval(value: float, units: float, low: float, high: float) -> tuple[float, float]:
    """The interval to show for a share ``value`` of ``units`` units whose resampled interval
    is ``(low, high)``: that one, unless :func:`too_few_units`; then Wilson's interval of the
    share (for a mean of values in ``[0, 1]`` its variance bound holds too), or NaN for a
    value outside ``[0, 1]``."""
    if not too_few_units(units, low, high):
        return (low, high)
    if not 0.0 <= value <= 1.0 or units <= 0:
        return (float("nan"), float("nan"))
    low, high = wilson_interval(value * units, units)
    return (min(low, value), max(high, value))  # holds the value despite rounding at 0 or 1


EstimateMethod = Literal["labels", "ppi"]

_ZERO = 1e-12
"""A standard error at or below this is zero (the weights' rounding leaves ~1e-17)."""


@dataclass(frozen=True)
class Estimate:
    """A share estimated from labels (and a judge), with its interval."""

    method: str
    """``labels`` (labels alone), ``ppi`` (labels and the judge) or ``difference``."""
    value: float
    low: float
    high: float
    se: float
    """The estimate's standard error (NaN when undefined)."""
    labels: int
    """Labelled units the estimate used."""
    tuning: float | None = None
    """PPI++'s λ (0: the judge was no help; 1: classic PPI); None for labels alone."""
    too_few: bool = False
    """Fewer than :data:`MIN_LABELS` labels, or a zero-width normal interval: ``low`` and
    ``high`` are then Wilson's interval of the labels (or NaN), never a zero-width one."""
    tunings: tuple[float, ...] = ()
    """A difference's λ of each side (:func:`ppi_difference`); empty otherwise."""

    @property
    def width(self) -> float:
        """``high − low``."""
        return self.high - self.low

    @property
    def too_few_reason(self) -> str:
        """Why the estimate is ``too_few``, in words ("" when it is not): fewer than
        :data:`MIN_LABELS` labels, or labels enough but no spread (every label alike, and
        for ``ppi`` every label equal to the judge's prediction), which gives a zero
        variance."""
        if not self.too_few:
            return ""
        if self.labels < MIN_LABELS:
            return f"{self.labels} labels, fewer than {MIN_LABELS}"
        return f"no spread among its {self.labels} labels, a zero variance"


def normal_quantile(confidence: float) -> float:
    """The standard normal quantile for a two-sided ``confidence`` interval."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    return _inverse_normal(0.5 + confidence / 2.0)


def _inverse_normal(p: float) -> float:
    """Φ⁻¹(p) by bisection on ``math.erf`` (60 halvings: exact to double precision)."""
    low, high = -40.0, 40.0
    for _ in range(100):
        middle = (low + high) / 2.0
        if 0.5 * (1.0 + math.erf(middle / math.sqrt(2.0))) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def wilson_interval(
    successes: float, trials: float, confidence: float = 0.95
) -> tuple[float, float]:
    """Wilson's score interval of a proportion (valid at small n; NaN for no trials).
    ``trials`` may be an effective sample size (weighted labels)."""
    if trials <= 0:
        return (float("nan"), float("nan"))
    z = normal_quantile(confidence)
    share = successes / trials
    centre = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = (
        z / (1 + z * z / trials) * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials**2))
    )
    return (max(0.0, centre - half), min(1.0, centre + half))


def _weights(
    labels: int, probabilities: ArrayLike | None, shares: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Normalised weights of the labelled units: their share in the target over their
    chance of being drawn."""
    chances = np.ones(labels) if probabilities is None else np.asarray(probabilities, dtype=float)
    if chances.shape != (labels,):
        raise ValueError(f"expected {labels} sampling probabilities, got shape {chances.shape}")
    if not np.all((chances > 0) & (chances <= 1)):
        raise ValueError("sampling probabilities must lie in (0, 1]")
    share = _shares(labels, shares)
    raw: NDArray[np.float64] = share / chances
    normalised: NDArray[np.float64] = raw / raw.sum()
    return normalised


def _shares(size: int, shares: ArrayLike | None) -> NDArray[np.float64]:
    """Each unit's weight in the target (None: equal), checked."""
    if shares is None:
        return np.ones(size)
    out = np.asarray(shares, dtype=float)
    if out.shape != (size,) or not np.all(out > 0):
        raise ValueError(f"expected {size} positive unit weights, got shape {out.shape}")
    return out


def _weighted_cov(
    w: NDArray[np.float64],
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    strata: NDArray[np.int64] | None = None,
) -> float:
    """The linearised (co)variance of weighted means of ``x`` and ``y``: with
    ``uᵢ = w̃ᵢ (xᵢ − x̄)`` and ``vᵢ`` alike, ``Σₕ nₕ/(nₕ − 1) Σᵢ (uᵢ − ūₕ)(vᵢ − v̄ₕ)`` within
    each stratum ``h`` (one stratum without ``strata``; equal weights: the sample
    covariance over n). A stratum of one label cannot be centred and adds ``uᵢvᵢ``."""
    n = len(w)
    if n < 2:
        return float("nan")
    u, v = w * (x - w @ x), w * (y - w @ y)
    if strata is None:
        return float(np.sum((u - u.mean()) * (v - v.mean())) * n / (n - 1))
    total = 0.0
    for stratum in np.unique(strata):
        inside = strata == stratum
        size = int(inside.sum())
        su, sv = u[inside], v[inside]
        if size == 1:
            total += float(su[0] * sv[0])
        else:
            total += float(np.sum((su - su.mean()) * (sv - sv.mean()))) * size / (size - 1)
    return total


def _strata(labels: int, strata: ArrayLike | None) -> NDArray[np.int64] | None:
    """The labels' strata as codes (None: one stratum)."""
    if strata is None:
        return None
    values = np.asarray(strata)
    if values.shape != (labels,):
        raise ValueError(f"expected {labels} strata, got shape {values.shape}")
    codes: NDArray[np.int64] = np.unique(values, return_inverse=True)[1].astype(np.int64)
    return codes


def _check_labels(labels: ArrayLike) -> NDArray[np.float64]:
    y = np.asarray(labels, dtype=float)
    if y.ndim != 1:
        raise ValueError("labels must be one-dimensional")
    if np.any(np.isnan(y)):
        raise ValueError("labels must not be NaN")
    return y


def labels_only(
    labels: ArrayLike,
    probabilities: ArrayLike | None = None,
    *,
    shares: ArrayLike | None = None,
    strata: ArrayLike | None = None,
    confidence: float = 0.95,
) -> Estimate:
    """The labelled share from the labels alone (weighted by ``1/probabilities`` when the
    labels were drawn with those chances; ``shares``: each labelled unit's weight in the
    target, and ``strata`` each label's stratum, as in :func:`ppi_mean`)."""
    y = _check_labels(labels)
    if len(y) == 0:
        return _empty("labels")
    w = _weights(len(y), probabilities, shares)
    value = float(w @ y)
    variance = _weighted_cov(w, y, y, _strata(len(y), strata))
    return _finish("labels", value, variance, y, w, lam=None, confidence=confidence)


def ppi_mean(
    labels: ArrayLike,
    labelled_predictions: ArrayLike,
    predictions: ArrayLike,
    probabilities: ArrayLike | None = None,
    *,
    shares: ArrayLike | None = None,
    labelled_shares: ArrayLike | None = None,
    strata: ArrayLike | None = None,
    confidence: float = 0.95,
    tuning: float | None = None,
) -> Estimate:
    """The labelled share from the labels and a judge's predictions (PPI++; module docs).

    ``labels`` and ``labelled_predictions``: per labelled unit, the person's 0/1 label and
    the judge's prediction; ``predictions``: the judge's prediction on every unit of the
    population (the labelled ones may be among them); ``probabilities``: each labelled
    unit's chance of being drawn (None: uniform); ``shares`` and ``labelled_shares``: each
    unit's weight in the target (a macro average weighs a unit by one over its answer's
    units; None: equal), so the target is the share-weighted mean of the labels;
    ``strata``: each labelled unit's stratum when the design drew a fixed number per
    stratum (the variance is then taken within strata); ``tuning``: a fixed λ instead of
    the power-tuned one."""
    y = _check_labels(labels)
    f = np.asarray(labelled_predictions, dtype=float)
    every = np.asarray(predictions, dtype=float)
    if f.shape != y.shape:
        raise ValueError(f"{len(y)} labels but {f.shape} labelled predictions")
    if len(y) == 0 or len(every) == 0:
        return _empty("ppi")
    w = _weights(len(y), probabilities, labelled_shares)
    c = _shares(len(every), shares)
    c = c / c.sum()
    judge_mean = float(c @ every)
    # The judge's mean over the population is a weighted mean too: its linearised variance.
    judge_variance = (
        float(np.sum(c * c * (every - judge_mean) ** 2)) * len(every) / (len(every) - 1)
        if len(every) > 1
        else 0.0
    )
    groups = _strata(len(y), strata)
    s_ff, s_yf, s_yy = (_weighted_cov(w, a, b, groups) for a, b in ((f, f), (y, f), (y, y)))
    lam = _tuned(s_yf, s_ff + judge_variance) if tuning is None else tuning
    value = float(lam * judge_mean + w @ (y - lam * f))
    variance = lam * lam * (judge_variance + s_ff) - 2 * lam * s_yf + s_yy
    return _finish("ppi", value, max(variance, 0.0), y, w, lam=lam, confidence=confidence)


def _tuned(covariance: float, variance: float) -> float:
    """PPI++'s λ = Cov(y, f) / Var(λ's term), clipped to [0, 1] (0 when undefined)."""
    if not math.isfinite(covariance) or not variance > 0:
        return 0.0
    return min(max(covariance / variance, 0.0), 1.0)


def _finish(
    method: str,
    value: float,
    variance: float,
    y: NDArray[np.float64],
    w: NDArray[np.float64],
    *,
    lam: float | None,
    confidence: float,
) -> Estimate:
    se = math.sqrt(variance) if math.isfinite(variance) and variance >= 0 else float("nan")
    if len(y) < MIN_LABELS or not se > _ZERO:
        effective = 1.0 / float(np.sum(w * w))  # Kish's effective sample size
        low, high = wilson_interval(float(w @ y) * effective, effective, confidence)
        return Estimate(method, value, low, high, se, len(y), lam, too_few=True)
    half = normal_quantile(confidence) * se
    return Estimate(method, value, value - half, value + half, se, len(y), lam)


def _empty(method: str) -> Estimate:
    nan = float("nan")
    return Estimate(method, nan, nan, nan, nan, 0, None, too_few=True)


def difference(first: Estimate, second: Estimate, confidence: float = 0.95) -> Estimate:
    """``first − second`` of two estimates made by the same estimator on two populations
    whose labels were drawn apart (independent samples: the variances add). The shared
    cases' common part is not subtracted out, so the interval is, if anything, wide.
    ``too_few`` when either side is."""
    value = first.value - second.value
    se = math.hypot(first.se, second.se)
    labels = min(first.labels, second.labels)
    nan = float("nan")
    if first.too_few or second.too_few or not se > _ZERO:
        return Estimate("difference", value, nan, nan, se, labels, too_few=True)
    half = normal_quantile(confidence) * se
    return Estimate("difference", value, value - half, value + half, se, labels)


@dataclass(frozen=True)
class Population:
    """One side of :func:`ppi_difference`: a variant's (or model's) judged units on the cases
    both sides share, and its own labels of a sample of them."""

    predictions: NDArray[np.float64]
    """The judge's prediction on every unit (its score, else its 0/1 verdict)."""
    shares: NDArray[np.float64]
    """Each unit's weight in the metric (so the metric is ``Σ shares · y``)."""
    cases: NDArray[np.int64]
    """Each unit's case, as codes both sides share (the pairing)."""
    labelled: NDArray[np.int64]
    """The labelled units, as positions in the arrays above."""
    labels: NDArray[np.float64]
    """The person's 0/1 label of each labelled unit."""
    probabilities: NDArray[np.float64] | None = None
    """Each label's chance of being drawn (None: uniform)."""
    strata: NDArray[np.int64] | None = None
    """Each label's stratum when the design drew a fixed number per stratum."""


@dataclass(frozen=True)
class _Side:
    """What a side contributes to the difference's variance, as a quadratic in its λ."""

    judged: float  # Σ c·f
    total: float  # Σ c
    rectified: tuple[float, float]  # the labels' weighted means of y and f
    moments: tuple[float, float, float]  # T²·(s_ff, s_yf, s_yy)
    per_case: NDArray[np.float64]  # Σ c·f per case code


def _side(side: Population, codes: int) -> _Side:
    f, c = np.asarray(side.predictions, dtype=float), np.asarray(side.shares, dtype=float)
    y = _check_labels(side.labels)
    at = np.asarray(side.labelled, dtype=np.int64)
    if at.shape != y.shape:
        raise ValueError(f"{len(y)} labels but {at.shape} labelled positions")
    w = _weights(len(y), side.probabilities, c[at])
    groups = _strata(len(y), side.strata)
    fl, total = f[at], float(c.sum())
    s_ff, s_yf, s_yy = (_weighted_cov(w, a, b, groups) for a, b in ((fl, fl), (y, fl), (y, y)))
    per_case = np.asarray(
        np.bincount(np.asarray(side.cases, dtype=np.int64), c * f, minlength=codes), dtype=float
    )
    return _Side(
        float(c @ f),
        total,
        (float(w @ y), float(w @ fl)),
        (total * total * s_ff, total * total * s_yf, total * total * s_yy),
        per_case,
    )


def ppi_difference(
    first: Population,
    second: Population,
    confidence: float = 0.95,
    tuning: tuple[float, float] | None = None,
) -> Estimate:
    """``second − first`` of a metric ``Σ c·y`` by PPI++ on two populations over the same
    cases (``docs/corrected-metrics.md``): the judged part ``λ₂·Σc f − λ₁·Σc f`` is paired
    over the cases (its variance is that of the per-case judged difference), each side's
    rectifier ``T·Σ w̃ (y − λ f)`` comes from its own labels (independent samples: their
    variances add). The λ pair minimises the estimated variance over ``[0, 1]²``, so it is
    never above that of the labels alone (``λ = (0, 0)``); ``tuning`` fixes it. ``too_few``
    (NaN interval) when either side has fewer than :data:`MIN_LABELS` labels or the variance
    is zero."""
    codes = int(max(np.max(first.cases, initial=-1), np.max(second.cases, initial=-1))) + 1
    labels = min(len(first.labels), len(second.labels))
    if labels == 0 or codes == 0:
        return _empty("ppi")
    one, two = _side(first, codes), _side(second, codes)
    cases = np.flatnonzero(_present(first, second, codes))
    g, h = one.per_case[cases], two.per_case[cases]
    k = len(cases)
    scale = k / (k - 1) if k > 1 else float("nan")
    v_one = float(np.sum((g - g.mean()) ** 2)) * scale
    v_two = float(np.sum((h - h.mean()) ** 2)) * scale
    c_12 = float(np.sum((g - g.mean()) * (h - h.mean()))) * scale

    def variance(a: float, b: float) -> float:
        judged = a * a * v_one + b * b * v_two - 2 * a * b * c_12
        s1, s2 = one.moments, two.moments
        rectifiers = (a * a * s1[0] - 2 * a * s1[1] + s1[2]) + (
            b * b * s2[0] - 2 * b * s2[1] + s2[2]
        )
        return judged + rectifiers

    lam = (
        tuning
        if tuning is not None
        else _tuned_pair(
            (v_one + one.moments[0], one.moments[1]),
            (v_two + two.moments[0], two.moments[1]),
            c_12,
            variance,
        )
    )
    a, b = lam
    value_one = a * one.judged + one.total * (one.rectified[0] - a * one.rectified[1])
    value_two = b * two.judged + two.total * (two.rectified[0] - b * two.rectified[1])
    value = value_two - value_one
    spread = variance(a, b)
    se = math.sqrt(spread) if math.isfinite(spread) and spread > 0 else float("nan")
    nan = float("nan")
    if labels < MIN_LABELS or not se > _ZERO:
        return Estimate("ppi", value, nan, nan, se, labels, too_few=True, tunings=(a, b))
    half = normal_quantile(confidence) * se
    return Estimate("ppi", value, value - half, value + half, se, labels, tunings=(a, b))


def _present(first: Population, second: Population, codes: int) -> NDArray[np.bool_]:
    """The case codes either side has a unit in."""
    seen = np.zeros(codes, dtype=bool)
    seen[np.asarray(first.cases, dtype=np.int64)] = True
    seen[np.asarray(second.cases, dtype=np.int64)] = True
    return seen


def _tuned_pair(
    first: tuple[float, float],
    second: tuple[float, float],
    coupling: float,
    variance: Callable[[float, float], float],
) -> tuple[float, float]:
    """The (λ₁, λ₂) in ``[0, 1]²`` that minimise the difference's variance, a convex quadratic
    ``a λ₁² + b λ₂² − 2 c λ₁λ₂ − 2 p λ₁ − 2 q λ₂`` (``first`` = (a, p), ``second`` = (b, q),
    ``coupling`` = c): its free minimum when it lies in the square, else the best point on
    the square's edges (each a clipped one-dimensional minimum)."""
    (a, p), (b, q) = first, second
    if not all(math.isfinite(x) for x in (a, p, b, q, coupling)):
        return (0.0, 0.0)

    def best(slope: float, curve: float) -> float:
        return min(max(slope / curve, 0.0), 1.0) if curve > 0 else 0.0

    candidates = [(0.0, 0.0)]
    det = a * b - coupling * coupling
    if det > 0:
        free = ((p * b + q * coupling) / det, (q * a + p * coupling) / det)
        if 0.0 <= free[0] <= 1.0 and 0.0 <= free[1] <= 1.0:
            candidates.append(free)
    for edge in (0.0, 1.0):
        candidates.append((edge, best(q + edge * coupling, b)))
        candidates.append((best(p + edge * coupling, a), edge))
    return min(candidates, key=lambda pair: variance(*pair))


def labels_for_width(
    estimate: Estimate, half_width: float = 0.05, confidence: float = 0.95
) -> int | None:
    """How many labels in all the estimate's design would need for ``±half_width``
    (the standard error shrinks as 1/√n); None when its standard error is unknown."""
    if not estimate.se > 0 or estimate.labels == 0:
        return None
    spread = estimate.se * math.sqrt(estimate.labels)
    return max(MIN_LABELS, math.ceil((normal_quantile(confidence) * spread / half_width) ** 2))


# Resampling: the percentile bootstrap over cases.

_BLOCK = 250_000
"""Case indices drawn at once by :func:`resampled_sums` (about 2 MB of int64)."""


def resample_indices(size: int, resamples: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``resamples`` × ``size`` indices drawn with replacement: one bootstrap resample a row.

    Drawing the rows in several calls gives the same numbers in the same order (numpy's
    generators hand out bounded integers one after another), which :func:`resampled_sums`
    relies on to draw in blocks."""
    draws: NDArray[np.int64] = rng.integers(0, size, size=(resamples, size))
    return draws


def resampled_sums(
    columns: ArrayLike, rng: np.random.Generator, resamples: int
) -> NDArray[np.float64]:
    """Per resample, the sum of each row of ``columns`` (one row per per-case quantity, one
    column per case) over cases drawn with replacement, the same cases for every row (so a
    ratio or a difference of rows is paired). Shape ``(rows, resamples)``.

    The draws are those of :func:`resample_indices` with ``rng``, taken a block of at most
    :data:`_BLOCK` indices at a time: 10,000 cases × 1,000 resamples never hold an 80 MB
    index matrix."""
    values = np.atleast_2d(np.asarray(columns, dtype=float))
    rows, count = values.shape
    sums = np.empty((rows, resamples))
    if count == 0:
        sums.fill(0.0)
        return sums
    block = max(1, _BLOCK // count)
    for start in range(0, resamples, block):
        stop = min(start + block, resamples)
        draws = resample_indices(count, stop - start, rng)
        for row in range(rows):
            sums[row, start:stop] = np.take(values[row], draws).sum(axis=1)
    return sums


def percentile_interval(samples: ArrayLike, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap ``samples`` (NaN samples dropped; NaN, NaN when
    none is left)."""
    values = np.asarray(samples, dtype=float)
    kept = values[~np.isnan(values)]
    if kept.size == 0:
        return (float("nan"), float("nan"))
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(kept, [tail, 100 - tail])
    return float(low), float(high)


# Agreement between a judge's verdicts (or scores) and people's labels.


def kappa_of_counts(
    true_yes: ArrayLike, false_yes: ArrayLike, false_no: ArrayLike, true_no: ArrayLike
) -> NDArray[np.float64]:
    """Cohen's κ from confusion counts (elementwise: one value, or one per resample); NaN
    when chance agreement is certain (both raters always say one thing)."""
    tp, fp, fn, tn = (np.asarray(c, dtype=float) for c in (true_yes, false_yes, false_no, true_no))
    n = tp + fp + fn + tn
    observed = (tp + tn) / n
    chance = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa: NDArray[np.float64] = np.where(
            chance < 1.0, (observed - chance) / (1.0 - chance), np.nan
        )
    return kappa


def cohen_kappa(truth: ArrayLike, verdict: ArrayLike) -> NDArray[np.float64]:
    """Cohen's κ of two yes/no raters along the last axis (see :func:`kappa_of_counts`)."""
    t, v = np.asarray(truth, dtype=bool), np.asarray(verdict, dtype=bool)
    return kappa_of_counts(
        np.sum(t & v, axis=-1),
        np.sum(~t & v, axis=-1),
        np.sum(t & ~v, axis=-1),
        np.sum(~t & ~v, axis=-1),
    )


def auc(truth: ArrayLike, score: ArrayLike) -> NDArray[np.float64]:
    """The Mann-Whitney AUC of ``score`` for ``truth`` along the last axis (ties count
    half); NaN without both classes."""
    from scipy.stats import rankdata  # scipy.stats takes a while to import; few callers need it

    t = np.asarray(truth, dtype=bool)
    positives = t.sum(axis=-1).astype(float)
    negatives = t.shape[-1] - positives
    ranks = rankdata(np.asarray(score, dtype=float), axis=-1)
    sum_ranks = np.sum(np.where(t, ranks, 0.0), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        value: NDArray[np.float64] = np.where(
            (positives > 0) & (negatives > 0),
            (sum_ranks - positives * (positives + 1) / 2) / (positives * negatives),
            np.nan,
        )
    return value
