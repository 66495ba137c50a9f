"""The estimators of citelab.evals._stats: formulas on small cases, and coverage of their
intervals on synthetic data whose truth is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from citelab.evals._stats import (
    MIN_LABELS,
    difference,
    labels_for_width,
    labels_only,
    normal_quantile,
    ppi_mean,
    wilson_interval,
)


def test_normal_quantile_is_the_familiar_one() -> None:
    assert normal_quantile(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert normal_quantile(0.9) == pytest.approx(1.644854, abs=1e-6)


def test_labels_alone_is_the_sample_share_with_its_standard_error() -> None:
    y = np.array([1.0] * 24 + [0.0] * 16)
    estimate = labels_only(y)
    assert estimate.value == pytest.approx(0.6)
    assert estimate.se == pytest.approx(math.sqrt(np.var(y, ddof=1) / 40))
    assert not estimate.too_few
    assert estimate.low == pytest.approx(0.6 - 1.959964 * estimate.se, abs=1e-6)


def test_weights_undo_an_unequal_design() -> None:
    # Half the labels from a stratum sampled at 1 in 10, half from one sampled at 1 in 2:
    # the first stands for five times as many units.
    y = np.array([1.0] * 20 + [0.0] * 20)
    chances = np.array([0.1] * 20 + [0.5] * 20)
    assert labels_only(y, chances).value == pytest.approx(5 / 6)


def test_few_labels_say_so_and_give_wilsons_interval() -> None:
    estimate = labels_only([1.0, 1.0, 1.0])
    assert estimate.too_few
    assert (estimate.low, estimate.high) == pytest.approx(wilson_interval(3, 3))
    assert estimate.width > 0.3  # never the zero-width [1.000, 1.000]


def test_a_zero_width_interval_is_too_few_even_with_many_labels() -> None:
    estimate = labels_only([1.0] * 60)
    assert estimate.too_few
    assert estimate.low < 0.97
    assert estimate.high == pytest.approx(1.0)


def test_too_few_says_which_of_its_two_reasons_holds() -> None:
    assert labels_only([1.0, 0.0] * 20).too_few_reason == ""
    assert labels_only([1.0, 0.0, 1.0]).too_few_reason == "3 labels, fewer than 30"
    assert (
        labels_only([1.0] * 60).too_few_reason == "no spread among its 60 labels, a zero variance"
    )


def test_ppi_with_a_perfect_judge_has_the_judges_precision() -> None:
    rng = np.random.default_rng(1)
    every = (rng.random(5000) < 0.3).astype(float)
    sample = rng.choice(5000, 100, replace=False)
    y = every[sample]
    estimate = ppi_mean(y, every[sample], every)
    alone = labels_only(y)
    assert estimate.tuning == pytest.approx(1.0, abs=0.05)
    assert estimate.value == pytest.approx(every.mean(), abs=0.005)
    assert estimate.width < alone.width / 4


def test_ppi_never_has_more_variance_than_the_labels_alone() -> None:
    rng = np.random.default_rng(2)
    for _ in range(200):
        every = rng.random(500)
        sample = rng.choice(500, 40, replace=False)
        y = (rng.random(40) < 0.5).astype(float)  # labels unrelated to the judge
        assert ppi_mean(y, every[sample], every).se <= labels_only(y).se + 1e-12


def test_a_wrong_judge_gets_no_weight() -> None:
    rng = np.random.default_rng(3)
    truth = (rng.random(1000) < 0.4).astype(float)
    wrong = 1.0 - truth  # always the opposite
    sample = rng.choice(1000, 80, replace=False)
    estimate = ppi_mean(truth[sample], wrong[sample], wrong)
    assert estimate.tuning == 0.0
    assert estimate.value == pytest.approx(labels_only(truth[sample]).value)


def test_difference_adds_the_variances() -> None:
    a = labels_only([1.0] * 30 + [0.0] * 10)
    b = labels_only([1.0] * 20 + [0.0] * 20)
    gap = difference(a, b)
    assert gap.value == pytest.approx(0.25)
    assert gap.se == pytest.approx(math.hypot(a.se, b.se))
    assert gap.low < 0.25 < gap.high


def test_labels_for_width_scales_with_the_square() -> None:
    estimate = labels_only([1.0] * 50 + [0.0] * 50)
    needed = labels_for_width(estimate, 0.05)
    assert needed is not None
    assert 370 <= needed <= 400  # 1.96² · 0.25 / 0.05² ≈ 388


def test_bad_probabilities_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        labels_only([1.0, 0.0], [0.5, 0.0])
    with pytest.raises(ValueError, match="2 sampling probabilities"):
        labels_only([1.0, 0.0], [0.5])


_JUDGES = ["useful", "useless", "wrong"]


def _population(
    rng: np.random.Generator, judge: str, size: int = 600
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    truth = (rng.random(size) < 0.35).astype(float)
    if judge == "useful":
        score = np.clip(0.25 + 0.5 * truth + rng.normal(0, 0.2, size), 0, 1)
    elif judge == "useless":
        score = rng.random(size)
    else:  # badly wrong: confident and mostly inverted
        score = np.where(rng.random(size) < 0.8, 1.0 - truth, truth)
    return truth, score


def _stratified(
    rng: np.random.Generator, score: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels drawn within four judge-score strata, the middle ones at twice the rate."""
    ranks = np.argsort(np.argsort(score, kind="stable"), kind="stable")
    stratum = ranks * 4 // len(score)
    share = np.array([1.0, 2.0, 2.0, 1.0]) / 6.0
    chosen, chances, strata = [], [], []
    for h in range(4):
        members = np.flatnonzero(stratum == h)
        take = max(2, round(n * share[h]))
        chosen.append(rng.choice(members, take, replace=False))
        chances.append(np.full(take, take / len(members)))
        strata.append(np.full(take, h))
    return np.concatenate(chosen), np.concatenate(chances), np.concatenate(strata)


