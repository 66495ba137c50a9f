"""The judge on every judged number: which judge made each metric, its card, and the metric
corrected for the judge's error.

A card (:class:`~citelab.evals.cards.JudgeCard`) measures a judge's sensitivity (``se``: of
the units people call supported, the share it calls supported) and specificity (``sp``).
When the judge errs independently of the answer, a share ``p`` of judge yeses among units the
judge decided estimates the true share ``π`` through ``p = se·π + (1 − sp)(1 − π)``; solving
for ``π`` is the Rogan–Gladen estimator ``π = (p + sp − 1) / (se + sp − 1)``.

Citation recall and precision count two kinds of unit: those the judge decided, and those the
rules decided (an uncited statement, a citation out of range: always a miss). With ``v`` the
metric as judged and ``j`` the share of its units the judge decided (both aggregated as the
metric is: micro or macro), the corrected metric is ``(v − (1 − sp)·j) / (se + sp − 1)``,
clipped to ``[0, j]`` (the judged units can hold at most all of their share). A judge no
better than chance (``se + sp ≤ 1``) cannot be corrected: the value is undefined.

The interval carries both uncertainties at once: each resample draws the cases with
replacement (the answers' uncertainty, as the judged interval does) *and* ``se`` and ``sp``
from their Beta posteriors given the card's confusion counts under a uniform prior
(``Beta(tp + 1, fn + 1)``, ``Beta(tn + 1, fp + 1)``: the labels' uncertainty). A card made
on few labels gives a wide interval. See ``docs/corrected-metrics.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from citelab._errors import InvalidInput
from citelab.evals._stats import percentile_interval, resampled_sums
from citelab.evals.cards import JudgeCard, card_for, judge_label, same_judge
from citelab.evals.judges import Judge
from citelab.evals.scorers import CitationPrecision, CitationRecall, Scorer

__all__ = [
    "ALCE_JUDGE_MODEL",
    "CORRECTED_COLUMNS",
    "LOW_KAPPA",
    "METHOD_COLUMNS",
    "JudgedMetric",
    "card_view",
    "check_cards",
    "confusion_of",
    "correctable",
    "corrected_interval",
    "corrected_table",
    "judged_metrics",
    "judged_units",
    "method_rows",
    "metric_cards",
    "point_rates",
    "rogan_gladen",
]

LOW_KAPPA = 0.4
"""Below this Cohen's κ a judge's agreement with people is called low (Landis and Koch's
"moderate" starts at 0.41)."""

ALCE_JUDGE_MODEL = "t5_xxl_true_nli_mixture"
"""The model of ALCE's citation judge (TRUE, T5-11B): an ``_alce`` metric is comparable with
ALCE's published tables only when its judge runs this model."""

CORRECTED_COLUMNS = [
    "variant",
    "model",
    "metric",
    "judge",
    "value",
    "ci_low",
    "ci_high",
    "corrected",
    "corrected_low",
    "corrected_high",
    "judged_share",
    "sensitivity",
    "specificity",
    "clipped",
    "card",
]


METHOD_COLUMNS = [
    "variant",
    "model",
    "metric",
    "method",
    "judge",
    "value",
    "ci_low",
    "ci_high",
    "width",
    "labels",
    "too_few",
    "tuning",
    "judged_share",
    "sensitivity",
    "specificity",
    "clipped",
    "card",
    "note",
]
""":meth:`EvalResult.corrected`'s columns: one row per variant, model, metric and
``method`` — ``judged`` (the judge's verdicts counted), ``card`` (Rogan–Gladen from the
judge's card), ``ppi`` (the run's labels and the judge's verdicts) and ``labels`` (the
run's labels alone); ``labels`` is how many labels an estimate used, ``too_few`` says its
interval is not a normal one (see ``citelab.evals._stats``)."""


def method_rows(wide: pd.DataFrame, estimated: Sequence[Mapping[Any, Any]] = ()) -> pd.DataFrame:
    """The long table (:data:`METHOD_COLUMNS`) of a :func:`corrected_table` and the
    label estimates' rows, each variant's and model's metric together."""
    out: list[dict[str, Any]] = []
    by_key: dict[tuple[Any, ...], list[Mapping[Any, Any]]] = {}
    for row in estimated:
        by_key.setdefault((row["variant"], row["model"], row["metric"]), []).append(row)
    for row in wide.to_dict("records"):
        key = (row["variant"], row["model"], row["metric"])
        head = {"variant": key[0], "model": key[1], "metric": key[2], "judge": row["judge"]}
        card = {k: row[k] for k in ("judged_share", "sensitivity", "specificity", "card")}
        judged = _interval_row(row["value"], row["ci_low"], row["ci_high"])
        fixed = _interval_row(row["corrected"], row["corrected_low"], row["corrected_high"])
        out.append({**head, "method": "judged", **judged, "judged_share": row["judged_share"]})
        out.append({**head, "method": "card", **fixed, **card, "clipped": row["clipped"]})
        out.extend({**head, **extra} for extra in by_key.get(key, []))
    return pd.DataFrame(out, columns=METHOD_COLUMNS)


