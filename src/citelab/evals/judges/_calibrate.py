"""Judges checked against people: accuracy, macro-F1 and Cohen's κ on labelled support pairs.

A labels file is JSON Lines, one human decision per line::

    {"id": "g01-1", "claim": "...", "evidence": ["passage", ...], "label": true,
     "category": "numbers"}

(``evidence`` may be one string; ``label`` may be 0/1). ALCE's human-eval citation file is
read too (:mod:`citelab.evals.judges._calibrate_alce`: a recall pair per cited sentence and a pair
per citation). :func:`calibrate` asks each judge
every pair (the passages joined by line breaks, as the citation scorers join cited sources)
and reports, per judge, accuracy, macro-F1 and κ with seeded bootstrap intervals (95%,
resampling pairs), beside the agreement ALCE published for its NLI judge (TRUE, T5-11B) with
its human annotators. ALCE's figures are on *its* data (ASQA/ELI5 answers), ours on the set we
give: they sit side by side as a reference, not as a like-for-like comparison.

citelab ships a small set of its own (:data:`DEFAULT_LABELS`, 209 pairs written and labelled
by citelab's developers, covering paraphrase, negation, numbers, partial support, word-pair
swaps and multi-passage support). It is ours, small, and the ``lexical_pairs`` defaults were
set on it: treat figures on it as in-distribution.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, field_validator

from citelab._errors import InvalidInput
from citelab._jsonl import JsonlRows, load_jsonl
from citelab._paths import fixtures_dir
from citelab.evals.judges._calibrate_alce import is_alce_human_eval, load_alce_human_eval
from citelab.evals.judges._judges import Judge, build_judge

__all__ = [
    "ALCE_PUBLISHED_AGREEMENT",
    "DEFAULT_LABELS",
    "LABEL_FORMATS",
    "LabelFormat",
    "LabelledPair",
    "calibrate",
    "calibration_table",
    "category_accuracy",
    "load_labels",
]

LabelFormat = Literal["auto", "jsonl", "alce"]
LABEL_FORMATS: tuple[LabelFormat, ...] = ("auto", "jsonl", "alce")

DEFAULT_LABELS = "judges/support_labels.jsonl"
"""citelab's own labelled set, relative to the fixtures folder."""

ALCE_PUBLISHED_AGREEMENT = pd.DataFrame(
    [
        {"judge": "ALCE NLI (TRUE T5-11B), citation recall", "pairs": None, "accuracy": 0.851,
         "kappa": 0.698, "source": "Gao et al. 2023, ALCE, human evaluation"},
        {"judge": "ALCE NLI (TRUE T5-11B), citation precision", "pairs": None,
         "accuracy": 0.776, "kappa": 0.525, "source": "Gao et al. 2023, ALCE, human evaluation"},
    ]
)  # fmt: skip
"""The agreement of ALCE's NLI judge with its human annotators, as published."""


