"""Judges checked against people, as tables: accuracy, macro-F1 and Cohen's κ per judge.

:func:`calibrate` is the table view of the judge card (:mod:`citelab.evals.cards._card`):
it reads a labelled set (:func:`~citelab.evals.labels._labels.load_label_set`: citelab's own
set by default, WiCE's claim and oracle-chunk files, ALCE's human-eval citation file, JSON
Lines or CSV with named columns), asks each judge every pair (the passages joined by line
breaks, as the citation scorers join cited sources), folds a claim's pairs into one verdict
(WiCE's oracle chunks: yes when any chunk is), and reports per judge the card's figures on
claims with seeded 95% bootstrap intervals (resampling claims), beside the agreement ALCE
published for its NLI judge (TRUE, T5-11B) with its annotators. ALCE's figures are on *its*
data (ASQA/ELI5 answers): they sit beside ours as a reference, not a like-for-like comparison.

citelab ships a small set of its own (:data:`DEFAULT_LABELS`, 209 pairs written and labelled
by citelab's developers, covering paraphrase, negation, numbers, partial support, word-pair
swaps and multi-passage support). It is ours and small, and the default judge
(``lexical_trained``) was trained on it beside WiCE's dev split: treat figures on it as
in-distribution, and prefer people's labels (WiCE's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from citelab.evals.cards._card import (
    ALCE_PUBLISHED,
    JudgeCard,
    ask_judge,
    card_of,
    labels_of,
)
from citelab.evals.judges import DEFAULT_JUDGE, Judge, build_judge
from citelab.evals.labels import (
    LabelColumns,
    LabelFormat,
    LabelledPair,
    LabelSet,
    PartialAs,
)

__all__ = [
    "ALCE_PUBLISHED_AGREEMENT",
    "calibrate",
    "calibrate_cards",
    "calibration_table",
    "category_accuracy",
    "load_labels",
]

ALCE_PUBLISHED_AGREEMENT = pd.DataFrame(
    [{"judge": p.judge, "pairs": None, "accuracy": p.accuracy, "kappa": p.kappa,
      "source": p.source} for p in ALCE_PUBLISHED]
)  # fmt: skip
"""The agreement of ALCE's NLI judge with its human annotators, as published."""

_FIGURES = ("accuracy", "macro_f1", "kappa", "auc", "sensitivity", "specificity", "says_yes")


def load_labels(
    path: str | Path | None = None,
    label_format: LabelFormat = "auto",
    *,
    partial_as: PartialAs = "no",
    columns: LabelColumns | None = None,
    label_map: Mapping[str, str] | None = None,
) -> list[LabelledPair]:
    """The pairs of a labels file (citelab's own set when ``path`` is None); see
    :func:`~citelab.evals.labels._labels.load_label_set` for the formats and options."""
    return list(
        labels_of(
            path, label_format, partial_as=partial_as, columns=columns, label_map=label_map
        ).pairs
    )


def calibrate_cards(
    labels: LabelSet | Sequence[LabelledPair] | str | Path | None = None,
    judges: Iterable[str | Mapping[str, Any] | Judge] = (DEFAULT_JUDGE, "lexical"),
    *,
    seed: int = 0,
    resamples: int = 1000,
    label_format: LabelFormat = "auto",
    partial_as: PartialAs = "no",
    columns: LabelColumns | None = None,
    label_map: Mapping[str, str] | None = None,
) -> tuple[LabelSet, list[JudgeCard], pd.DataFrame]:
    """The label set, one card per judge, and every pair's verdicts (one row per judge ×
    pair: ``judge``, ``id``, ``claim_id``, ``category``, ``label``, ``verdict``)."""
    label_set = labels_of(
        labels, label_format, partial_as=partial_as, columns=columns, label_map=label_map
    )
    cards: list[JudgeCard] = []
    rows: list[dict[str, Any]] = []
    for spec in judges:
        judge = build_judge(spec if isinstance(spec, str | Judge) else dict(spec))
        judged = ask_judge(judge, label_set.pairs)
        card = card_of(label_set, judge, judged, seed=seed, resamples=resamples)
        cards.append(card)
        rows += [
            {"judge": card.judge.label, "id": p.id, "claim_id": p.unit, "category": p.category,
             "label": p.label, "verdict": v}
            for p, v in zip(label_set.pairs, judged.verdicts, strict=True)
        ]  # fmt: skip
    return label_set, cards, pd.DataFrame(rows)


def calibrate(
    labels: LabelSet | Sequence[LabelledPair] | str | Path | None = None,
    judges: Iterable[str | Mapping[str, Any] | Judge] = (DEFAULT_JUDGE, "lexical"),
    *,
    seed: int = 0,
    resamples: int = 1000,
    label_format: LabelFormat = "auto",
    partial_as: PartialAs = "no",
    columns: LabelColumns | None = None,
    label_map: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ask every judge every pair: ``(verdicts, metrics)``.

    ``verdicts`` has one row per judge × pair (see :func:`calibrate_cards`); ``metrics`` one
    row per judge: ``pairs``, ``claims``, then accuracy, macro-F1, κ, AUC (None without a
    score), sensitivity, specificity and says-yes, each with ``_low``/``_high``.
    """
    _, cards, verdicts = calibrate_cards(
        labels, judges, seed=seed, resamples=resamples, label_format=label_format,
        partial_as=partial_as, columns=columns, label_map=label_map,
    )  # fmt: skip
    return verdicts, pd.DataFrame([metrics_row(card) for card in cards])


def metrics_row(card: JudgeCard) -> dict[str, Any]:
    """A card's headline figures as one table row."""
    row: dict[str, Any] = {
        "judge": card.judge.label,
        "pairs": card.labels.pairs,
        "claims": card.metrics.claims,
    }
    for name in _FIGURES:
        estimate = getattr(card.metrics, name)
        row[name] = None if estimate is None else estimate.value
        row[f"{name}_low"] = None if estimate is None else estimate.low
        row[f"{name}_high"] = None if estimate is None else estimate.high
    return row


def calibration_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """``metrics`` with ALCE's published agreement beneath, for one comparison table."""
    ours = metrics.assign(source="this labelled set")
    table = pd.concat([ours, ALCE_PUBLISHED_AGREEMENT], ignore_index=True)
    counts = [c for c in ("pairs", "claims") if c in table.columns]
    return table.astype(dict.fromkeys(counts, "Int64"))


def category_accuracy(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per judge and category, on claims (rows: categories, columns: judges); a
    frame without ``claim_id`` counts each pair as its own claim."""
    unit = "claim_id" if "claim_id" in verdicts.columns else "id"
    claims = verdicts.groupby(["judge", unit], sort=False).agg(
        category=("category", "first"), label=("label", "first"), verdict=("verdict", "any")
    )
    correct = claims.assign(correct=claims["label"] == claims["verdict"]).reset_index()
    return correct.pivot_table(index="category", columns="judge", values="correct", aggfunc="mean")