def _interval_row(value: Any, low: Any, high: Any) -> dict[str, Any]:
    return {"value": value, "ci_low": low, "ci_high": high, "width": high - low,
            "labels": 0, "too_few": False}  # fmt: skip


def card_view(table: pd.DataFrame) -> pd.DataFrame:
    """The judged and card rows of :data:`METHOD_COLUMNS` as one wide row each
    (:data:`CORRECTED_COLUMNS`: ``value`` as judged, ``corrected`` from the card), as the
    card's table shows them."""
    if "method" not in table:
        return table
    keys = ["variant", "model", "metric"]
    judged = table[table["method"] == "judged"][[*keys, "judge", "value", "ci_low", "ci_high"]]
    card = table[table["method"] == "card"].rename(
        columns={"value": "corrected", "ci_low": "corrected_low", "ci_high": "corrected_high"}
    )
    shown = ["corrected", "corrected_low", "corrected_high", "judged_share", "sensitivity",
             "specificity", "clipped", "card"]  # fmt: skip
    wide = judged.merge(card[[*keys, *shown]], on=keys, how="left")
    wide["clipped"] = wide["clipped"].fillna(False).astype(bool)
    return wide[CORRECTED_COLUMNS].reset_index(drop=True)


class JudgedMetric(BaseModel):
    """A metric a judge decided, its judge, the judge's card and what a reader must know."""

    model_config = ConfigDict(frozen=True)

    metric: str
    judge: str
    """The judge's name with its settings, as tables show it."""
    judge_config: dict[str, Any]
    card: str | None
    """The card's label set and judge (None: the judge has no card, it is uncalibrated)."""
    card_source: str
    """``given`` (the user's card), ``shipped`` (citelab's) or ``none``."""
    kappa: float | None = None
    kappa_low: float | None = None
    kappa_high: float | None = None
    sensitivity: float | None = None
    specificity: float | None = None
    weak_categories: list[str] = []
    warnings: list[str] = []
    """Loud: no card, low κ, an ``_alce`` metric not judged by ALCE's judge."""


@dataclass(frozen=True)
class _Judged:
    scorer: Scorer
    judge: Judge
    card: JudgeCard | None
    source: str


def judged_metrics(
    scorers: Sequence[Scorer], cards: Iterable[JudgeCard] = ()
) -> list[JudgedMetric]:
    """One entry per scorer that asks a judge, in the scorers' order: the judge, its card
    (one of ``cards`` that matches it, else citelab's shipped one) and the warnings."""
    return [_describe(item) for item in _judged(scorers, list(cards))]


def metric_cards(
    scorers: Sequence[Scorer], cards: Iterable[JudgeCard] = ()
) -> dict[str, tuple[str, JudgeCard | None]]:
    """Per judged metric: its judge's label and card (None: uncalibrated)."""
    return {
        item.scorer.metric: (judge_label(item.judge), item.card)
        for item in _judged(scorers, list(cards))
    }


def check_cards(
    scorers: Sequence[Scorer], cards: Iterable[JudgeCard], *, allow_in_sample: bool = False
) -> None:
    """:class:`InvalidInput` when a given card describes none of the scorers' judges (a card
    for another judge or other settings would silently be ignored), or was made on labels
    its judge was trained on (its figures flatter the judge) unless ``allow_in_sample``."""
    judges = [j for j in (getattr(s, "judge", None) for s in scorers) if isinstance(j, Judge)]
    for card in cards:
        if card.in_sample and not allow_in_sample:
            raise InvalidInput(
                f"judge card for {card.judge.label} on {card.labels.name} is in sample: "
                f"{card.in_sample} Make a card on labels the judge never saw (your own run's "
                "pairs), or insist with --allow-in-sample (allow_in_sample=True)"
            )
        if not any(same_judge(card, judge) for judge in judges):
            run = ", ".join(dict.fromkeys(judge_label(j) for j in judges)) or "none"
            raise InvalidInput(
                f"judge card for {card.judge.label} (configuration {card.judge.config}) "
                f"describes none of the run's judges ({run}): a card belongs to one judge "
                "with its exact settings"
            )


