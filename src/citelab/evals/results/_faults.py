"""The judge's agreement where the truth is known: on the citations a perturbing model
(:class:`citelab.models.PerturbedModel`) left intact or faulted in this run's own answers.

Every turn a perturbing model answered records the faults it injected
(:attr:`~citelab.evals.records.TurnRecord.injections`), so each citation of its final text is
known to be intact (the number its inner model wrote) or faulted (a number put in its place).
The judge's verdict is the ``citation_precision`` row of a statement that cites one source:
there ``hit`` means "this passage alone supports the claim", a verdict on exactly that
citation. Sensitivity is the share of intact citations the judge calls supported, specificity
the share of faulted ones it calls not supported, each with Wilson's interval, beside the
card's figures (the judge's card: made on other text). A faulted citation can still happen to
support its claim (another source stating the same fact), so specificity here is a floor. The
specification is ``docs/fault-agreement.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from citelab.contract import parse_markers
from citelab.evals._stats import MIN_UNITS, wilson_interval
from citelab.evals.cards import JudgeCard
from citelab.evals.records import CaseRecord, TurnRecord
from citelab.evals.results._judged import metric_cards

__all__ = ["FAULT_COLUMNS", "MIN_FAULT_UNITS", "fault_agreement", "fault_truth", "fault_units"]

MIN_FAULT_UNITS = MIN_UNITS
"""Below this many units a figure is marked "too few units" (the one rule of
:data:`citelab.evals._stats.MIN_UNITS`)."""

FAULT_COLUMNS = [
    "variant",
    "model",
    "judge",
    "measure",
    "value",
    "ci_low",
    "ci_high",
    "agreed",
    "units",
    "too_few",
    "card_value",
    "card_low",
    "card_high",
    "card",
]
"""The columns of :func:`fault_agreement` (``fault_agreement.csv``)."""

_METRIC = "citation_precision"
_KEYS = ["variant", "model", "dataset", "case_id", "turn"]


def fault_truth(turn: TurnRecord) -> dict[int, bool]:
    """Final number → True when the turn's text cites it faulted, False when intact.

    A held number is faulted where a fault put it in (an injection's ``injected``) and intact
    where the inner model wrote it; a number the text cites both ways is left out, and so is
    one finalize dropped. Numbers are mapped to final ones through
    :attr:`~citelab.evals.records.TurnRecord.mapping`."""
    written = Counter(n for marker in parse_markers(turn.raw_text) for n in marker.numbers)
    put_in = Counter(
        int(injection["injected"])
        for injection in turn.injections
        if injection.get("injected") is not None
    )
    truth: dict[int, bool] = {}
    for held, count in written.items():
        faulted = put_in.get(held, 0)
        if 0 < faulted < count:
            continue  # cited both intact and faulted: no single truth for its final number
        final = turn.mapping.get(held)
        if final is not None:
            truth[final] = faulted > 0
    return truth


def _truth_rows(records: Sequence[CaseRecord]) -> pd.DataFrame:
    rows = [
        {
            "variant": record.variant,
            "model": record.model,
            "dataset": record.dataset,
            "case_id": record.case_id,
            "turn": turn.turn,
            "number": number,
            "faulted": faulted,
        }
        for record in records
        for turn in record.turns
        if turn.perturbed and turn.error is None
        for number, faulted in fault_truth(turn).items()
    ]
    return pd.DataFrame(rows, columns=[*_KEYS, "number", "faulted"])


def _verdicts(citations: pd.DataFrame) -> pd.DataFrame:
    """The judge's verdict on each statement that cites one source (precision rows)."""
    rows = citations[citations["metric"] == _METRIC]
    if rows.empty:
        return pd.DataFrame(columns=[*_KEYS, "number", "supported"])
    group = [rows[k] for k in [*_KEYS, "statement"]]
    judgeable = rows["judgeable"].fillna(True).astype(bool) if "judgeable" in rows else True
    known = rows["uri"].notna() & judgeable
    single = rows.groupby(group)["number"].transform("size") == 1
    chosen = rows[single & known]
    return pd.DataFrame(
        {
            **{k: chosen[k].to_numpy() for k in _KEYS},
            "number": chosen["number"].astype(int).to_numpy(),
            "supported": chosen["hit"].astype(bool).to_numpy(),
        }
    )


def fault_units(result: Any) -> pd.DataFrame:
    """One row per judged single-source statement of a perturbed turn: its keys, the cited
    final ``number``, ``faulted`` (the truth) and ``supported`` (the judge's verdict)."""
    truth = _truth_rows(result.records)
    citations = result.details.get("citation", pd.DataFrame())
    if truth.empty or citations.empty:
        return pd.DataFrame(columns=[*_KEYS, "number", "faulted", "supported"])
    verdicts = _verdicts(citations)
    for frame in (truth, verdicts):
        frame["turn"] = frame["turn"].astype(int)
        frame["number"] = frame["number"].astype(int)
        for key in ("variant", "model", "dataset", "case_id"):
            frame[key] = frame[key].astype(str)
    return verdicts.merge(truth, on=[*_KEYS, "number"], how="inner")


def fault_agreement(result: Any) -> pd.DataFrame:
    """Per variant and model a perturbing model answered: the judge's sensitivity (intact
    citations called supported) and specificity (faulted ones called not supported) on this
    run's injected faults, with Wilson's 95% interval, the ``units`` counted, ``too_few``
    (under :data:`MIN_FAULT_UNITS`), and the card's figures beside them (NaN without a card).
    Columns: :data:`FAULT_COLUMNS`; empty when no perturbing model answered."""
    units = fault_units(result)
    cards = metric_cards(result.scorers, result.judge_cards)
    judge, card = cards.get(_METRIC, ("", None))
    rows: list[dict[str, Any]] = []
    for (variant, model), group in units.groupby(["variant", "model"], sort=False):
        head = {"variant": str(variant), "model": str(model), "judge": judge}
        truth = group["faulted"].astype(bool)
        supported = group["supported"].astype(bool)
        intact, faulted = supported[~truth], supported[truth]
        rows.append(_row(head, "sensitivity", int(intact.sum()), len(intact), card))
        rows.append(_row(head, "specificity", int((~faulted).sum()), len(faulted), card))
    return pd.DataFrame(rows, columns=FAULT_COLUMNS)


def _row(
    head: dict[str, str], measure: str, agreed: int, units: int, card: JudgeCard | None
) -> dict[str, Any]:
    nan = float("nan")
    value, low, high = nan, nan, nan
    if units:
        value = agreed / units
        low, high = wilson_interval(agreed, units)
    figure = None if card is None else getattr(card.metrics, measure)
    return {
        **head,
        "measure": measure,
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "agreed": agreed,
        "units": units,
        "too_few": units < MIN_FAULT_UNITS,
        "card_value": nan if figure is None or figure.value is None else figure.value,
        "card_low": nan if figure is None or figure.low is None else figure.low,
        "card_high": nan if figure is None or figure.high is None else figure.high,
        "card": "" if card is None else f"{card.judge.label} on {card.labels.name}",
    }
