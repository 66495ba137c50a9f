"""Citation recall and precision estimated from the run's own labels: from the labels alone,
and from the labels and the judge's recorded verdicts together (PPI++, ``citelab.evals._stats``).

A label attaches to a scored unit by its pair id (:func:`~citelab.evals.label_pairs`:
``<run>/<variant>/<model>/<dataset>/<case>/turn-<t>/statement-<s>/citation-<n>``, or
``citations-<n>+<m>`` for a statement's pairs) and must name a unit the metric scored, with
the same claim: a label cut by another splitter than the metric's, or of a unit nobody
scored, is an error naming it. Recall's unit is a statement (its label: the statement's pair,
or its one citation's when it cites one source); precision's is a citation (its label: that
citation's pair — the passage supports the claim on its own, which is precision's verdict
exactly when the statement cites one source, and for a citation needed only together with
another counts it as not needed — or the statement's pair when it cites one source).

Only the units the judge decided are estimated: a unit the rules decided (an uncited
statement, a number out of range) is a miss whatever a label says. With ``c`` each judged
unit's weight in the metric (one over all units, micro; one over the answers times one over
its answer's units, macro) the metric is ``Σ c·y``: the estimators work on the
``c``-weighted share of the judged units and scale it by ``Σ c``. Each variant and model is its
own population: a label weighs by its design's sampling probability within it
(:meth:`~citelab.evals.labels.LabelSet.chances`: its stratum's labelled share where the file
records the stratum's size).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from citelab._errors import InvalidInput
from citelab.evals._stats import (
    MIN_LABELS,
    Estimate,
    Population,
    labels_only,
    ppi_difference,
    ppi_mean,
)
from citelab.evals.labels import LabelSet, population_of
from citelab.evals.scorers import Scorer

__all__ = ["LABEL_DIFFERENCE_COLUMNS", "PREDICTED_BY_SCORES", "PREDICTED_BY_VERDICTS",
           "LabelledUnits", "attach_labels", "difference_too_few", "label_differences",
           "label_estimates"]  # fmt: skip

_KEYS = ["variant", "model", "dataset", "case_id", "turn"]
_JUDGED_REASONS = ("supported", "unsupported")
PREDICTED_BY_SCORES = "f: the judge's scores"
"""A ``ppi`` row's note when PPI++ read the judge's scores (``judge_score``) as f."""
PREDICTED_BY_VERDICTS = "f: the judge's verdicts (0/1)"
"""A ``ppi`` row's note when PPI++ read the judge's 0/1 verdicts as f (no scores recorded:
a run scored without labels, a judge without a score, or a precision metric)."""


@dataclass(frozen=True)
class LabelledUnits:
    """One metric's judged units with their verdicts, weights and labels (NaN: unlabelled)."""

    metric: str
    units: pd.DataFrame
    """Per judged unit: the keys, ``verdict`` (0/1), ``prediction`` (what PPI++ reads as the
    judge's prediction: the judge's score, else the verdict), ``share`` (its ``c``),
    ``label`` and ``probability`` (the label's design chance; NaN: uniform) and
    ``stratum``."""
    macro: bool = False
    """Whether the metric averages per answer (its ``c`` then counts answers)."""
    scored: bool = False
    """Whether ``prediction`` is the judge's score (else its 0/1 verdict)."""
    uncovered: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """The design's populations some of whose strata have no label (:meth:`LabelSet.uncovered`)."""

    @property
    def predictor(self) -> str:
        """What PPI++ read as the judge's prediction, as the rows' notes say it."""
        return PREDICTED_BY_SCORES if self.scored else PREDICTED_BY_VERDICTS


def _heads(rows: pd.DataFrame) -> pd.Series:
    """Each row's pair id after the run's name, up to the citation part (vectorised; the
    detail tables of several metrics hold numbers as floats)."""
    head = rows["variant"].astype(str)
    for key in ("model", "dataset", "case_id"):
        head = head + "/" + rows[key].astype(str)
    turn, statement = (rows[k].astype("int64").astype(str) for k in ("turn", "statement"))
    return head + "/turn-" + turn + "/statement-" + statement + "/"


