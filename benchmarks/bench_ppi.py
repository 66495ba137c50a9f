"""Estimates from a run's own labels (issue #32, item 1), measured on known truth and printed.

1. Coverage and mean width of the 95% interval from labels and judge (``ppi``, PPI++) and
   from labels alone, at 50, 100 and 200 labels, with a uniform design and ``4 bins`` (four
   quartiles of the judge's score, the middle two sampled at twice the rate), for a useful
   judge (citelab's default ``lexical_trained``, its score), a near-useless one (random
   scores) and a badly wrong one (the default's score reversed).
   Known truth: WiCE's dev split (``../shared/testdata/wice/claim_dev.jsonl``: every claim
   has a human label; a sample plays the labels, all claims the run); without it a synthetic
   population (printed which).
2. Labels each design needs for ±0.05 (from the mean standard error at 100 labels, which
   shrinks as 1/√n).
3. The labeller's designs side by side (``label_queue(design=...)``): ``uniform`` and
   ``stratified`` (quantile bins of the judge's score, Neyman allocation by the spreads the
   scores predict, ``citelab.evals.labels._allocation``), PPI++ with the judge's score, for
   the useful and the near-useless judge: coverage and mean width at 50, 100 and 200
   labels, the labels each needs for a mean half-width of ±0.05 (searched: the smallest
   sample whose mean half-width is at most 0.05), and the bound theory gives for the
   stratified design's gain. Beside WiCE's claims, a large run: 10,000 units drawn from
   them with replacement (the judge's mean over the run then nearly exact).
4. The paired difference of two variants over the same cases (``ppi_difference``): its
   coverage and mean width beside the labels-alone difference (``λ = (0, 0)``), at 50, 100 and
   200 labels per variant; variant B answers a third of the cases (two units each) with
   units people call unsupported, each variant labels a uniform sample of its own units.
5. ``EvalResult.corrected(labels=...)`` on 10,000 scored answers (generated ALCE answers,
   the lexical judge; 200 labels), beside ``corrected()`` without labels.
6. What PPI++ reads as f: the default judge's score (what a run with labels records for
   citation recall) beside its 0/1 verdict (``score >= threshold``: what it reads for
   precision, or for a run scored without labels), same draws, uniform and ``4 bins``
   designs: coverage and mean width of the 95% interval at 50, 100 and 200 labels, and the
   width ratio.

Run: ``.venv/bin/python benchmarks/bench_ppi.py [--quick] [--designs | --f]``
(``--designs``: 3. alone; ``--f``: 6. alone).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from citelab.evals import label_pairs, score_answers
from citelab.evals._stats import (
    Population,
    labels_only,
    normal_quantile,
    ppi_difference,
    ppi_mean,
)
from citelab.evals.labels import LabelledPair, LabelSet
from citelab.evals.labels._allocation import allocate, bin_count, predicted_spreads, score_bins

ROOT = Path(__file__).resolve().parents[1]


def _population() -> tuple[str, np.ndarray, dict[str, np.ndarray]]:
    for base in (ROOT.parent, ROOT.parent.parent):
        path = base / "shared" / "testdata" / "wice" / "claim_dev.jsonl"
        if path.is_file():
            from citelab.evals.judges import build_judge
            from citelab.evals.labels import load_label_set

            labels = load_label_set(path)
            truth = np.array([pair.label for pair in labels.pairs], dtype=float)
            judge = build_judge("lexical_trained")
            score = np.array([judge.score(p.claim, "\n".join(p.evidence)) for p in labels.pairs])  # type: ignore[attr-defined]
            name = f"WiCE dev, {len(truth)} claims, {truth.mean():.3f} supported"
            break
    else:
        rng = np.random.default_rng(0)
        truth = (rng.random(2000) < 0.35).astype(float)
        score = np.clip(0.25 + 0.5 * truth + rng.normal(0, 0.2, 2000), 0, 1)
        name = "synthetic, 2000 units (WiCE's dev split not found)"
    rng = np.random.default_rng(1)
    judges = {
        "lexical_trained": score,
        "random": rng.random(len(score)),
        "reversed": 1.0 - score,
    }
    return name, truth, judges


def _draw(
    rng: np.random.Generator, design: str, score: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    if design == "uniform":
        return rng.choice(len(score), n, replace=False), None, None
    stratum = np.argsort(np.argsort(score, kind="stable"), kind="stable") * 4 // len(score)
    chosen, chances, strata = [], [], []
    for h, share in enumerate((1 / 6, 2 / 6, 2 / 6, 1 / 6)):
        members = np.flatnonzero(stratum == h)
        take = min(len(members), max(2, round(n * share)))
        chosen.append(rng.choice(members, take, replace=False))
        chances.append(np.full(take, take / len(members)))
        strata.append(np.full(take, h))
    return np.concatenate(chosen), np.concatenate(chances), np.concatenate(strata)


def coverage(truth: np.ndarray, judges: dict[str, np.ndarray], repetitions: int) -> None:
    target = truth.mean()
    print(f"{'judge':16} {'design':11} {'n':>4} {'cov ppi':>8} {'cov labels':>10} "
          f"{'width ppi':>9} {'width labels':>12} {'λ mean':>7}")  # fmt: skip
    needed: dict[tuple[str, str], tuple[float, float]] = {}
    for judge, score in judges.items():
        for design in ("uniform", "4 bins"):
            rng = np.random.default_rng(7)
            for n in (50, 100, 200):
                held = {"ppi": 0, "labels": 0}
                widths: dict[str, list[float]] = {"ppi": [], "labels": []}
                ses: dict[str, list[float]] = {"ppi": [], "labels": []}
                tunings = []
                for _ in range(repetitions):
                    sample, chances, strata = _draw(rng, design, score, n)
                    ppi = ppi_mean(truth[sample], score[sample], score, chances, strata=strata)
                    alone = labels_only(truth[sample], chances, strata=strata)
                    tunings.append(ppi.tuning or 0.0)
                    for e in (ppi, alone):
                        held[e.method] += e.low <= target <= e.high
                        widths[e.method].append(e.width)
                        ses[e.method].append(e.se)
                print(
                    f"{judge:16} {design:11} {n:>4} {held['ppi'] / repetitions:>8.3f} "
                    f"{held['labels'] / repetitions:>10.3f} {statistics.mean(widths['ppi']):>9.3f} "
                    f"{statistics.mean(widths['labels']):>12.3f} {statistics.mean(tunings):>7.2f}"
                )
                if n == 100:
                    needed[(judge, design)] = (
                        statistics.mean(ses["ppi"]), statistics.mean(ses["labels"])
                    )  # fmt: skip
    z = normal_quantile(0.95)
    print("\nlabels needed for ±0.05 (95%), from the mean standard error at 100 labels:")
    print(f"{'judge':16} {'design':11} {'ppi':>6} {'labels':>7}")
    for (judge, design), (se_ppi, se_labels) in needed.items():
        count = [math.ceil((z * se * math.sqrt(100) / 0.05) ** 2) for se in (se_ppi, se_labels)]
        print(f"{judge:16} {design:11} {count[0]:>6} {count[1]:>7}")


Plan = tuple[np.ndarray, list[int], np.ndarray] | None
"""The stratified design's plan: each unit's bin, the labels per bin, the bins' sizes."""