def _judged(scorers: Sequence[Scorer], cards: list[JudgeCard]) -> list[_Judged]:
    out = []
    for scorer in scorers:
        judge = getattr(scorer, "judge", None)
        # A scorer asks its judge when its configuration names it (numbering stability
        # holds a judge but asks it only in its "content" meaning).
        if isinstance(judge, Judge) and "judge" in _config_of(scorer):
            card, source = card_for(judge, cards)
            out.append(_Judged(scorer, judge, card, source))
    return out


def _config_of(scorer: Scorer) -> dict[str, Any]:
    config = getattr(scorer, "config", None)
    return dict(config()) if callable(config) else {}


def _describe(item: _Judged) -> JudgedMetric:
    card, label = item.card, judge_label(item.judge)
    base: dict[str, Any] = {
        "metric": item.scorer.metric,
        "judge": label,
        "judge_config": item.judge.config(),
        "card_source": item.source,
        "warnings": _warnings(item.scorer.metric, label, item.judge, card),
    }
    if card is None:
        return JudgedMetric(card=None, **base)
    figures = card.metrics
    return JudgedMetric(
        card=f"{card.judge.label} on {figures.claims} claims of {card.labels.name}",
        kappa=figures.kappa.value,
        kappa_low=figures.kappa.low,
        kappa_high=figures.kappa.high,
        sensitivity=figures.sensitivity.value,
        specificity=figures.specificity.value,
        weak_categories=list(card.weak_categories),
        **base,
    )


def _warnings(metric: str, label: str, judge: Judge, card: JudgeCard | None) -> list[str]:
    out = []
    if card is None:
        out.append(
            f"UNCALIBRATED: {label} has no judge card: how far its verdicts agree with people "
            "is unknown, and the metrics it judged cannot be corrected "
            "(make a card with `citelab judges card` and give it with --judge-card)"
        )
    elif card.in_sample:
        out.append(f"IN SAMPLE: {card.in_sample}")
    if card is not None and (
        card.metrics.kappa.value is None or card.metrics.kappa.value < LOW_KAPPA
    ):
        kappa = card.metrics.kappa.value
        shown = "undefined" if kappa is None else f"{kappa:.2f}"
        out.append(
            f"LOW AGREEMENT: {label} agrees with people at κ {shown} (below {LOW_KAPPA}) on "
            f"{card.labels.name}: read the metrics it judged as rough figures, and citation "
            "recall and precision corrected, with their intervals"
        )
    if metric.endswith("_alce") and not _is_alce_judge(judge):
        out.append(
            f"NOT COMPARABLE: {metric} was judged by {label}, not by ALCE's NLI judge (TRUE "
            "T5-11B): its values are not comparable with ALCE's published tables"
        )
    return out


def _is_alce_judge(judge: Judge) -> bool:
    return str(judge.config().get("model", "")).endswith(ALCE_JUDGE_MODEL)


def rogan_gladen(
    value: float, judged_share: float, sensitivity: float, specificity: float
) -> float | None:
    """``value`` corrected for the judge's error (see the module docs); None when the judge
    is no better than chance (``sensitivity + specificity <= 1``)."""
    youden = sensitivity + specificity - 1.0
    if youden <= 0.0:
        return None
    corrected = (value - (1.0 - specificity) * judged_share) / youden
    return min(max(corrected, 0.0), judged_share)


def corrected_interval(
    per_case: tuple[np.ndarray, np.ndarray, np.ndarray],
    confusion: tuple[int, int, int, int],
    rng: np.random.Generator,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile interval of the corrected metric, resampling the cases and the judge's
    sensitivity and specificity together (see the module docs).

    ``per_case``: per case, the numerator, the denominator and the judged units (numerators
    over the same denominators as the metric); ``confusion``: the card's (true_yes,
    false_yes, false_no, true_no). NaN when over half of the draws are not correctable."""
    true_yes, false_yes, false_no, true_no = confusion
    sums = resampled_sums(np.stack(per_case), rng, resamples)
    totals = sums[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        values = sums[0] / totals
        shares = sums[2] / totals
    sensitivity = rng.beta(true_yes + 1, false_no + 1, size=resamples)
    specificity = rng.beta(true_no + 1, false_yes + 1, size=resamples)
    youden = sensitivity + specificity - 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = (values - (1.0 - specificity) * shares) / youden
    corrected = np.clip(raw, 0.0, shares)
    keep = (youden > 0) & (totals > 0)
    if keep.sum() * 2 < resamples:
        return (float("nan"), float("nan"))
    return percentile_interval(corrected[keep], confidence)


_KEYS = ["variant", "model", "dataset", "case_id", "turn"]
_JUDGED_REASONS = ("supported", "unsupported")


def judged_units(details: Mapping[str, pd.DataFrame], metric: str, kind: str) -> pd.DataFrame:
    """Per turn of ``metric``, how many of its units the judge decided (``judged``).

    Recall: statements that cite sources in range (the others are misses by rule).
    Precision: citations of statements whose citations are all in range."""
    level = "statement" if kind == "recall" else "citation"
    rows = details.get(level, pd.DataFrame())
    if rows.empty or "metric" not in rows:
        return pd.DataFrame(columns=[*_KEYS, "judged"])
    rows = rows[rows["metric"] == metric]
    if kind == "recall":
        decided = rows["reason"].isin(_JUDGED_REASONS)
    else:
        in_range = rows["uri"].notna()
        decided = in_range.groupby([rows[k] for k in [*_KEYS, "statement"]]).transform("all")
    counted = rows.assign(judged=decided.astype(float))
    return counted.groupby(_KEYS, as_index=False, sort=False)[["judged"]].sum()


def correctable(scorers: Sequence[Scorer]) -> dict[str, tuple[str, Scorer]]:
    """The metrics a card can correct: citation recall and precision, by metric name."""
    out: dict[str, tuple[str, Scorer]] = {}
    for scorer in scorers:
        if isinstance(scorer, CitationRecall):
            out[scorer.metric] = ("recall", scorer)
        elif isinstance(scorer, CitationPrecision):
            out[scorer.metric] = ("precision", scorer)
    return out


def confusion_of(card: JudgeCard) -> tuple[int, int, int, int]:
    """The card's (true_yes, false_yes, false_no, true_no) on claims."""
    c = card.metrics.confusion
    return c.true_yes, c.false_yes, c.false_no, c.true_no


