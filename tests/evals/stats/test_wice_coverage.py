"""Coverage of the estimators' intervals on WiCE's dev split, whose every claim has a human
label: a sample of the claims plays the labels, all of them the run, and the truth is the
share people call supported. Judges: citelab's default (``lexical_trained``, its score),
a near-useless one (random scores) and a badly wrong one (the default's score reversed).
Designs: uniform, four strata of the score sampled at set rates, and the labeller's
stratified design (score bins, Neyman allocation). PPI++ reads the judge's score as f (what a
run with labels records for citation recall), and, for the default judge, its 0/1 verdict
(what it reads for precision, or for a run scored without labels).

WiCE is third-party data read from ``../shared/testdata/wice/`` (never copied here): the
test skips with a message when it is absent.
"""

from __future__ import annotations

import numpy as np
import pytest

from citelab.evals._stats import labels_only, ppi_mean
from citelab.evals.labels._allocation import allocate, bin_count, predicted_spreads, score_bins


@pytest.fixture(scope="module")
def wice(wice_scored: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    truth, score = wice_scored
    rng = np.random.default_rng(11)
    judges = {"lexical_trained": score, "random": rng.random(len(score)), "reversed": 1 - score}
    return truth, judges


def _verdicts(score: np.ndarray) -> np.ndarray:
    from citelab.evals.judges import build_judge

    threshold = build_judge("lexical_trained").threshold  # type: ignore[attr-defined]
    return (score >= threshold).astype(float)


def _stratified(
    rng: np.random.Generator, score: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Four strata by the judge's score rank, the two middle ones sampled at twice the rate."""
    stratum = np.argsort(np.argsort(score, kind="stable"), kind="stable") * 4 // len(score)
    chosen, chances, strata = [], [], []
    for h, share in enumerate((1 / 6, 2 / 6, 2 / 6, 1 / 6)):
        members = np.flatnonzero(stratum == h)
        take = min(len(members), max(2, round(n * share)))
        chosen.append(rng.choice(members, take, replace=False))
        chances.append(np.full(take, take / len(members)))
        strata.append(np.full(take, h))
    return np.concatenate(chosen), np.concatenate(chances), np.concatenate(strata)


def _neyman(
    rng: np.random.Generator, score: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The labeller's stratified design: quantile bins of the score, Neyman allocation by the
    spreads the scores predict (``citelab.evals.labels._allocation``)."""
    bins = bin_count(n, len(score))
    stratum = np.array(score_bins(score.tolist(), bins))
    sizes = np.bincount(stratum, minlength=bins)
    take = allocate(sizes.tolist(), predicted_spreads(score.tolist(), stratum.tolist(), bins), n)
    chosen = [rng.choice(np.flatnonzero(stratum == h), take[h], replace=False) for h in range(bins)]
    sample = np.concatenate(chosen)
    return sample, (np.array(take) / sizes)[stratum[sample]], stratum[sample]


@pytest.mark.parametrize("design", ["uniform", "stratified", "neyman"])
@pytest.mark.parametrize(
    "judge", ["lexical_trained", "random", "reversed", "lexical_trained verdicts"]
)
def test_a_nominal_95_interval_holds_the_truth_in_93_percent(
    wice: tuple[np.ndarray, dict[str, np.ndarray]], judge: str, design: str
) -> None:
    truth, judges = wice
    name, _, f = judge.partition(" ")
    score = judges[name]  # the design's strata: the judge's score
    predicted = _verdicts(score) if f == "verdicts" else score
    target = truth.mean()
    rng = np.random.default_rng(["lexical_trained", "random", "reversed"].index(name))
    repetitions = 600
    for n in (50, 100, 200):
        held = {"ppi": 0, "labels": 0}
        for _ in range(repetitions):
            if design == "uniform":
                sample, chances, strata = rng.choice(len(truth), n, replace=False), None, None
            elif design == "stratified":
                sample, chances, strata = _stratified(rng, score, n)
            else:
                sample, chances, strata = _neyman(rng, score, n)
            for estimate in (
                ppi_mean(truth[sample], predicted[sample], predicted, chances, strata=strata),
                labels_only(truth[sample], chances, strata=strata),
            ):
                held[estimate.method] += estimate.low <= target <= estimate.high
        for method, count in held.items():
            assert count / repetitions >= 0.93, (judge, design, n, method, count / repetitions)
