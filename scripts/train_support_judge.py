"""Train the offline support judge ``lexical_trained`` and print its cross-validated figures.

Reads WiCE's **dev** split (oracle chunks; never the test split) from ``../shared/testdata/wice/``
and citelab's own labelled set ``fixtures/judges/support_labels.jsonl``, fits a logistic
regression over the features of :mod:`citelab.evals.judges._support_model`, and writes the
parameters with their provenance, figures and licence notes to
``src/citelab/evals/judges/data/support_model.json``.

Target: "fully supported" (WiCE ``supported``) against the rest (``partially_supported``,
``not_supported``). WiCE's protocol: a claim's score is the best over its (about three) oracle
chunks, so a claim is one unit everywhere: folds split claims, never chunks of one claim.

Figures are out of fold, from cross-validation repeated over ``--seeds`` shuffles (stratified
5-fold over claims and pairs); each fold's decision threshold is chosen by an inner
cross-validation inside its training part (maximising Cohen's κ on WiCE claims), never on the
fold it is scored on. ``--select`` also runs the feature selection (forward, by inner-CV AUC on
WiCE claims) nested inside each outer fold, so its figure counts the selection too. The shipped
threshold is the median over seeds of the threshold that maximises κ on the out-of-fold scores.

Usage (from the repository root)::

    .venv/bin/python scripts/train_support_judge.py [--seeds 10] [--select] [--out FILE]
    .venv/bin/python scripts/train_support_judge.py --fit-only --out /tmp/model.json
    .venv/bin/python scripts/train_support_judge.py --oof-scores /tmp/oof.json
    .venv/bin/python scripts/train_support_judge.py --seeds 1 --resamples 20 --out /tmp/m.json
    .venv/bin/python scripts/train_support_judge.py --fingerprint-only

Beside the parameter file it writes ``<stem>.training.json``: the keys of the training claims
(a short hash of each claim's normalised text; no text), by which a judge card finds labels the
judge was trained on even in another file. ``--fingerprint-only`` writes just that file for the
parameter file ``--out`` names, from the training files its provenance names (their sha256
must match), without training again.

``--oof-scores FILE`` also writes each WiCE dev claim's out-of-fold score and verdict (seed 0:
scored by a model trained without that claim), the input a judge card on WiCE dev needs.

Deterministic: the same data, seed list and library versions give the same file (but its date).
Needs scikit-learn (a dev dependency) for the fits; κ, AUC and the bootstrap's draws are
:mod:`citelab.evals._stats`', as a card's are. The judge itself needs only the standard library.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

from citelab.evals import LexicalJudge
from citelab.evals._stats import auc, cohen_kappa, resample_indices
from citelab.evals.judges._support_model import (
    DEFAULT_MODEL,
    FEATURES,
    FEATURES_VERSION,
    MODEL_FORMAT,
    support_features,
)
from citelab.evals.judges._training_data import claim_key, fingerprint_document, fingerprint_path

ROOT = Path(__file__).resolve().parents[1]
WICE = ROOT.parent / "shared" / "testdata" / "wice"
OWN = ROOT / "fixtures" / "judges" / "support_labels.jsonl"

#: The shipped features: forward selection on WiCE dev (``--select`` shows it, nested), plus
#: negation_mismatch, kept for what WiCE barely tests ("not free" against "free"); citelab's
#: own set teaches its weight.
CHOSEN = ("coverage", "missing_names", "missing_numbers", "pair_coverage", "negation_mismatch")
C = 0.1  # L2 strength (on standardised features), fixed beforehand, not tuned
FOLDS = 5
MIN_GAIN = 0.003  # forward selection adds a feature only for this much inner-CV AUC
WICE_ATTRIBUTION = (
    "Contains information from WiCE (Kamoi, Goyal, Rodriguez, Durrett: 'WiCE: Real-World "
    "Entailment for Claims in Wikipedia', EMNLP 2023; github.com/ryokamoi/wice), whose "
    "annotations are made available under the Open Data Commons Attribution License (ODC-BY "
    "1.0): opendatacommons.org/licenses/by/1-0/."
)


@dataclass
class Data:
    """Rows (a WiCE oracle chunk, or one pair of citelab's set) and the units they belong to."""

    x: np.ndarray  # rows × FEATURES
    y: np.ndarray  # bool per row: fully supported
    unit: np.ndarray  # the claim id ("wice:dev00012") or pair id ("own:g01-1") of each row
    source: np.ndarray  # "wice" or "own"
    category: np.ndarray  # citelab's categories ("" for WiCE)
    lexical: np.ndarray  # LexicalJudge's overlap, for the baseline beside it

    def take(self, mask: np.ndarray) -> Data:
        return Data(*(getattr(self, k)[mask] for k in self.__dataclass_fields__))


@dataclass
class Fitted:
    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def probability(self, x: np.ndarray) -> np.ndarray:
        columns = [FEATURES.index(name) for name in self.features]
        z = (x[:, columns] - self.mean) / self.scale
        return np.asarray(1.0 / (1.0 + np.exp(-(z @ self.coef + self.intercept))))


def load(wice: Path, own: Path) -> Data:
    rows: list[tuple[str, str, str, bool, str, str]] = []
    for line in (wice / "oracle_claim_dev.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        evidence = "\n".join(item["evidence"])
        unit = "wice:" + item["meta"]["id"]
        rows.append((unit, item["claim"], evidence, item["label"] == "supported", "wice", ""))
    for line in own.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        evidence = "\n".join(item["evidence"])
        rows.append(
            ("own:" + item["id"], item["claim"], evidence, item["label"], "own", item["category"])
        )
    lexical = LexicalJudge()
    return Data(
        x=np.array([[support_features(c, e)[n] for n in FEATURES] for _, c, e, *_ in rows]),
        y=np.array([r[3] for r in rows], dtype=bool),
        unit=np.array([r[0] for r in rows]),
        source=np.array([r[4] for r in rows]),
        category=np.array([r[5] for r in rows]),
        lexical=np.array([lexical.overlap(c, e) for _, c, e, *_ in rows]),
    )


def fit(data: Data, features: Sequence[str]) -> Fitted:
    columns = [FEATURES.index(name) for name in features]
    x = data.x[:, columns]
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=C, tol=1e-10, max_iter=10_000)
    model.fit((x - mean) / scale, data.y)
    return Fitted(tuple(features), mean, scale, model.coef_[0], float(model.intercept_[0]))


def unit_scores(data: Data, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit (sorted ids): its label, its best score over its rows, its source."""
    units, inverse = np.unique(data.unit, return_inverse=True)
    best = np.full(len(units), -np.inf)
    np.maximum.at(best, inverse, scores)
    label = np.zeros(len(units), dtype=bool)
    label[inverse] = data.y
    source = np.empty(len(units), dtype=data.source.dtype)
    source[inverse] = data.source
    return label, best, source


def kappa_threshold(label: np.ndarray, score: np.ndarray) -> float:
    """The threshold (a midpoint between two scores) with the highest κ; lowest on ties."""
    values = np.unique(score)
    candidates = (values[:-1] + values[1:]) / 2 if len(values) > 1 else values
    kappas = [float(cohen_kappa(label, score >= t)) for t in candidates]
    return float(candidates[int(np.argmax(kappas))])


def splits(data: Data, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Row masks (train, test) of a stratified K-fold over units (by source and label)."""
    units, first = np.unique(data.unit, return_index=True)
    strata = np.char.add(data.source[first], data.y[first].astype(str))
    folds = StratifiedKFold(FOLDS, shuffle=True, random_state=seed)
    out = []
    for train, test in folds.split(units, strata):
        out.append((np.isin(data.unit, units[train]), np.isin(data.unit, units[test])))
    return out


def oof(data: Data, seed: int, trainer: Callable[[Data, int], tuple[Fitted, float]]) -> np.ndarray:
    """Out-of-fold rows: [score, threshold of its fold], each scored by a model it never saw."""
    result = np.zeros((len(data.y), 2))
    for train, test in splits(data, seed):
        model, threshold = trainer(data.take(train), seed)
        result[test, 0] = model.probability(data.x[test])
        result[test, 1] = threshold
    return result


def inner_threshold(data: Data, seed: int, features: Sequence[str]) -> float:
    """κ-maximising threshold on WiCE claims' out-of-fold scores inside ``data``."""
    scores = np.zeros(len(data.y))
    for train, test in splits(data, seed + 1000):
        scores[test] = fit(data.take(train), features).probability(data.x[test])
    label, best, source = unit_scores(data, scores)
    wice = source == "wice"
    return kappa_threshold(label[wice], best[wice])


def fixed_trainer(features: Sequence[str]) -> Callable[[Data, int], tuple[Fitted, float]]:
    def train(data: Data, seed: int) -> tuple[Fitted, float]:
        return fit(data, features), inner_threshold(data, seed, features)

    return train


def selecting_trainer(data: Data, seed: int) -> tuple[Fitted, float]:
    features = forward_selection(data, seed)
    return fit(data, features), inner_threshold(data, seed, features)


def forward_selection(data: Data, seed: int, log: list[str] | None = None) -> tuple[str, ...]:
    """Add, one at a time, the feature that raises inner-CV AUC on WiCE claims the most."""
    chosen: list[str] = []
    best_auc = 0.5
    while len(chosen) < len(FEATURES):
        trials = {}
        for name in FEATURES:
            if name not in chosen:
                trials[name] = inner_auc(data, seed, [*chosen, name])
        name = max(trials, key=trials.__getitem__)
        if trials[name] < best_auc + MIN_GAIN:
            break
        chosen.append(name)
        best_auc = trials[name]
        if log is not None:
            log.append(f"  + {name:24s} inner-CV AUC {best_auc:.3f}")
    return tuple(chosen)


def inner_auc(data: Data, seed: int, features: Sequence[str]) -> float:
    scores = np.zeros(len(data.y))
    for train, test in splits(data, seed + 2000):
        scores[test] = fit(data.take(train), features).probability(data.x[test])
    label, best, source = unit_scores(data, scores)
    wice = source == "wice"
    return float(auc(label[wice], best[wice]))


def metrics(label: np.ndarray, score: np.ndarray, verdict: np.ndarray) -> dict[str, float]:
    return {
        "kappa": float(cohen_kappa(label, verdict)),
        "auc": float(auc(label, score)),
        "accuracy": float(np.mean(label == verdict)),
        "macro_f1": float(f1_score(label, verdict, average="macro")),
        "says_yes": float(np.mean(verdict)),
    }


def bootstrap(
    label: np.ndarray, score: np.ndarray, verdict: np.ndarray, seed: int, rounds: int
) -> dict[str, tuple[float, float]]:
    """95% percentile intervals over units resampled with replacement."""
    draws: dict[str, list[float]] = {}
    for pick in resample_indices(len(label), rounds, np.random.default_rng(seed)):
        if 0 < label[pick].sum() < len(pick):
            for key, value in metrics(label[pick], score[pick], verdict[pick]).items():
                draws.setdefault(key, []).append(value)
    return {
        k: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) for k, v in draws.items()
    }


@dataclass
class Evaluation:
    """Out-of-fold unit figures of one training recipe over several seeds."""

    label: np.ndarray
    source: np.ndarray
    units: np.ndarray
    scores: list[np.ndarray]  # per seed, per unit
    verdicts: list[np.ndarray]
    resamples: int  # bootstrap rounds of each interval

    def figures(self, mask: np.ndarray) -> dict[str, Any]:
        per_seed = [
            metrics(self.label[mask], s[mask], v[mask])
            for s, v in zip(self.scores, self.verdicts, strict=True)
        ]
        mean = {k: float(np.mean([m[k] for m in per_seed])) for k in per_seed[0]}
        spread = {k: (min(m[k] for m in per_seed), max(m[k] for m in per_seed)) for k in mean}
        label, score, verdict = self.label[mask], self.scores[0][mask], self.verdicts[0][mask]
        ci = bootstrap(label, score, verdict, seed=0, rounds=self.resamples)
        return {"n": int(mask.sum()), "mean": mean, "seed_range": spread, "ci95_seed0": ci}


def evaluate(
    data: Data,
    seeds: Sequence[int],
    trainer: Callable[[Data, int], tuple[Fitted, float]],
    resamples: int,
) -> Evaluation:
    units, inverse = np.unique(data.unit, return_inverse=True)
    label, _, source = unit_scores(data, np.zeros(len(data.y)))
    scores, verdicts = [], []
    for seed in seeds:
        rows = oof(data, seed, trainer)
        best = np.full(len(units), -np.inf)
        np.maximum.at(best, inverse, rows[:, 0])
        threshold = np.zeros(len(units))
        threshold[inverse] = rows[:, 1]
        scores.append(best)
        verdicts.append(best >= threshold)
    return Evaluation(label, source, units, scores, verdicts, resamples)


def cross_source(
    data: Data, features: Sequence[str], seeds: Sequence[int], resamples: int
) -> dict[str, Any]:
    """Train on one source (threshold by CV there), score the other."""
    out: dict[str, Any] = {}
    for train_on, test_on in (("wice", "own"), ("own", "wice")):
        train = data.take(data.source == train_on)
        test = data.take(data.source == test_on)
        model = fit(train, features)
        thresholds = []
        for seed in seeds:
            rows = np.zeros(len(train.y))
            for a, b in splits(train, seed):
                rows[b] = fit(train.take(a), features).probability(train.x[b])
            label, best, _ = unit_scores(train, rows)
            thresholds.append(kappa_threshold(label, best))
        threshold = float(np.median(thresholds))
        label, best, _ = unit_scores(test, model.probability(test.x))
        verdict = best >= threshold
        out[f"{train_on}->{test_on}"] = {
            "n": len(label),
            "threshold": threshold,
            **metrics(label, best, verdict),
            "ci95": bootstrap(label, best, verdict, seed=0, rounds=resamples),
        }
    return out


def shipped_threshold(data: Data, features: Sequence[str], seeds: Sequence[int]) -> float:
    """Median over seeds of the κ-best threshold on WiCE claims' out-of-fold scores."""
    found = []
    for seed in seeds:
        rows = np.zeros(len(data.y))
        for train, test in splits(data, seed):
            rows[test] = fit(data.take(train), features).probability(data.x[test])
        label, best, source = unit_scores(data, rows)
        wice = source == "wice"
        found.append(kappa_threshold(label[wice], best[wice]))
    return float(np.median(found))


def t5_comparison(evaluation: Evaluation, wice: Path) -> dict[str, Any]:
    """On the dev claims with WiCE's published T5-3B (ANLI) scores: T5 at 0.5 beside ours."""
    published = json.loads((wice / "dev_scores_t5-3b-anli.json").read_text(encoding="utf-8"))
    mask = np.isin(evaluation.units, ["wice:" + k for k in published])
    t5 = np.array([published[u.removeprefix("wice:")] for u in evaluation.units[mask]])
    label = evaluation.label[mask]
    return {
        "n": int(mask.sum()),
        "t5_3b_anli": {
            **metrics(label, t5, t5 >= 0.5),
            "ci95": bootstrap(label, t5, t5 >= 0.5, seed=0, rounds=evaluation.resamples),
        },
        "lexical_trained": evaluation.figures(mask),
    }


def lexical_baseline(data: Data, resamples: int) -> dict[str, Any]:
    label, best, source = unit_scores(data, data.lexical)
    out = {}
    for name in ("wice", "own"):
        mask = source == name
        verdict = best[mask] >= 0.75
        out[name] = {
            **metrics(label[mask], best[mask], verdict),
            "ci95": bootstrap(label[mask], best[mask], verdict, seed=0, rounds=resamples),
        }
    return out


def categories(data: Data, evaluation: Evaluation) -> dict[str, float]:
    """Out-of-fold accuracy per category of citelab's set (seed 0)."""
    _units, first = np.unique(data.unit, return_index=True)
    category = data.category[first]
    correct = evaluation.verdicts[0] == evaluation.label
    return {
        str(c): round(float(correct[category == c].mean()), 3) for c in sorted(set(category)) if c
    }


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def training_claims(path: Path) -> list[str]:
    """The claim of every row of a training file (WiCE's or citelab's JSON Lines)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["claim"] for line in lines if line.strip()]


def write_fingerprint(model: Path, wice: Path, own: Path) -> Path:
    """The training claims' keys beside the parameter file ``model``, from the files its
    provenance names (refused when one differs from the file it was trained on)."""
    raw = model.read_bytes()
    sources = json.loads(raw)["provenance"]["data"]
    files = [wice / "oracle_claim_dev.jsonl", own]
    if len(sources) != len(files):
        raise SystemExit(f"{model}: its provenance names {len(sources)} files, not WiCE's and ours")
    claims: list[str] = []
    named = []
    for source, path in zip(sources, files, strict=True):
        if source["sha256"] != digest(path):
            raise SystemExit(f"{path}: not the file {model} was trained on (its sha256 differs)")
        found = training_claims(path)
        claims.extend(found)
        keys = {claim_key(claim) for claim in found}
        named.append({"name": source["name"], "sha256": source["sha256"], "claims": len(keys)})
    parameters = hashlib.sha256(raw).hexdigest()[:16]
    out = fingerprint_path(model)
    text = json.dumps(fingerprint_document(claims, parameters, named), indent=1)
    out.write_text(text + "\n", encoding="utf-8")
    return out


def document(
    model: Fitted, threshold: float, figures: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    import sklearn

    return {
        "format": MODEL_FORMAT,
        "features_version": FEATURES_VERSION,
        "model": "logistic regression (L2) on standardised features; P(fully supported)",
        "features": list(model.features),
        "mean": _rounded(model.mean),
        "scale": _rounded(model.scale),
        "coef": _rounded(model.coef),
        "intercept": round(model.intercept, 10),
        "threshold": round(threshold, 10),
        "provenance": {
            "command": "python scripts/train_support_judge.py " + " ".join(args.argv),
            "date": datetime.date.today().isoformat(),
            "seeds": list(args.seed_list),
            "regularisation_C": C,
            "training_rows": "every row of both sources: WiCE dev oracle chunks labelled with "
            "their claim's label, and citelab's pairs; a claim's score is its best chunk's",
            "threshold_rule": "median over seeds of the κ-best threshold on WiCE dev claims' "
            "out-of-fold scores (5-fold CV over claims)",
            "data": [
                {
                    "name": "WiCE dev split, oracle chunks (oracle_claim_dev.jsonl)",
                    "rows": int((args.data.source == "wice").sum()),
                    "claims": len(set(args.data.unit[args.data.source == "wice"])),
                    "sha256": digest(args.wice / "oracle_claim_dev.jsonl"),
                    "label": "supported → 1; partially_supported, not_supported → 0",
                },
                {
                    "name": "citelab's own set (fixtures/judges/support_labels.jsonl), written "
                    "and labelled by citelab's developers, not a public human-labelled set",
                    "rows": int((args.data.source == "own").sum()),
                    "sha256": digest(args.own),
                },
            ],
            "never_used": "WiCE's test split, and any collection that repackages it",
            "versions": {"numpy": np.__version__, "scikit-learn": sklearn.__version__},
        },
        "licence": {
            "WiCE annotations": WICE_ATTRIBUTION + " The parameters here are fitted to them.",
            "WiCE text": "Wikipedia (CC BY-SA) and Common Crawl pages; no text is stored here, "
            "only the fitted parameters and figures.",
            "citelab's own set": "part of citelab (MIT).",
        },
        "figures": figures,
    }


def _rounded(values: np.ndarray) -> list[float]:
    return [round(float(v), 10) for v in values]


def print_figures(title: str, figures: dict[str, Any]) -> None:
    mean, spread, ci = figures["mean"], figures["seed_range"], figures["ci95_seed0"]
    print(f"{title} (n={figures['n']})")
    for key in ("kappa", "auc", "accuracy", "macro_f1", "says_yes"):
        lo, hi = spread[key]
        print(
            f"  {key:9s} {mean[key]:.3f}  seeds [{lo:.3f}, {hi:.3f}]  "
            f"bootstrap 95% [{ci[key][0]:.3f}, {ci[key][1]:.3f}]"
        )


def print_flat(title: str, figures: dict[str, Any]) -> None:
    ci = figures["ci95"]
    values = "  ".join(
        f"{k} {figures[k]:.3f} [{ci[k][0]:.3f}, {ci[k][1]:.3f}]"
        for k in ("kappa", "auc", "accuracy", "macro_f1", "says_yes")
    )
    print(f"{title}: {values}")


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wice", type=Path, default=WICE, help="folder with WiCE's dev files")
    parser.add_argument("--own", type=Path, default=OWN, help="citelab's labelled pairs")
    parser.add_argument("--out", type=Path, default=DEFAULT_MODEL, help="parameter file to write")
    parser.add_argument("--seeds", type=int, default=10, help="CV repetitions (seeds 0..N-1)")
    parser.add_argument("--features", default=",".join(CHOSEN), help="comma-separated features")
    parser.add_argument("--select", action="store_true", help="also run nested selection")
    parser.add_argument(
        "--resamples",
        type=int,
        default=2000,
        help="bootstrap rounds of each interval (the shipped figures: 2000; a test's run: few)",
    )
    parser.add_argument("--fit-only", action="store_true", help="write the file, skip figures")
    parser.add_argument(
        "--fingerprint-only",
        action="store_true",
        help="only write the training fingerprint of the existing parameter file --out",
    )
    parser.add_argument(
        "--oof-scores",
        type=Path,
        metavar="FILE",
        help="also write WiCE dev claims' out-of-fold scores and verdicts (seed 0) as JSON",
    )
    args = parser.parse_args(argv)
    args.argv = list(argv)
    args.seed_list = list(range(args.seeds))
    if args.resamples < 1:
        parser.error(f"--resamples must be at least 1, not {args.resamples}")
    if args.oof_scores is not None and (args.fit_only or not args.seed_list):
        parser.error("--oof-scores needs the cross-validation: drop --fit-only, --seeds >= 1")
    args.feature_list = tuple(args.features.split(","))
    unknown = [name for name in args.feature_list if name not in FEATURES]
    if unknown:
        parser.error(f"unknown features {unknown}; known: {', '.join(FEATURES)}")
    if not (args.wice / "oracle_claim_dev.jsonl").is_file():
        parser.error(f"no WiCE dev files in {args.wice} (oracle_claim_dev.jsonl)")
    return args


def main(argv: Sequence[str]) -> int:
    args = parse(argv)
    if args.fingerprint_only:
        print(f"wrote {write_fingerprint(args.out, args.wice, args.own)}")
        return 0
    data = args.data = load(args.wice, args.own)
    features = args.feature_list
    threshold = shipped_threshold(data, features, args.seed_list)
    model = fit(data, features)
    figures: dict[str, Any] = {}
    if not args.fit_only:
        figures = report(data, features, args)
    text = json.dumps(document(model, threshold, figures, args), indent=1, ensure_ascii=False)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    fingerprint = write_fingerprint(args.out, args.wice, args.own)
    print(f"features {', '.join(features)}; threshold {threshold:.4f}; wrote {args.out}")
    print(f"wrote {fingerprint}")
    return 0


def report(data: Data, features: Sequence[str], args: argparse.Namespace) -> dict[str, Any]:
    seeds = args.seed_list
    evaluation = evaluate(data, seeds, fixed_trainer(features), args.resamples)
    wice, own = evaluation.source == "wice", evaluation.source == "own"
    if args.oof_scores is not None:
        write_oof_scores(args.oof_scores, evaluation, wice, features)
    figures: dict[str, Any] = {
        "protocol": f"out of fold, {FOLDS}-fold CV over claims/pairs repeated over "
        f"{len(seeds)} seeds, thresholds by inner CV; WiCE: best over a claim's oracle chunks",
        "wice_dev": evaluation.figures(wice),
        "own_set": evaluation.figures(own),
        "own_set_categories_accuracy": categories(data, evaluation),
        "wice_dev_t5_subset": t5_comparison(evaluation, args.wice),
        "cross_source": cross_source(data, features, seeds, args.resamples),
        "lexical_baseline": lexical_baseline(data, args.resamples),
    }
    print_figures("WiCE dev, all claims", figures["wice_dev"])
    print_figures("citelab's own set", figures["own_set"])
    print("  own set, accuracy per category:", figures["own_set_categories_accuracy"])
    t5 = figures["wice_dev_t5_subset"]
    print_figures("WiCE dev, the claims with T5-3B outputs", t5["lexical_trained"])
    print_flat("  T5-3B (ANLI) at 0.5, same claims", t5["t5_3b_anli"])
    for key, value in figures["cross_source"].items():
        print_flat(f"cross-source {key} (threshold {value['threshold']:.3f})", value)
    for key, value in figures["lexical_baseline"].items():
        print_flat(f"lexical (0.75) on {key}", value)
    if args.select:
        figures["nested_selection"] = nested_selection(data, seeds, wice, args.resamples)
    return figures


def write_oof_scores(
    path: Path, evaluation: Evaluation, wice: np.ndarray, features: Sequence[str]
) -> None:
    """WiCE dev claims' out-of-fold scores ({claim id: score}, the shape of WiCE's published
    outputs) and verdicts, from seed 0, with the data's provenance."""
    ids = [unit.removeprefix("wice:") for unit in evaluation.units[wice]]
    scores, verdicts = evaluation.scores[0][wice], evaluation.verdicts[0][wice]
    document = {
        "judge": "lexical_trained",
        "features": list(features),
        "protocol": f"out of fold, seed 0: {FOLDS}-fold CV over claims and pairs (WiCE dev and "
        "citelab's own set); each fold's threshold by inner CV on its training part; a claim's "
        "score is its best over its oracle chunks",
        "data": "WiCE dev split, oracle chunks (never the test split)",
        "licence": WICE_ATTRIBUTION + " The scores here are computed from them.",
        "scores": {i: float(v) for i, v in zip(ids, scores, strict=True)},
        "verdicts": {i: bool(v) for i, v in zip(ids, verdicts, strict=True)},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote out-of-fold scores of {len(ids)} WiCE dev claims to {path}")


def nested_selection(
    data: Data, seeds: Sequence[int], wice: np.ndarray, resamples: int
) -> dict[str, Any]:
    log: list[str] = []
    chosen = forward_selection(data, 0, log)
    print("forward selection on all of WiCE dev + own set (inner CV, seed 0):")
    print("\n".join(log))
    evaluation = evaluate(data, seeds, selecting_trainer, resamples)
    figures = evaluation.figures(wice)
    print_figures("WiCE dev, selection nested in each outer fold", figures)
    return {"selected_on_all": list(chosen), "wice_dev": figures}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