class LabelledPair(BaseModel):
    """One human support decision: does ``evidence`` fully support ``claim``?"""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    claim: str
    evidence: list[str]
    """The passages, in order (joined by line breaks for the judge)."""
    label: bool
    category: str = ""
    """What the pair probes (paraphrase, negation, numbers…), for per-category accuracy."""

    @field_validator("evidence", mode="before")
    @classmethod
    def _passages(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("label", mode="before")
    @classmethod
    def _binary(cls, value: Any) -> Any:
        if value in (0, 1) and not isinstance(value, bool):
            return bool(value)
        return value


def load_labels(
    path: str | Path | None = None, label_format: LabelFormat = "auto"
) -> list[LabelledPair]:
    """The pairs of a labels file (citelab's own set when ``path`` is None).

    ``label_format``: ``jsonl`` (one pair a line, above), ``alce`` (ALCE's human-eval
    citation file; see :mod:`citelab.evals.judges._calibrate_alce`) or ``auto``: a ``.json`` file
    (or one JSON object spread over lines) is ALCE's, anything else JSON Lines.
    """
    target = Path(path) if path is not None else _default_labels()
    if label_format not in LABEL_FORMATS:
        raise InvalidInput(
            f"unknown labels format {label_format!r}; choose one of {', '.join(LABEL_FORMATS)}"
        )
    if label_format == "alce" or (label_format == "auto" and is_alce_human_eval(target)):
        return [LabelledPair.model_validate(pair) for pair in load_alce_human_eval(target)]
    rows = load_jsonl(target, _LABELS)
    if not rows:
        raise InvalidInput(f"{target}: no labelled pairs")
    return rows


def _default_labels() -> Path:
    path = fixtures_dir() / DEFAULT_LABELS
    if not path.is_file():
        raise InvalidInput(f"citelab's labelled set is not installed here (looked for {path})")
    return path


def calibrate(
    labels: Sequence[LabelledPair] | str | Path | None = None,
    judges: Iterable[str | Mapping[str, Any] | Judge] = ("lexical", "lexical_pairs"),
    *,
    seed: int = 0,
    resamples: int = 1000,
    label_format: LabelFormat = "auto",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ask every judge every pair: ``(verdicts, metrics)``; a labels file is read with
    :func:`load_labels` (``label_format``).

    ``verdicts`` has one row per judge × pair (``id``, ``category``, ``label``, ``verdict``);
    ``metrics`` one row per judge: accuracy, macro-F1 and κ with their intervals.
    """
    given = labels if isinstance(labels, Sequence) and not isinstance(labels, str) else None
    pairs = list(given) if given is not None else load_labels(labels, label_format)  # type: ignore[arg-type]
    rows: list[dict[str, Any]] = []
    metrics: list[dict[str, Any]] = []
    for spec in judges:
        judge = build_judge(spec if isinstance(spec, str | Judge) else dict(spec))
        verdicts = _verdicts(judge, pairs)
        label = _label(judge)
        rows += [
            {"judge": label, "id": p.id, "category": p.category, "label": p.label, "verdict": v}
            for p, v in zip(pairs, verdicts, strict=True)
        ]
        truth = np.array([p.label for p in pairs], dtype=bool)
        metrics.append(_metrics(label, truth, np.array(verdicts, dtype=bool), seed, resamples))
    return pd.DataFrame(rows), pd.DataFrame(metrics)


def calibration_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """``metrics`` with ALCE's published agreement beneath, for one comparison table."""
    ours = metrics.assign(source="this labelled set")
    return pd.concat([ours, ALCE_PUBLISHED_AGREEMENT], ignore_index=True)


def category_accuracy(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per judge and category (rows: categories, columns: judges)."""
    correct = verdicts.assign(correct=verdicts["label"] == verdicts["verdict"])
    return correct.pivot_table(index="category", columns="judge", values="correct", aggfunc="mean")


def _verdicts(judge: Judge, pairs: Sequence[LabelledPair]) -> list[bool]:
    questions = [(p.claim, "\n".join(p.evidence)) for p in pairs]
    many = getattr(judge, "supports_many", None)
    if callable(many):
        return [bool(v) for v in many(questions)]
    return [judge.supports(claim, evidence) for claim, evidence in questions]


def _label(judge: Judge) -> str:
    """The judge's name, with its threshold or model when it has one (the full configuration
    is in the verdicts' ``config`` column)."""
    config = judge.config()
    for key in ("model", "threshold"):
        if config.get(key) is not None:
            return f"{judge.name} ({key}={config[key]})"
    return judge.name


def _metrics(
    label: str, truth: np.ndarray, verdict: np.ndarray, seed: int, resamples: int
) -> dict[str, Any]:
    digest = hashlib.sha256(f"{seed}|{label}".encode()).digest()
    rng = np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])
    draws = rng.integers(0, len(truth), size=(resamples, len(truth)))
    out: dict[str, Any] = {"judge": label, "pairs": len(truth)}
    for name, function in (("accuracy", _accuracy), ("macro_f1", _macro_f1), ("kappa", _kappa)):
        samples = np.array([function(truth[d], verdict[d]) for d in draws])
        low, high = np.nanpercentile(samples, [2.5, 97.5])
        out[name] = function(truth, verdict)
        out[f"{name}_low"], out[f"{name}_high"] = float(low), float(high)
    return out


def _accuracy(truth: np.ndarray, verdict: np.ndarray) -> float:
    return float(np.mean(truth == verdict))


def _f1(truth: np.ndarray, verdict: np.ndarray) -> float:
    tp = float(np.sum(truth & verdict))
    predicted, actual = float(np.sum(verdict)), float(np.sum(truth))
    if predicted + actual == 0:
        return 1.0
    return 2 * tp / (predicted + actual)


def _macro_f1(truth: np.ndarray, verdict: np.ndarray) -> float:
    return (_f1(truth, verdict) + _f1(~truth, ~verdict)) / 2


def _kappa(truth: np.ndarray, verdict: np.ndarray) -> float:
    observed = np.mean(truth == verdict)
    p_yes = np.mean(truth) * np.mean(verdict)
    p_no = np.mean(~truth) * np.mean(~verdict)
    expected = p_yes + p_no
    if expected == 1.0:
        return float("nan")
    return float((observed - expected) / (1 - expected))


_LABELS = JsonlRows(
    LabelledPair,
    what="labels",
    whole="(pair)",
    key=lambda pair: pair.id,
    repeated=lambda pair, line: f"id {pair.id!r} was already used on line {line}",
)