def _recall_units(rows: pd.DataFrame) -> tuple[pd.DataFrame, list[pd.Series]]:
    judged = rows[rows["reason"].isin(_JUDGED_REASONS)].reset_index(drop=True)
    cited = judged["citations"].astype(str).str.strip()
    head = _heads(judged)
    single = ~cited.str.contains(" ")
    together = head + "citations-" + cited.str.replace(" ", "+")
    alone = (head + "citation-" + cited).where(single)
    return judged, [together, alone]


def _precision_units(rows: pd.DataFrame) -> tuple[pd.DataFrame, list[pd.Series]]:
    keys = [rows[k] for k in [*_KEYS, "statement"]]
    in_range = rows["uri"].notna().groupby(keys).transform("all")
    judgeable = rows["judgeable"].fillna(True).astype(bool) if "judgeable" in rows else True
    judged = rows[in_range & judgeable].reset_index(drop=True)
    cited = judged.groupby([judged[k] for k in [*_KEYS, "statement"]])["number"].transform("size")
    head = _heads(judged)
    number = judged["number"].astype(int).astype(str)
    return judged, [head + "citation-" + number, (head + "citations-" + number).where(cited == 1)]


def _shares(judged: pd.DataFrame, scores: pd.DataFrame, metric: str, macro: bool) -> np.ndarray:
    """Each judged unit's weight ``c`` in its variant's and model's metric."""
    turns = scores[(scores["metric"] == metric) & scores["value"].notna()]
    group = ["variant", "model"]
    if macro:
        answers = turns.groupby(group)["value"].transform("size")
        per_turn = turns.assign(c=1.0 / (answers * turns["denominator"]))
    else:
        units = turns.groupby(group)["denominator"].transform("sum")
        per_turn = turns.assign(c=1.0 / units)
    weights = judged[_KEYS].merge(per_turn[[*_KEYS, "c"]], on=_KEYS, how="left")["c"]
    return weights.to_numpy(dtype=float)


def attach_labels(
    labels: LabelSet,
    details: Mapping[str, pd.DataFrame],
    scores: pd.DataFrame,
    kinds: Mapping[str, tuple[str, Scorer]],
) -> list[LabelledUnits]:
    """The labelled metrics' units with their labels (see the module docs); an
    :class:`InvalidInput` for a label that names no scored unit of any of ``kinds``."""
    found: set[str] = set()
    elsewhere: dict[str, str] = {}
    out = []
    by_suffix = {_strip_run(pair.id): pair for pair in labels.pairs}
    chances = labels.chances()
    uncovered = labels.uncovered()
    for metric, (kind, scorer) in kinds.items():
        level = "statement" if kind == "recall" else "citation"
        rows = details.get(level, pd.DataFrame())
        if rows.empty or "metric" not in rows:
            continue
        rows = rows[rows["metric"] == metric]
        judged, names = (_recall_units if kind == "recall" else _precision_units)(rows)
        label, chance, stratum = _labels_of(
            judged, names, by_suffix, chances, metric, found=found, elsewhere=elsewhere
        )
        if np.isnan(label).all():
            continue
        verdict = judged["hit"].astype(float).to_numpy()
        score = _scores(judged)
        units = judged[[*_KEYS]].assign(
            verdict=verdict,
            prediction=verdict if score is None else score,
            share=_shares(judged, scores, metric, scorer.aggregate == "macro"),
            label=label,
            probability=chance,
            stratum=stratum,
        )
        out.append(
            LabelledUnits(metric, units, scorer.aggregate == "macro", score is not None, uncovered)
        )
    _check_all_found(labels, found, kinds, elsewhere, _turns(scores))
    return out


def _scores(judged: pd.DataFrame) -> np.ndarray | None:
    """The judged units' recorded scores (``judge_score``), None unless every unit has one:
    a statement's verdict is one judge call on its cited passages joined, and its score is
    that call's (precision's verdict combines several calls, and records none)."""
    if "judge_score" not in judged or judged.empty:
        return None
    score = judged["judge_score"].to_numpy(dtype=float)
    return None if np.isnan(score).any() else score


