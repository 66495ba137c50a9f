"""The figures of a judge card: agreement figures from a confusion matrix, the AUC of a
score and percentile bootstrap intervals over claims (κ, AUC, resampling and intervals from
:mod:`citelab.evals._stats`), and the threshold sweep.

Everything is computed from four counts per bootstrap resample (vectorised over resamples),
so a thousand resamples of a few hundred claims cost little. Undefined values (a share of
nothing, κ when both raters always say one thing) are NaN here and ``None`` in a card.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from citelab.evals._stats import auc, kappa_of_counts, percentile_interval, resample_indices
from citelab.evals.cards._card_schema import (
    AgreementFigures,
    Confusion,
    Estimate,
    Rate,
    SweepPoint,
)

__all__ = ["Claims", "agreement", "bootstrap_draws", "difference", "sweep"]

_SWEEP_POINTS = 201


@dataclass(frozen=True)
class Claims:
    """The claims of a label set as the judge saw them: label, verdict and (maybe) score."""

    truth: np.ndarray
    verdict: np.ndarray
    score: np.ndarray | None = None

    def take(self, index: np.ndarray) -> Claims:
        score = None if self.score is None else self.score[index]
        return Claims(self.truth[index], self.verdict[index], score)

    def __len__(self) -> int:
        return len(self.truth)


def bootstrap_draws(size: int, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` × ``size`` claim indices drawn with replacement (seeded)."""
    return resample_indices(size, resamples, np.random.default_rng(seed))


def _counts(truth: np.ndarray, verdict: np.ndarray) -> dict[str, np.ndarray]:
    """The confusion counts along the last axis (one value, or one per resample)."""
    return {
        "tp": np.sum(truth & verdict, axis=-1),
        "fp": np.sum(~truth & verdict, axis=-1),
        "fn": np.sum(truth & ~verdict, axis=-1),
        "tn": np.sum(~truth & ~verdict, axis=-1),
    }


def _share(count: np.ndarray, of: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(of > 0, count / np.maximum(of, 1), np.nan)


def _f1(hit: np.ndarray, wrong: np.ndarray, missed: np.ndarray) -> np.ndarray:
    """F1 of one class; 1 when neither the labels nor the verdicts have that class."""
    denominator = 2 * hit + wrong + missed
    return np.where(denominator > 0, 2 * hit / np.maximum(denominator, 1), 1.0)


def _figures(c: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    tp, fp, fn, tn = (c[k].astype(float) for k in ("tp", "fp", "fn", "tn"))
    n = tp + fp + fn + tn
    observed = (tp + tn) / n
    return {
        "says_yes": (tp + fp) / n,
        "accuracy": observed,
        "sensitivity": _share(tp, tp + fn),
        "specificity": _share(tn, tn + fp),
        "ppv": _share(tp, tp + fp),
        "npv": _share(tn, tn + fn),
        "macro_f1": (_f1(tp, fp, fn) + _f1(tn, fn, fp)) / 2,
        "kappa": kappa_of_counts(tp, fp, fn, tn),
    }


def _none(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _interval(samples: np.ndarray) -> tuple[float | None, float | None]:
    low, high = percentile_interval(samples)
    return _none(low), _none(high)


def _estimate(value: float, samples: np.ndarray) -> Estimate:
    low, high = _interval(samples)
    return Estimate(value=_none(value), low=low, high=high)


_RATE_COUNTS = {
    "says_yes": (("tp", "fp"), ("tp", "fp", "fn", "tn")),
    "accuracy": (("tp", "tn"), ("tp", "fp", "fn", "tn")),
    "sensitivity": (("tp",), ("tp", "fn")),
    "specificity": (("tn",), ("tn", "fp")),
    "ppv": (("tp",), ("tp", "fp")),
    "npv": (("tn",), ("tn", "fn")),
}


def agreement(claims: Claims, draws: np.ndarray) -> AgreementFigures:
    """The figures of ``claims`` with intervals over the resamples ``draws`` (indices)."""
    counts = _counts(claims.truth, claims.verdict)
    point = {k: float(v) for k, v in _figures(counts).items()}
    samples = _figures(_counts(claims.truth[draws], claims.verdict[draws]))
    rates: dict[str, Rate] = {}
    for name, (counted, of) in _RATE_COUNTS.items():
        low, high = _interval(samples[name])
        rates[name] = Rate(
            value=_none(point[name]),
            low=low,
            high=high,
            count=int(sum(counts[k] for k in counted)),
            of=int(sum(counts[k] for k in of)),
        )
    area = None
    if claims.score is not None:
        value = float(auc(claims.truth, claims.score))
        area = _estimate(value, auc(claims.truth[draws], claims.score[draws]))
    return AgreementFigures(
        claims=len(claims),
        supported=int(claims.truth.sum()),
        confusion=Confusion(
            true_yes=int(counts["tp"]),
            false_yes=int(counts["fp"]),
            false_no=int(counts["fn"]),
            true_no=int(counts["tn"]),
        ),
        macro_f1=_estimate(point["macro_f1"], samples["macro_f1"]),
        kappa=_estimate(point["kappa"], samples["kappa"]),
        auc=area,
        **rates,
    )


def difference(first: Claims, second: Claims, draws: np.ndarray, figure: str) -> Estimate:
    """``figure`` (``kappa`` or ``auc``) of ``first`` minus ``second`` on the same claims,
    with a paired interval (each resample draws the same claims for both)."""

    def values(claims: Claims, index: np.ndarray | slice) -> np.ndarray:
        truth = claims.truth[index]
        if figure == "auc":
            assert claims.score is not None
            return auc(truth, claims.score[index])
        return _figures(_counts(truth, claims.verdict[index]))[figure]

    whole = slice(None)
    value = float(values(first, whole) - values(second, whole))
    return _estimate(value, values(first, draws) - values(second, draws))


def sweep(truth: np.ndarray, score: np.ndarray, extra: float | None) -> list[SweepPoint]:
    """The figures at each distinct score (by quantile when there are many) and at ``extra``."""
    distinct = np.unique(score)
    if distinct.size > _SWEEP_POINTS:
        distinct = np.unique(np.quantile(distinct, np.linspace(0, 1, _SWEEP_POINTS)))
    thresholds = distinct if extra is None else np.unique(np.append(distinct, extra))
    verdicts = score[np.newaxis, :] >= thresholds[:, np.newaxis]
    figures = _figures(_counts(truth[np.newaxis, :], verdicts))
    return [
        SweepPoint(
            threshold=float(threshold),
            says_yes=float(figures["says_yes"][i]),
            sensitivity=_none(figures["sensitivity"][i]),
            specificity=_none(figures["specificity"][i]),
            accuracy=float(figures["accuracy"][i]),
            macro_f1=float(figures["macro_f1"][i]),
            kappa=_none(figures["kappa"][i]),
        )
        for i, threshold in enumerate(thresholds)
    ]
