"""Cards: a judge measured against people's labels, and the cards citelab ships.

:func:`judge_card` makes a :class:`JudgeCard` from a judge and a labelled set (accuracy,
macro-F1, κ, AUC, confusion, sensitivity and specificity with bootstrap intervals over
claims, a threshold sweep, categories, reference judges' published outputs side by side:
:class:`Reference`), the one way to measure a judge; :func:`calibration_table` and
:func:`category_accuracy` are the table views of several cards. citelab ships
cards for its offline judges (:func:`shipped_card`); :func:`card_for` picks a judge's card
among the user's and the shipped ones. A card holds figures only: the report
(``citelab.evals.report``) draws and writes it.
"""

from citelab.evals._stats import too_few_units, wilson_interval
from citelab.evals.cards._calibrate import (
    ALCE_PUBLISHED_AGREEMENT,
    calibration_table,
    category_accuracy,
    load_labels,
    metrics_row,
)
from citelab.evals.cards._card import (
    DEFAULT_CARD_JUDGE,
    IN_SAMPLE_SHARE,
    CardDisplay,
    JudgeCard,
    Reference,
    TrainingOverlap,
    judge_card,
    judge_label,
    set_card_display,
    trained_on,
    training_overlap,
)
from citelab.evals.cards._card_schema import (
    MIN_CARD_UNITS,
    AgreementFigures,
    CardData,
    Estimate,
)
from citelab.evals.cards._shipped import (
    CARDS_DIR,
    card_for,
    load_cards,
    same_judge,
    shipped_card,
    shipped_cards,
)

__all__ = [
    "ALCE_PUBLISHED_AGREEMENT",
    "CARDS_DIR",
    "DEFAULT_CARD_JUDGE",
    "IN_SAMPLE_SHARE",
    "MIN_CARD_UNITS",
    "AgreementFigures",
    "CardData",
    "CardDisplay",
    "Estimate",
    "JudgeCard",
    "Reference",
    "TrainingOverlap",
    "calibration_table",
    "card_for",
    "category_accuracy",
    "judge_card",
    "judge_label",
    "load_cards",
    "load_labels",
    "metrics_row",
    "same_judge",
    "set_card_display",
    "shipped_card",
    "shipped_cards",
    "too_few_units",
    "trained_on",
    "training_overlap",
    "wilson_interval",
]
