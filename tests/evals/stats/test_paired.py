"""The paired PPI++ difference of two variants over the same cases (``ppi_difference``):
its formulas on small cases, and the coverage of its interval on WiCE's dev split, where
every claim has a human label (a sample of each variant's units plays its labels).

WiCE is third-party data read from ``../shared/testdata/wice/`` (never copied here): the
coverage test skips with a message when it is absent.
"""

from __future__ import annotations

import numpy as np
import pytest

from citelab.evals._stats import Population, labels_only, ppi_difference


def _side(
    truth: np.ndarray, score: np.ndarray, cases: np.ndarray, sample: np.ndarray
) -> Population:
    return Population(
        predictions=score,
        shares=np.full(len(truth), 1.0 / len(truth)),
        cases=cases,
        labelled=sample,
        labels=truth[sample],
    )


def _synthetic(seed: int, units: int = 600) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = (rng.random(units) < 0.6).astype(float)
    score = np.clip(0.2 + 0.6 * truth + rng.normal(0, 0.15, units), 0, 1)
    return truth, score, np.arange(units) // 2


def test_no_tuning_is_the_difference_of_the_labels_alone() -> None:
    truth, score, cases = _synthetic(0)
    rng = np.random.default_rng(1)
    a, b = (rng.choice(len(truth), 80, replace=False) for _ in range(2))
    other = truth.copy()
    other[:100] = 0.0
    estimate = ppi_difference(
        _side(truth, score, cases, a), _side(other, score, cases, b), tuning=(0.0, 0.0)
    )
    first, second = labels_only(truth[a]), labels_only(other[b])
    assert estimate.value == pytest.approx(second.value - first.value)
    assert estimate.se == pytest.approx(np.hypot(first.se, second.se))


def test_power_tuning_is_never_wider_than_the_labels_alone() -> None:
    for seed in range(20):
        truth, score, cases = _synthetic(seed)
        rng = np.random.default_rng(seed + 100)
        noise = rng.random(len(score)) if seed % 2 else score  # a useless judge half the time
        a, b = (rng.choice(len(truth), 60, replace=False) for _ in range(2))
        first, second = _side(truth, noise, cases, a), _side(truth, noise, cases, b)
        tuned = ppi_difference(first, second)
        alone = ppi_difference(first, second, tuning=(0.0, 0.0))
        assert tuned.se <= alone.se + 1e-12
        assert all(0.0 <= lam <= 1.0 for lam in tuned.tunings)


def test_a_useful_judge_narrows_the_paired_difference() -> None:
    truth, score, cases = _synthetic(3)
    rng = np.random.default_rng(4)
    a, b = (rng.choice(len(truth), 100, replace=False) for _ in range(2))
    first, second = _side(truth, score, cases, a), _side(truth, score, cases, b)
    tuned = ppi_difference(first, second)
    # Identical judged units: the paired judged part cancels, the judge's error is rectified.
    assert tuned.width < 0.8 * ppi_difference(first, second, tuning=(0.0, 0.0)).width
    assert tuned.tunings[0] > 0.5
    assert tuned.tunings[1] > 0.5


def test_too_few_labels_on_a_side_gives_no_interval() -> None:
    truth, score, cases = _synthetic(5)
    estimate = ppi_difference(
        _side(truth, score, cases, np.arange(100)), _side(truth, score, cases, np.arange(10))
    )
    assert estimate.too_few
    assert estimate.labels == 10
    assert np.isnan(estimate.low)
    assert np.isnan(estimate.high)


@pytest.mark.parametrize("judge", ["lexical_trained", "random", "reversed"])
def test_a_nominal_95_paired_interval_holds_the_true_difference_in_93_percent(
    wice_scored: tuple[np.ndarray, np.ndarray], judge: str
) -> None:
    # Variant A answers each case (two WiCE claims) with its claims; variant B gives the same
    # answers except in a third of the cases, where it answers with claims people call
    # unsupported. Each variant labels a sample of its own units.
    truth, score = wice_scored
    rng = np.random.default_rng(["lexical_trained", "random", "reversed"].index(judge))
    f = {"lexical_trained": score, "random": rng.random(len(score)), "reversed": 1 - score}[judge]
    units = len(truth)
    cases = np.arange(units) // 2
    changed = rng.random(units) < 1 / 3
    unsupported = np.flatnonzero(truth == 0)
    swap = np.where(changed, rng.choice(unsupported, units), np.arange(units))
    target = truth[swap].mean() - truth.mean()
    assert abs(target) > 0.05
    repetitions = 600
    for n in (50, 100, 200):
        held = 0
        for _ in range(repetitions):
            a, b = (rng.choice(units, n, replace=False) for _ in range(2))
            estimate = ppi_difference(
                _side(truth, f, cases, a), _side(truth[swap], f[swap], cases, b)
            )
            held += estimate.low <= target <= estimate.high
        assert held / repetitions >= 0.93, (judge, n, held / repetitions)
