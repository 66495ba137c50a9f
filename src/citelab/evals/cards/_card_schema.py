"""The data of a judge card (:class:`CardData`): what a judge's agreement with people is, in
a JSON file that a report can read back to correct its judged metrics for the judge's error.

Figures are on *claims* (a claim judged over several chunks counts once), each with a 95%
percentile bootstrap interval from resampling claims (never chunks), seeded. A value that is
undefined on the data (sensitivity without any supported claim, κ when everyone says one
thing) is ``None``, in JSON ``null``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from citelab.evals._stats import MIN_UNITS, too_few_units, wilson_interval
from citelab.evals.labels import LabelSource

__all__ = [
    "CARD_FORMAT",
    "AgreementFigures",
    "BootstrapInfo",
    "CardData",
    "CategoryFigures",
    "Confusion",
    "Estimate",
    "GradeFigures",
    "JudgeInfo",
    "PublishedAgreement",
    "Rate",
    "ReferenceComparison",
    "SweepPoint",
    "ThresholdSweep",
]

CARD_FORMAT = "citelab-judge-card/1"
"""The ``format`` of a card file (bumped when a field changes meaning)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


MIN_CARD_UNITS = MIN_UNITS
"""Below this many units (claims) a resampled interval says too little to print: a card or
an interval on fewer says "too few units" instead (a share shows Wilson's interval)."""


class Estimate(_Frozen):
    """A figure and its 95% bootstrap interval (None where undefined on the data)."""

    value: float | None
    low: float | None = None
    high: float | None = None

    def interval_text(self, units: int) -> str:
        """The interval as cards print it, or "too few units" (see :func:`too_few_units`)."""
        if self.low is None or self.high is None:
            return "—"
        if too_few_units(units, self.low, self.high):
            return f"— too few units ({units}; an interval needs {MIN_CARD_UNITS})"
        return f"[{self.low:.3f}, {self.high:.3f}]"


class Rate(Estimate):
    """A share with what it counts: ``count`` of ``of`` claims."""

    count: int
    of: int

    def interval_text(self, units: int) -> str:
        """The bootstrap interval; with too few units, Wilson's interval (valid at small n)
        and the words "too few units"."""
        if self.low is None or self.high is None or self.of == 0:
            return "—"
        if not too_few_units(units, self.low, self.high):
            return super().interval_text(units)
        low, high = wilson_interval(self.count, self.of)
        return f"[{low:.3f}, {high:.3f}] Wilson (too few units to resample: {units})"


class Confusion(_Frozen):
    """Claims by the people's label (supported or not) and the judge's verdict."""

    true_yes: int
    """People: supported; judge: yes."""
    false_yes: int
    """People: not supported; judge: yes."""
    false_no: int
    """People: supported; judge: no."""
    true_no: int
    """People: not supported; judge: no."""


class AgreementFigures(_Frozen):
    """How far a judge's verdicts agree with the labels, on one set of claims."""

    claims: int
    supported: int
    """Claims people labelled (fully) supported."""
    confusion: Confusion
    says_yes: Rate
    """Share of claims the judge calls supported."""
    accuracy: Rate
    sensitivity: Rate
    """Of the supported claims, the share the judge calls supported (true-positive rate)."""
    specificity: Rate
    """Of the claims not supported, the share the judge calls unsupported."""
    ppv: Rate
    """Of the judge's yeses, the share people call supported (precision)."""
    npv: Rate
    """Of the judge's noes, the share people call not supported."""
    macro_f1: Estimate
    """Mean of the F1 of "supported" and of "not supported"."""
    kappa: Estimate
    """Cohen's κ: agreement beyond what the two rates alone would give by chance."""
    auc: Estimate | None = None
    """Area under the ROC curve of the judge's score (None: the judge gives no score)."""


class SweepPoint(_Frozen):
    """The figures had the judge said yes at ``score >= threshold``."""

    threshold: float
    says_yes: float
    sensitivity: float | None
    specificity: float | None
    accuracy: float
    macro_f1: float
    kappa: float | None