def _strip_run(pair_id: str) -> str:
    run, _, rest = pair_id.partition("/")
    return rest if rest else run


def _labels_of(
    judged: pd.DataFrame,
    names: Sequence[pd.Series],
    by_suffix: Mapping[str, Any],
    chances: Mapping[str, float | None],
    metric: str,
    *,
    found: set[str],
    elsewhere: dict[str, str],
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    label = np.full(len(judged), np.nan)
    chance = np.full(len(judged), np.nan)
    stratum = [""] * len(judged)
    claims = judged.get("claim")
    for ids in names:
        matched = ids[ids.isin(list(by_suffix)) & np.isnan(label)]
        for index, suffix in matched.items():
            pair = by_suffix[suffix]
            claim = None if claims is None else str(claims.iat[int(index)])
            if claim is not None and pair.claim.strip() != claim.strip():
                # Another metric's splitter may cut this id elsewhere: an error only when
                # no metric has the label's unit (see _check_all_found).
                elsewhere.setdefault(suffix, f"{metric} scores the claim {claim!r} there")
                continue
            found.add(suffix)
            label[int(index)] = float(pair.label)
            drawn = chances.get(pair.id)
            chance[int(index)] = np.nan if drawn is None else drawn
            stratum[int(index)] = pair.stratum
    return label, chance, stratum


def _turns(scores: pd.DataFrame) -> set[str]:
    """The run's scored turns, as pair ids after the run's name up to the turn part."""
    if scores.empty:
        return set()
    head = scores["variant"].astype(str)
    for key in ("model", "dataset", "case_id"):
        head = head + "/" + scores[key].astype(str)
    return set(head + "/turn-" + scores["turn"].astype("int64").astype(str))


def _turn_of(suffix: str) -> str:
    return suffix.rsplit("/", 2)[0]


def _check_all_found(
    labels: LabelSet,
    found: set[str],
    kinds: Mapping[str, tuple[str, Scorer]],
    elsewhere: Mapping[str, str],
    turns: set[str],
) -> None:
    """An error for a label of a scored turn that names no scored unit there; labels of
    turns this run did not score (a run with ``limit`` or fewer models) are left aside."""
    by_claim = [
        p for p in labels.pairs if _strip_run(p.id) not in found and _strip_run(p.id) in elsewhere
    ]
    if by_claim:
        pair = by_claim[0]
        raise InvalidInput(
            f"label {pair.id!r} names a unit whose claim is not the label's {pair.claim!r} "
            f"({elsewhere[_strip_run(pair.id)]}): its pair was cut by another splitter than "
            "the metric's (make pairs with label_pairs(result, statements=scorer.statements))"
        )
    lost = [
        pair.id
        for pair in labels.pairs
        if _strip_run(pair.id) not in found and _turn_of(_strip_run(pair.id)) in turns
    ]
    if not lost:
        return
    shown = ", ".join(repr(i) for i in lost[:3]) + (
        f" and {len(lost) - 3} more" if len(lost) > 3 else ""
    )
    metrics = ", ".join(kinds) or "no citation metric"
    raise InvalidInput(
        f"labels {labels.source.name}: {len(lost)} label(s) name no unit the judge scored in "
        f"{metrics}: {shown}. A label's id must be the pair id of a scored statement or "
        "citation (label_pairs of this run, cut by the metric's own splitter: "
        "label_pairs(result, statements=scorer.statements) for an alce_compat metric)"
    )


def label_estimates(
    attached: Sequence[LabelledUnits],
    groups: Sequence[tuple[str, str]],
    confidence: float = 0.95,
    source: str = "",
) -> list[dict[str, Any]]:
    """Per labelled metric and each of ``groups`` (variant, model): a ``ppi`` and a
    ``labels`` row (a group without labels says so); ``source`` names the labels in
    each row's note."""
    out: list[dict[str, Any]] = []
    for item in attached:
        parts = item.units.groupby(["variant", "model"], sort=False)
        for group in groups:
            units = parts.get_group(group) if group in parts.groups else item.units.iloc[:0]
            partial = _partial(units, item.uncovered)
            for row in _group_rows(item.metric, group, units, confidence):
                named = f"labels: {source}" if source else ""
                read = item.predictor if row["method"] == "ppi" else ""
                notes = (row["note"], partial if row["labels"] else "", read, named)
                row["note"] = "; ".join(note for note in notes if note)
                out.append(row)
    return out


def _partial(units: pd.DataFrame, uncovered: Mapping[str, tuple[int, int]]) -> str:
    """A note when the group's labels are of a design population some of whose strata have
    no label: the estimate is then of the labelled strata's pairs only."""
    strata = units.loc[units["label"].notna(), "stratum"]
    hit = sorted({population_of(str(s)) for s in strata if s} & set(uncovered))
    if not hit:
        return ""
    labelled, cut = uncovered[hit[0]]
    return (
        f"of the labelled strata only: the labels are in {labelled} of the design's {cut} "
        "strata (label on until each has some to estimate every unit)"
    )


def _group_rows(
    metric: str, group: tuple[str, str], units: pd.DataFrame, confidence: float
) -> list[dict[str, Any]]:
    head = {"variant": group[0], "model": group[1], "metric": metric}
    labelled = units[units["label"].notna()]
    if labelled.empty:
        note = "no labels of this variant and model"
        return [_row(head, method, None, 0.0, note) for method in ("ppi", "labels")]
    chances = labelled["probability"].to_numpy(dtype=float)
    probabilities = None if np.isnan(chances).all() else np.nan_to_num(chances, nan=1.0)
    y = labelled["label"].to_numpy(dtype=float)
    share = labelled["share"].to_numpy(dtype=float)
    total = float(units["share"].sum())
    ppi = ppi_mean(
        y,
        labelled["prediction"].to_numpy(dtype=float),
        units["prediction"].to_numpy(dtype=float),
        probabilities,
        shares=units["share"].to_numpy(dtype=float),
        labelled_shares=share,
        strata=labelled["stratum"].tolist() if labelled["stratum"].astype(bool).any() else None,
        confidence=confidence,
    )
    strata = labelled["stratum"].tolist()
    strata_given = strata if any(strata) else None
    alone = labels_only(y, probabilities, shares=share, strata=strata_given, confidence=confidence)
    return [_row(head, e.method, e, total, "") for e in (ppi, alone)]


def _row(
    head: dict[str, Any], method: str, estimate: Estimate | None, total: float, note: str
) -> dict[str, Any]:
    nan = float("nan")
    if estimate is None:
        return {**head, "method": method, "value": nan, "ci_low": nan, "ci_high": nan,
                "width": nan, "labels": 0, "too_few": True, "tuning": nan, "judged_share": nan,
                "note": note}  # fmt: skip
    few = f"too few units: {estimate.too_few_reason} (Wilson's interval)"
    return {
        **head,
        "method": method,
        "value": estimate.value * total,
        "ci_low": estimate.low * total,
        "ci_high": estimate.high * total,
        "width": estimate.width * total,
        "labels": estimate.labels,
        "too_few": estimate.too_few,
        "tuning": nan if estimate.tuning is None else estimate.tuning,
        "judged_share": total,
        "note": few if estimate.too_few else note,
    }


LABEL_DIFFERENCE_COLUMNS = ["variant", "model", "metric", "baseline", "method", "difference",
                            "ci_low", "ci_high", "labels", "too_few", "tunings", "cases",
                            "note"]  # fmt: skip


def label_differences(
    attached: Sequence[LabelledUnits],
    scores: pd.DataFrame,
    baseline: str,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per labelled metric, model and variant other than ``baseline``: the paired PPI++
    difference ``variant − baseline`` on the cases both scored (:func:`ppi_difference`), when
    both have labels of that metric and model (see :data:`LABEL_DIFFERENCE_COLUMNS`; a pair
    of which a side has no labels has no row)."""
    out: list[dict[str, Any]] = []
    for item in attached:
        turns = scores[(scores["metric"] == item.metric) & scores["value"].notna()]
        labelled = item.units[item.units["label"].notna()]
        sides = set(zip(labelled["variant"], labelled["model"], strict=True))
        for variant, model in sorted(sides):
            if variant == baseline or (baseline, model) not in sides:
                continue
            out.append(_paired_row(item, turns, baseline, (variant, model), confidence))
    return pd.DataFrame(out, columns=LABEL_DIFFERENCE_COLUMNS)


def _paired_row(
    item: LabelledUnits,
    turns: pd.DataFrame,
    baseline: str,
    side: tuple[str, str],
    confidence: float,
) -> dict[str, Any]:
    variant, model = side

    def scored(name: str) -> pd.DataFrame:
        return turns[(turns["variant"] == name) & (turns["model"] == model)]

    shared = (
        scored(baseline)[["dataset", "case_id"]]
        .merge(scored(variant)[["dataset", "case_id"]].drop_duplicates())
        .drop_duplicates()
    )
    codes = {key: code for code, key in enumerate(map(tuple, shared.to_numpy()))}
    first, second = (
        _population(item, scored(name), name, model, codes) for name in (baseline, variant)
    )
    estimate = ppi_difference(first, second, confidence=confidence)
    few = f"too few units: {difference_too_few(estimate.labels)}" if estimate.too_few else ""
    note = "; ".join(part for part in (few, item.predictor) if part)
    return {"variant": variant, "model": model, "metric": item.metric, "baseline": baseline,
            "method": "ppi", "difference": estimate.value, "ci_low": estimate.low,
            "ci_high": estimate.high, "labels": estimate.labels, "too_few": estimate.too_few,
            "tunings": list(estimate.tunings), "cases": len(codes), "note": note}  # fmt: skip


def difference_too_few(labels: int) -> str:
    """Why a paired difference of ``labels`` labels on its smaller side is too few units."""
    if labels < MIN_LABELS:
        return f"{labels} labels on the smaller side, fewer than {MIN_LABELS}"
    return f"no spread, a zero variance, with {labels} labels a side at least"


def _population(
    item: LabelledUnits,
    turns: pd.DataFrame,
    variant: str,
    model: str,
    codes: Mapping[tuple[Any, ...], int],
) -> Population:
    """One side's judged units on the shared cases, its weights rescaled to those cases."""
    units = item.units[(item.units["variant"] == variant) & (item.units["model"] == model)]
    keys = list(zip(units["dataset"], units["case_id"], strict=True))
    inside = np.array([key in codes for key in keys], dtype=bool)
    kept = list(zip(turns["dataset"], turns["case_id"], strict=True))
    within = np.array([key in codes for key in kept], dtype=bool)
    # Micro: c is one over the variant's units; macro: one over its answers (times one over
    # the answer's units): on the shared cases, over theirs.
    weight = "denominator" if not item.macro else None
    whole = float(turns[weight].sum()) if weight else float(len(turns))
    part = float(turns.loc[within, weight].sum()) if weight else float(within.sum())
    chosen = units[inside]
    labelled = np.flatnonzero(chosen["label"].notna().to_numpy())
    chances = chosen["probability"].to_numpy(dtype=float)[labelled]
    strata = chosen["stratum"].to_numpy()[labelled]
    return Population(
        predictions=chosen["prediction"].to_numpy(dtype=float),
        shares=chosen["share"].to_numpy(dtype=float) * (whole / part if part else 0.0),
        cases=np.array(
            [codes[key] for key, keep in zip(keys, inside, strict=True) if keep], dtype=np.int64
        ),
        labelled=labelled.astype(np.int64),
        labels=chosen["label"].to_numpy(dtype=float)[labelled],
        probabilities=None if np.isnan(chances).all() else np.nan_to_num(chances, nan=1.0),
        strata=None if not any(strata) else np.unique(strata, return_inverse=True)[1],
    )