def point_rates(card: JudgeCard) -> tuple[float, float] | None:
    """The card's sensitivity and specificity from its counts (None when one is undefined)."""
    true_yes, false_yes, false_no, true_no = confusion_of(card)
    if true_yes + false_no == 0 or true_no + false_yes == 0:
        return None
    return true_yes / (true_yes + false_no), true_no / (true_no + false_yes)


def corrected_table(
    per_case: pd.DataFrame,
    summary: pd.DataFrame,
    cards: Mapping[str, tuple[str, JudgeCard | None]],
    rng_for: Callable[[tuple[Any, ...]], np.random.Generator],
    resamples: int = 1000,
) -> pd.DataFrame:
    """Per variant, model and correctable metric: judged value and interval (from
    ``summary``), corrected value and interval (NaN without a usable card).

    ``per_case``: per variant, model, metric and case, ``n``, ``d`` and ``j`` (judged units);
    ``cards``: per metric, the judge's label and its card."""
    out: list[dict[str, Any]] = []
    judged = summary[summary["metric"].isin(list(cards))]
    groups = per_case.groupby(["variant", "model", "metric"], sort=False)
    for row in judged.to_dict("records"):
        key = (row["variant"], row["model"], row["metric"])
        label, card = cards[str(row["metric"])]
        part = groups.get_group(key) if key in groups.groups else per_case.iloc[:0]
        out.append({**{k: row[k] for k in ("variant", "model", "metric", "value", "ci_low",
                                            "ci_high")}, "judge": label,
                    **_corrected(part, card, rng_for(("corrected", *key)), resamples)})  # fmt: skip
    return pd.DataFrame(out, columns=CORRECTED_COLUMNS)


def _corrected(
    part: pd.DataFrame, card: JudgeCard | None, rng: np.random.Generator, resamples: int
) -> dict[str, Any]:
    nan = float("nan")
    empty = {"corrected": nan, "corrected_low": nan, "corrected_high": nan,
             "judged_share": nan, "sensitivity": nan, "specificity": nan, "clipped": False,
             "card": None}  # fmt: skip
    numerators, denominators, judged = (part[c].to_numpy(dtype=float) for c in ("n", "d", "j"))
    if denominators.sum() <= 0:
        return empty
    value, share = numerators.sum() / denominators.sum(), judged.sum() / denominators.sum()
    rates = point_rates(card) if card is not None else None
    if card is None or rates is None:
        return {**empty, "judged_share": share}
    corrected = rogan_gladen(value, share, *rates)
    youden = rates[0] + rates[1] - 1.0
    unclipped = (value - (1.0 - rates[1]) * share) / youden if youden > 0 else nan
    low, high = corrected_interval(
        (numerators, denominators, judged), confusion_of(card), rng, resamples
    )
    return {
        "corrected": nan if corrected is None else corrected,
        "corrected_low": low,
        "corrected_high": high,
        "judged_share": share,
        "sensitivity": rates[0],
        "specificity": rates[1],
        # Outside [0, judged share]: the judge says yes more (or less) often than its card's
        # rates allow, a sign that these answers are not like the card's labelled set.
        "clipped": bool(corrected is not None and unclipped != corrected),
        "card": f"{card.judge.label} on {card.metrics.claims} claims of {card.labels.name}",
    }
