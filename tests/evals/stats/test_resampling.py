"""The bootstrap and agreement figures of citelab.evals._stats: the blocked draws are those of
one index matrix, and κ and AUC agree with scikit-learn's independent implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from citelab.evals import _stats
from citelab.evals._stats import (
    auc,
    cohen_kappa,
    kappa_of_counts,
    percentile_interval,
    resample_indices,
    resampled_sums,
)


def test_blocked_sums_are_the_sums_over_one_index_matrix() -> None:
    cases = 3001  # odd, and several blocks of rows (250,000 // 3001 = 83 rows a block)
    columns = np.random.default_rng(7).random((3, cases))
    sums = resampled_sums(columns, np.random.default_rng(1), 200)
    draws = resample_indices(cases, 200, np.random.default_rng(1))
    assert _stats._BLOCK // cases < 200
    for row in range(3):
        np.testing.assert_array_equal(sums[row], columns[row][draws].sum(axis=1))


def test_blocked_sums_leave_the_generator_where_one_draw_does() -> None:
    blocked, whole = np.random.default_rng(3), np.random.default_rng(3)
    resampled_sums(np.ones((1, 5001)), blocked, 120)
    resample_indices(5001, 120, whole)
    assert blocked.random() == whole.random()


def test_the_rows_are_paired_on_the_same_cases() -> None:
    values = np.arange(50, dtype=float)
    sums = resampled_sums([values, values], np.random.default_rng(0), 100)
    np.testing.assert_array_equal(sums[0], sums[1])
    assert len(set(sums[0])) > 1


def test_no_cases_sum_to_zero() -> None:
    assert resampled_sums(np.empty((2, 0)), np.random.default_rng(0), 4).tolist() == [[0.0] * 4] * 2


def test_percentile_interval_drops_nan_and_is_nan_without_samples() -> None:
    samples = np.array([*range(101), math.nan], dtype=float)
    assert percentile_interval(samples) == pytest.approx((2.5, 97.5))
    assert percentile_interval(samples, 0.5) == pytest.approx((25.0, 75.0))
    low, high = percentile_interval(np.array([math.nan]))
    assert math.isnan(low)
    assert math.isnan(high)


def test_kappa_and_auc_agree_with_scikit_learn() -> None:
    rng = np.random.default_rng(11)
    for _ in range(20):
        truth = rng.random(60) < 0.4
        score = np.round(rng.random(60) + 0.3 * truth, 1)  # rounded: ties
        verdict = score >= 0.6
        assert float(cohen_kappa(truth, verdict)) == pytest.approx(
            cohen_kappa_score(truth, verdict), abs=1e-12
        )
        assert float(auc(truth, score)) == pytest.approx(roc_auc_score(truth, score), abs=1e-12)


def test_agreement_figures_run_along_the_last_axis() -> None:
    truth = np.array([[True, False, True, False], [True, True, False, False]])
    score = np.array([[0.9, 0.1, 0.8, 0.2], [0.1, 0.2, 0.8, 0.9]])
    assert auc(truth, score).tolist() == [1.0, 0.0]
    assert cohen_kappa(truth, score >= 0.5).tolist() == [1.0, -1.0]


def test_undefined_agreement_is_nan() -> None:
    assert math.isnan(float(kappa_of_counts(3, 0, 0, 0)))  # both raters always say yes
    assert math.isnan(float(auc([True, True], [0.1, 0.2])))  # one class only
    assert float(kappa_of_counts(2, 2, 0, 0)) == 0.0  # a judge that always says yes
