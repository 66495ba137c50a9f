"""Judges checked against people, as tables: a card's headline figures, one row per judge.

A judge's figures come from its card (:func:`~citelab.evals.cards._card.judge_card`, the one
way to measure a judge against labels); these are its table views for several cards:
:func:`calibration_table` puts each card's accuracy, macro-F1, Cohen's κ and the rest (with
their seeded 95% bootstrap intervals over claims) in a row, beside the agreement ALCE
published for its NLI judge (TRUE, T5-11B) with its annotators, and
:func:`category_accuracy` tabulates accuracy per category. ALCE's figures are on *its* data
(ASQA/ELI5 answers): they sit beside ours as a reference, not a like-for-like comparison.

citelab ships a small set of its own (:func:`load_labels` with no path: 209 pairs written and
labelled by citelab's developers, covering paraphrase, negation, numbers, partial support,
word-pair swaps and multi-passage support). It is ours and small, and the default judge
(``lexical_trained``) was trained on it beside WiCE's dev split: treat figures on it as
in-distribution, and prefer people's labels (WiCE's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from citelab.evals.cards._card import ALCE_PUBLISHED, JudgeCard, labels_of
from citelab.evals.labels import LabelColumns, LabelFormat, LabelledPair, PartialAs

__all__ = [
    "ALCE_PUBLISHED_AGREEMENT",
    "calibration_table",
    "category_accuracy",
    "load_labels",
    "metrics_row",
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


def calibration_table(cards: Iterable[JudgeCard]) -> pd.DataFrame:
    """The cards' headline figures (one row per card, :func:`metrics_row`) with ALCE's
    published agreement beneath, for one comparison table."""
    ours = pd.DataFrame([metrics_row(card) for card in cards]).assign(source="this labelled set")
    table = pd.concat([ours, ALCE_PUBLISHED_AGREEMENT], ignore_index=True)
    counts = [c for c in ("pairs", "claims") if c in table.columns]
    return table.astype(dict.fromkeys(counts, "Int64"))


def category_accuracy(cards: Iterable[JudgeCard]) -> pd.DataFrame:
    """Accuracy on claims per category and card (rows: categories, columns: the judges'
    labels), from each card's figures per category; a set without categories is one
    category, ``(none)``, at the card's overall accuracy."""
    rows = [
        {"category": category, "judge": card.judge.label, "accuracy": accuracy}
        for card in cards
        for category, accuracy in _accuracy_by_category(card)
    ]
    table = pd.DataFrame(rows, columns=["category", "judge", "accuracy"])
    return table.pivot_table(index="category", columns="judge", values="accuracy", aggfunc="mean")


def _accuracy_by_category(card: JudgeCard) -> list[tuple[str, float | None]]:
    if not card.categories:
        return [("(none)", card.metrics.accuracy.value)]
    return [(c.category, c.figures.accuracy.value) for c in card.categories]