class ThresholdSweep(_Frozen):
    """A scoring judge's figures across thresholds on its score."""

    score: str
    """What the score is (``score``: the judge's ``score(statement, evidence)``; ``overlap``:
    the lexical judge's word overlap, which its threshold is applied to)."""
    operating: float | None
    """The judge's own threshold (None when it has none)."""
    verdicts_follow_score: bool
    """The judge's verdicts are exactly ``score >= operating`` on every claim here."""
    best: SweepPoint
    """The κ-best threshold on *these* labels: chosen on them, so its figures are optimistic."""
    points: list[SweepPoint]
    """Thresholds at the claims' distinct scores (at most about 200, by quantile)."""


class CategoryFigures(_Frozen):
    """The figures on one category's claims."""

    category: str
    figures: AgreementFigures
    weak: bool
    """Its accuracy's interval lies wholly below the judge's overall accuracy."""


class GradeFigures(_Frozen):
    """How often the judge says yes to the claims of one written grade."""

    grade: str
    claims: int
    says_yes: Rate


class ReferenceComparison(_Frozen):
    """A reference judge's published outputs beside this judge, on the claims it covers."""

    name: str
    file: str
    sha256: str
    threshold: float | None
    """Yes at ``score >= threshold`` (None: the outputs are verdicts)."""
    claims: int
    """Claims of the label set the outputs cover (the figures are on these)."""
    not_in_labels: int
    """Outputs for ids the label set does not have (left out)."""
    reference: AgreementFigures
    judge: AgreementFigures
    """This card's judge on the same claims."""
    kappa_difference: Estimate
    """This judge's κ minus the reference's, with a paired interval (same resamples)."""
    auc_difference: Estimate | None = None


class PublishedAgreement(_Frozen):
    """Agreement published elsewhere, on other data: a reference point, not a comparison."""

    judge: str
    accuracy: float | None
    kappa: float | None
    source: str


class JudgeInfo(_Frozen):
    """The judge the card is about."""

    name: str
    label: str
    """Its name with its threshold or model, as tables show it."""
    config: dict[str, Any]
    """The configuration that rebuilds it (``build_judge``)."""
    score: str | None
    """What its score is (``score``, ``overlap``) or None when it gives only verdicts."""


class BootstrapInfo(_Frozen):
    """How the intervals were made."""

    seed: int
    resamples: int
    confidence: float = 0.95
    unit: Literal["claim"] = "claim"
    method: Literal["percentile"] = "percentile"


class CardData(_Frozen):
    """Every figure of a judge card (see :class:`~citelab.evals.cards.JudgeCard`)."""

    format: Literal["citelab-judge-card/1"] = "citelab-judge-card/1"
    citelab_version: str
    judge: JudgeInfo
    labels: LabelSource
    bootstrap: BootstrapInfo
    metrics: AgreementFigures
    threshold: ThresholdSweep | None = None
    """For a judge with a score; None otherwise."""
    categories: list[CategoryFigures] = []
    """Per category, when the label set has categories."""
    weak_categories: list[str] = []
    """The categories whose accuracy is clearly below the judge's overall accuracy."""
    grades: list[GradeFigures] = []
    """Says-yes per written grade (supported, partially_supported, not_supported)."""
    references: list[ReferenceComparison] = []
    published: list[PublishedAgreement] = []
    notes: list[str] = []
    """What a reader must know to read the figures right."""
    in_sample: str | None = None
    """Set when the judge was trained on these labels (the sentence saying so): the figures
    are in-sample, and such a card corrects no metric unless the user insists."""

    def summary(self) -> str:
        """The card in one sentence: κ and accuracy, and how the judge errs."""
        m = self.metrics

        def share(rate: Rate) -> str:
            return "—" if rate.value is None else f"{rate.value:.0%}"

        kappa = m.kappa
        interval = "" if kappa.low is None else f" {kappa.interval_text(m.claims)}"
        value = "undefined" if kappa.value is None else f"{kappa.value:.3f}{interval}"
        auc = "" if m.auc is None or m.auc.value is None else f", AUC {m.auc.value:.3f}"
        warning = f"IN SAMPLE: {self.in_sample} " if self.in_sample else ""
        return warning + (
            f"On {m.claims} claims of {self.labels.name}, {self.judge.label} agrees with the "
            f"labels at κ {value} (accuracy {share(m.accuracy)}{auc}); it calls "
            f"{share(m.says_yes)} of the claims supported (the labels: "
            f"{m.supported / m.claims:.0%}), finds {share(m.sensitivity)} of the supported ones "
            f"and rejects {share(m.specificity)} of the others."
        )