def _plan(design: str, score: np.ndarray, n: int) -> Plan:
    """The labeller's stratified design on one population (what ``label_queue`` draws)."""
    if design == "uniform":
        return None
    bins = bin_count(n, len(score))
    stratum = np.array(score_bins(score.tolist(), bins))
    sizes = np.bincount(stratum, minlength=bins)
    take = allocate(sizes.tolist(), predicted_spreads(score.tolist(), stratum.tolist(), bins), n)
    return stratum, take, sizes


def _labeller_draw(
    rng: np.random.Generator, plan: Plan, units: int, n: int
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    if plan is None:
        return rng.choice(units, n, replace=False), None, None
    stratum, take, sizes = plan
    chosen = [
        rng.choice(np.flatnonzero(stratum == h), t, replace=False) for h, t in enumerate(take)
    ]
    sample = np.concatenate(chosen)
    return sample, (np.array(take) / sizes)[stratum[sample]], stratum[sample]


def _half_widths(
    truth: np.ndarray, score: np.ndarray, design: str, n: int, repetitions: int, *, seed: int
) -> tuple[float, float]:
    """Mean half-width and coverage of PPI++'s 95% interval at ``n`` labels."""
    rng = np.random.default_rng(seed)
    target = truth.mean()
    plan = _plan(design, score, n)
    halves, held = [], 0
    for _ in range(repetitions):
        sample, chances, strata = _labeller_draw(rng, plan, len(truth), n)
        e = ppi_mean(truth[sample], score[sample], score, chances, strata=strata)
        halves.append(e.width / 2)
        held += e.low <= target <= e.high
    return statistics.mean(halves), held / repetitions


def _needed(
    truth: np.ndarray, score: np.ndarray, design: str, half: float, repetitions: int
) -> int | None:
    """The smallest sample whose mean half-width is at most ``half`` (bisection; the mean
    half-width falls with n), None when even all the units do not reach it."""
    low, high = 30, len(truth)
    if _half_widths(truth, score, design, high, repetitions, seed=3)[0] > half:
        return None
    while low < high:
        middle = (low + high) // 2
        if _half_widths(truth, score, design, middle, repetitions, seed=3)[0] <= half:
            high = middle
        else:
            low = middle + 1
    return low


def designs(truth: np.ndarray, judges: dict[str, np.ndarray], repetitions: int) -> None:
    # A large run beside WiCE's 349 claims: 10,000 units drawn from them with replacement
    # (the same labels and scores), where the judge's mean over the run is nearly exact.
    rng = np.random.default_rng(4)
    grown = rng.integers(0, len(truth), 10_000)
    populations = {
        f"{len(truth)} claims": (truth, judges),
        "10,000 drawn": (truth[grown], {k: v[grown] for k, v in judges.items()}),
    }
    print("\nthe labeller's designs, PPI++ with the judge's score (uniform | stratified):")
    print(f"{'population':13} {'judge':16} {'n':>4} {'cov unif':>8} {'cov strat':>9} "
          f"{'width unif':>10} {'width strat':>11} {'labels ratio':>12}")  # fmt: skip
    for population, (y, scores) in populations.items():
        for judge in ("lexical_trained", "random"):
            for n in (50, 100, 200):
                (hu, cu), (hs, cs) = (
                    _half_widths(y, scores[judge], d, n, repetitions, seed=9)
                    for d in ("uniform", "stratified")
                )
                print(f"{population:13} {judge:16} {n:>4} {cu:>8.3f} {cs:>9.3f} {2 * hu:>10.4f} "
                      f"{2 * hs:>11.4f} {(hu / hs) ** 2:>12.2f}")  # fmt: skip
    print("labels ratio: uniform's labels over stratified's for the same width (> 1: fewer)")
    print("\nlabels for a mean half-width of ±0.05 (95%), searched:")
    print(f"{'population':13} {'judge':16} {'uniform':>8} {'stratified':>10} {'fewer':>7}")
    for population, (y, scores) in populations.items():
        for judge in ("lexical_trained", "random"):
            counts = [
                _needed(y, scores[judge], d, 0.05, repetitions) for d in ("uniform", "stratified")
            ]
            u, st = counts
            fewer = f"{1 - st / u:.0%}" if u is not None and st is not None else "—"
            shown = [f"{c}" if c is not None else "not reached" for c in counts]
            print(f"{population:13} {judge:16} {shown[0]:>8} {shown[1]:>10} {fewer:>7}")
    print("\ntheory, per label, 10 score bins (σₕ: the label's SD in the bin, the truth's):")
    print(f"{'judge':16} {'uniform Var(y−λs)':>17} {'proportional ΣWσ²':>17} "
          f"{'Neyman (ΣWσ)²':>13}")  # fmt: skip
    for judge in ("lexical_trained", "random"):
        score = judges[judge]
        stratum = np.array(score_bins(score.tolist(), 10))
        weight = np.bincount(stratum, minlength=10) / len(score)
        sd = np.array([truth[stratum == h].std() for h in range(10)])
        c = np.cov(truth, score)
        rectifier = float(np.var(truth - min(max(c[0, 1] / c[1, 1], 0.0), 1.0) * score))
        print(f"{judge:16} {rectifier:>17.4f} {float(weight @ sd**2):>17.4f} "
              f"{float(weight @ sd) ** 2:>13.4f}")  # fmt: skip


def paired_coverage(truth: np.ndarray, judges: dict[str, np.ndarray], repetitions: int) -> None:
    units = len(truth)
    rng = np.random.default_rng(5)
    cases = np.arange(units) // 2
    changed = rng.random(units) < 1 / 3
    swap = np.where(changed, rng.choice(np.flatnonzero(truth == 0), units), np.arange(units))
    target = truth[swap].mean() - truth.mean()
    shares = np.full(units, 1.0 / units)
    print(f"\npaired difference B − A (true {target:+.3f}), each variant its own uniform labels:")
    print(f"{'judge':16} {'n':>4} {'cov ppi':>8} {'cov labels':>10} {'width ppi':>9} "
          f"{'width labels':>12}")  # fmt: skip
    for judge, score in judges.items():
        for n in (50, 100, 200):
            held = {"ppi": 0, "labels": 0}
            widths: dict[str, list[float]] = {"ppi": [], "labels": []}
            for _ in range(repetitions):
                a, b = (rng.choice(units, n, replace=False) for _ in range(2))
                first = Population(score, shares, cases, a, truth[a])
                second = Population(score[swap], shares, cases, b, truth[swap][b])
                for method, tuning in (("ppi", None), ("labels", (0.0, 0.0))):
                    e = ppi_difference(first, second, tuning=tuning)
                    held[method] += e.low <= target <= e.high
                    widths[method].append(e.width)
            print(
                f"{judge:16} {n:>4} {held['ppi'] / repetitions:>8.3f} "
                f"{held['labels'] / repetitions:>10.3f} {statistics.mean(widths['ppi']):>9.3f} "
                f"{statistics.mean(widths['labels']):>12.3f}"
            )


def corrected_timing(answers: int) -> None:
    rng = np.random.default_rng(3)
    rows = []
    for index in range(answers):
        claim = f"The museum number {index} opens at {index % 12 + 1} o'clock on weekdays"
        text = claim + "." if rng.random() < 0.6 else f"The ferry {index} leaves from pier {index}."
        rows.append({"question": f"When does museum {index} open?", "output": f"{claim} [1].",
                     "docs": [{"title": f"Page {index}", "text": text}]})  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "answers.json"
        path.write_text(json.dumps(rows), encoding="utf-8")
        began = time.perf_counter()
        result = score_answers(path, "alce", judge="lexical")
        scored = time.perf_counter() - began
    pairs = label_pairs(result).items[:200]
    labels = LabelSet.of(
        [LabelledPair(id=p.id, claim=p.claim, evidence=[p.passages[0].text],
                      label=bool(rng.random() < 0.6)) for p in pairs]
    )  # fmt: skip
    summary = result.summary()
    timings = {}
    for name, given in (("without labels", None), ("with 200 labels", labels)):
        runs = []
        for _ in range(3):
            began = time.perf_counter()
            result.corrected(summary=summary, labels=given)
            runs.append(time.perf_counter() - began)
        timings[name] = min(runs)
    print(f"\n{answers} answers scored in {scored:.1f} s; corrected(summary=...), best of 3:")
    for name, seconds in timings.items():
        print(f"  {name:16} {seconds * 1000:8.1f} ms")


def scores_or_verdicts(truth: np.ndarray, score: np.ndarray, repetitions: int) -> None:
    """PPI++ with the judge's score as f beside its 0/1 verdict, on the same draws; on the
    population and on 10,000 units drawn from it with replacement (a large run)."""
    from citelab.evals.judges import build_judge

    threshold = build_judge("lexical_trained").threshold  # type: ignore[attr-defined]
    drawn = np.random.default_rng(5).integers(0, len(truth), 10_000)
    print("\nPPI++ with the judge's score as f | with its 0/1 verdict (lexical_trained):")
    print(f"{'population':12} {'design':8} {'n':>4} {'cov score':>9} {'cov verdict':>11} "
          f"{'width score':>11} {'width verdict':>13} {'ratio':>6}")  # fmt: skip
    for population, index in ((f"{len(truth)} units", np.arange(len(truth))), ("10,000", drawn)):
        y, s = truth[index], score[index]
        verdict = (s >= threshold).astype(float)
        target = y.mean()
        for design in ("uniform", "4 bins"):
            rng = np.random.default_rng(13)
            for n in (50, 100, 200):
                held = {"score": 0, "verdict": 0}
                widths: dict[str, list[float]] = {"score": [], "verdict": []}
                for _ in range(repetitions):
                    sample, chances, strata = _draw(rng, design, s, n)
                    for name, f in (("score", s), ("verdict", verdict)):
                        e = ppi_mean(y[sample], f[sample], f, chances, strata=strata)
                        held[name] += e.low <= target <= e.high
                        widths[name].append(e.width)
                wide = {name: statistics.mean(values) for name, values in widths.items()}
                print(
                    f"{population:12} {design:8} {n:>4} {held['score'] / repetitions:>9.3f} "
                    f"{held['verdict'] / repetitions:>11.3f} {wide['score']:>11.4f} "
                    f"{wide['verdict']:>13.4f} {wide['score'] / wide['verdict']:>6.3f}"
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and answers")
    parser.add_argument(
        "--designs", action="store_true", help="only the labeller's designs side by side (3.)"
    )
    parser.add_argument(
        "--f", action="store_true", help="only the judge's score or verdict as f (6.)"
    )
    args = parser.parse_args()
    name, truth, judges = _population()
    repetitions = 300 if args.quick else 1000
    print(f"known truth: {name}; {repetitions} repetitions per line\n")
    if args.designs:
        designs(truth, judges, repetitions)
        return 0
    if args.f:
        scores_or_verdicts(truth, judges["lexical_trained"], repetitions)
        return 0
    coverage(truth, judges, repetitions)
    designs(truth, judges, repetitions)
    paired_coverage(truth, judges, repetitions)
    corrected_timing(2000 if args.quick else 10_000)
    scores_or_verdicts(truth, judges["lexical_trained"], repetitions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