@pytest.mark.parametrize("design", ["uniform", "stratified"])
@pytest.mark.parametrize("judge", _JUDGES)
def test_intervals_cover_the_known_truth(judge: str, design: str) -> None:
    rng = np.random.default_rng([_JUDGES.index(judge), len(design)])
    repetitions = 700
    for n in (50, 100, 200):
        held = {"ppi": 0, "labels": 0}
        for _ in range(repetitions):
            truth, score = _population(rng, judge)
            if design == "uniform":
                sample, chances, strata = rng.choice(len(truth), n, replace=False), None, None
            else:
                sample, chances, strata = _stratified(rng, score, n)
            target = truth.mean()
            for estimate in (
                ppi_mean(truth[sample], score[sample], score, chances, strata=strata),
                labels_only(truth[sample], chances, strata=strata),
            ):
                held[estimate.method] += estimate.low <= target <= estimate.high
        for method, count in held.items():
            assert count / repetitions >= 0.93, (judge, design, n, method, count / repetitions)


def test_min_labels_is_thirty() -> None:
    assert MIN_LABELS == 30


def test_a_stratified_designs_weights_give_the_stratified_estimate_and_its_variance() -> None:
    # Strata of 200, 100 and 50 units with 10, 20 and 15 labels: weighing each label by
    # Nₕ/nₕ is Σ Wₕ·[λ·F̄ₕ + mean over h's labels of (y − λf)], and with strata= its variance
    # is Σ Wₕ² s²ₕ(y − λf)/nₕ plus λ² times the judge's mean's variance.
    rng = np.random.default_rng(8)
    sizes, takes, lam = (200, 100, 50), (10, 20, 15), 0.4
    f_all = [rng.random(size) * (h + 1) / 3 for h, size in enumerate(sizes)]
    y_all = [(rng.random(size) < f).astype(float) for size, f in zip(sizes, f_all, strict=True)]
    picked = [
        rng.choice(size, take, replace=False) for size, take in zip(sizes, takes, strict=True)
    ]
    y = np.concatenate([y_all[h][at] for h, at in enumerate(picked)])
    f = np.concatenate([f_all[h][at] for h, at in enumerate(picked)])
    chances = np.concatenate([np.full(t, t / n) for t, n in zip(takes, sizes, strict=True)])
    strata = np.concatenate([np.full(t, h) for h, t in enumerate(takes)])
    every = np.concatenate(f_all)
    shares = np.array(sizes) / sum(sizes)
    rectified = [y_all[h][at] - lam * f_all[h][at] for h, at in enumerate(picked)]
    value = sum(
        w * (lam * fh.mean() + r.mean()) for w, fh, r in zip(shares, f_all, rectified, strict=True)
    )
    variance = sum(
        w * w * r.var(ddof=1) / len(r) for w, r in zip(shares, rectified, strict=True)
    ) + lam * lam * every.var(ddof=1) / len(every)
    estimate = ppi_mean(y, f, every, chances, strata=strata, tuning=lam)
    assert estimate.value == pytest.approx(value)
    assert estimate.se**2 == pytest.approx(variance)
