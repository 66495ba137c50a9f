"""Findings: claims about variants that a report checks against its own results.

A finding is configuration (``[[findings]]`` in a suite). Two kinds:

comparisons (``expect = "lower" | "higher" | "same"``)
    ``variant`` against ``baseline`` on one metric and subset of turns. "lower" holds when the
    variant's 95% interval lies wholly below the baseline's; "same" when they overlap.
thresholds (``min`` and/or ``max``, as gates write them)
    the value of ``variant`` (``"*"``: of every variant) against fixed numbers: it holds when
    the value is at least ``min`` and at most ``max`` (:mod:`citelab.evals.results._thresholds`).

With several models, a finding is checked per model and holds only if it holds for each. A
model that did not run every variant the finding names (a suite's ``models[].variants`` chose
others) is not checked, unless no model ran them all.

A finding has one of four verdicts (``verdict``): ``holds`` (as predicted), ``fails`` (NOT
shown by these results: the values are there and say otherwise), ``untestable`` (not
testable here: a variant it names has no value on its subset — no turn of the subset was
run, as with ``--limit``, or none has that metric — so the results neither show nor refute
it) and ``uninformative`` (not informative: a comparison whose two variants gave identical
answers for a model, so their difference is 0 by construction and says nothing of the
claim). Across models a failure wins over "not testable", which wins over "not
informative", which wins over "holds".

``required = true`` makes a finding a gate: a required finding that does not hold (fails, is
not testable here, or is not informative) fails ``citelab eval`` (see
:mod:`citelab.evals.results._gates`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from citelab.evals._stats import MIN_UNITS
from citelab.evals.results._results import EvalResult, select_turns
from citelab.evals.results._thresholds import refuse_old_spellings, within

__all__ = ["Finding", "FindingResult", "Verdict", "evaluate_findings", "identical_answers"]

Expectation = Literal["lower", "higher", "same"]
Verdict = Literal["holds", "fails", "untestable", "uninformative"]
"""A check's outcome: as predicted (or passed), not (failed), not testable here, or not
informative (the answers it compares are identical)."""
_WORDS: dict[str, str] = {
    "holds": "as predicted",
    "fails": "NOT shown by these results",
    "untestable": "not testable here",
    "uninformative": "not informative",
}


class Finding(BaseModel):
    """A claim the report checks; see the module docs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str = Field(min_length=1)
    """The sentence shown as the finding's heading."""
    metric: str = Field(min_length=1)
    """The metric column looked at."""
    variant: str = Field(min_length=1)
    """The variant the claim is about (``"*"``: every variant, for thresholds)."""
    baseline: str | None = None
    """The reference variant of a comparison."""
    subset: str = "all"
    """Which turns: ``all``, ``multi_round``, ``single_round`` or ``tag:<name>``."""
    expect: Expectation | None = None
    """What a comparison predicts (``"lower"`` when not given); None for a threshold finding,
    which gives ``min`` / ``max`` instead."""
    min: float | None = None
    """A threshold finding: holds when the value is at least this."""
    max: float | None = None
    """A threshold finding: holds when the value is at most this."""
    required: bool = False
    """When true, the run fails (``citelab eval`` exits 3) unless the finding holds."""

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any) -> Any:
        refuse_old_spellings(data)
        if not isinstance(data, Mapping) or data.get("min") is not None:
            return data
        if data.get("max") is not None or data.get("expect") is not None:
            return data
        return {**data, "expect": "lower"}

    @model_validator(mode="after")
    def _complete(self) -> Finding:
        if self.is_threshold:
            if self.expect is not None:
                raise ValueError(
                    "a finding is a comparison (expect, with a baseline) or a threshold "
                    "(min / max), not both"
                )
        elif self.baseline is None or self.variant == "*":
            raise ValueError(
                f"expect={self.expect!r} compares two named variants: give variant and baseline "
                "(or min / max to check a value against a number)"
            )
        return self

    @property
    def is_threshold(self) -> bool:
        """Whether the finding bounds a value (``min`` / ``max``) rather than comparing two."""
        return self.min is not None or self.max is not None

    @property
    def variants(self) -> list[str]:
        """The named variants (``*`` excluded)."""
        names = [self.variant] if self.variant != "*" else []
        return names + ([self.baseline] if self.baseline else [])


class FindingResult(BaseModel):
    """A finding checked against the results."""

    finding: Finding
    values: dict[str, tuple[float, float, float]]
    """``"<variant> · <model>"`` → (value, interval low, interval high)."""
    holds: bool
    """True only when the verdict is ``holds``."""
    verdict: Verdict
    sentence: str


def evaluate_findings(
    result: EvalResult,
    findings: Sequence[Finding],
    *,
    summaries: Mapping[str, pd.DataFrame] | None = None,
) -> list[FindingResult]:
    """Each finding checked. ``summaries`` maps a subset to ``result.summary(subset=...)``
    already computed; each other subset the findings name is summarized once."""
    known = dict(summaries or {})
    for finding in findings:
        if finding.subset not in known:
            known[finding.subset] = result.summary(subset=finding.subset)
    return [_evaluate(result, finding, known[finding.subset]) for finding in findings]


_Point = tuple[float, float, float]


def _models(result: EvalResult, finding: Finding) -> list[str]:
    """The models that ran every variant ``finding`` names (every model when none did)."""
    if result.turns.empty:
        return []
    ran: dict[str, set[str]] = {}
    for model, variant in zip(result.turns["model"], result.turns["variant"], strict=True):
        ran.setdefault(str(model), set()).add(str(variant))
    named = {v for v in (finding.variant, finding.baseline) if v is not None and v != "*"}
    chosen = [model for model in sorted(ran) if named <= ran[model]]
    return chosen or sorted(ran)


def _evaluate(result: EvalResult, finding: Finding, summary: pd.DataFrame) -> FindingResult:
    rows = summary[summary["metric"] == finding.metric]
    models = _models(result, finding)
    values: dict[str, _Point] = {}
    verdicts: list[Verdict] = []
    parts: list[str] = []
    for model in models:
        mine = rows[rows["model"] == model]
        points = _points(mine)
        values.update({f"{variant} · {model}": point for variant, point in points.items()})
        verdict, text = _check(finding, points, result, few_units(mine))
        if (
            verdict != "untestable"
            and not finding.is_threshold
            and identical_answers(
                result, str(finding.baseline), finding.variant, model, finding.subset
            )
        ):
            verdict, text = "uninformative", _same_answers_text(finding.variant, text)
        verdicts.append(verdict)
        parts.append(text if len(models) == 1 else f"[{model}] {text}")
    verdict = worst(verdicts) if verdicts else "untestable"
    where = f"{finding.metric} on {subset_words(finding.subset)} turns"
    sentence = f"{where}: {'; '.join(parts) or 'no results'} — {_WORDS[verdict]}."
    return FindingResult(
        finding=finding, values=values, holds=verdict == "holds", verdict=verdict, sentence=sentence
    )


def worst(verdicts: Sequence[Verdict]) -> Verdict:
    """Several verdicts as one: a failure wins over "not testable", which wins over "not
    informative", which wins over "holds"."""
    order: tuple[Verdict, ...] = ("fails", "untestable", "uninformative")
    for verdict in order:
        if verdict in verdicts:
            return verdict
    return "holds"


def identical_answers(
    result: EvalResult, first: str, second: str, model: str, subset: str = "all"
) -> bool:
    """Whether ``second``'s answers equal ``first``'s on every turn of ``subset`` that both
    answered for ``model`` (False when they share none): the same recorded turn (text,
    sources, rounds, numbering; its timing aside), so any difference between the two is 0
    by construction. (The text alone is not enough: finalize renumbers, so "[1]" may name
    another source, and the rounds' numbering may differ under the same final text.)"""
    turns = select_turns(result.turns, subset)
    if turns.empty:
        return False
    wanted = set(zip(turns["dataset"], turns["case_id"], turns["turn"], strict=True))
    answers: dict[str, dict[tuple[str, str, int], dict[str, Any]]] = {}
    for record in result.records:
        if record.model != model or record.variant not in (first, second):
            continue
        mine = answers.setdefault(record.variant, {})
        for turn in record.turns:
            key = (record.dataset, record.case_id, turn.turn)
            if key in wanted:
                mine[key] = turn.model_dump(exclude=_VOLATILE)
    base, other = answers.get(first, {}), answers.get(second, {})
    paired = [key for key in base if key in other]
    return bool(paired) and all(base[key] == other[key] for key in paired)


_VOLATILE: dict[str, Any] = {
    "seconds": True,
    "rounds": {"__all__": {"input_tokens", "output_tokens", "tokens_estimated"}},
}
"""What a turn record holds that two runs of the same answer may differ in: its timing, and
what its calls cost (another prompt costs other tokens for the same answer)."""


def _same_answers_text(variant: str, text: str) -> str:
    return (
        f"{text}; but every answer of {variant} is identical to the other's, so the "
        "comparison is 0 by construction and shows nothing"
    )


def subset_words(subset: str) -> str:
    """A subset as a sentence names it: ``multi-round``; a tag as it is (``tag:multi_turn``)."""
    return subset if subset.startswith("tag:") else subset.replace("_", "-")


def _points(rows: pd.DataFrame) -> dict[str, _Point]:
    return {
        str(row["variant"]): (float(row["value"]), float(row["ci_low"]), float(row["ci_high"]))
        for row in rows.to_dict("records")
    }


def few_units(rows: pd.DataFrame) -> dict[str, float]:
    """The variants of summary ``rows`` whose value is on too few units (their interval is
    Wilson's: see :func:`~citelab.evals.results._results.summarize`), with their units."""
    if "too_few" not in rows or rows.empty:
        return {}
    few = rows[rows["too_few"].fillna(False).astype(bool)]
    return {str(v): float(u) for v, u in zip(few["variant"], few["units"], strict=True)}


def _check(
    finding: Finding, points: dict[str, _Point], result: EvalResult, few: Mapping[str, float]
) -> tuple[Verdict, str]:
    wanted = [finding.variant] if finding.variant != "*" else []
    wanted += [finding.baseline] if not finding.is_threshold and finding.baseline else []
    missing = [name for name in wanted if name not in points]
    if missing or not points:
        return "untestable", _why_untestable(finding, missing or ["*"], result)
    if finding.is_threshold:
        return _bound(finding, points, few)
    return _compare(finding, points, few)


def _why_untestable(finding: Finding, missing: Sequence[str], result: EvalResult) -> str:
    """Why a variant has no value: no turn of the subset at all, or none with the metric."""
    subset = subset_words(finding.subset)
    if select_turns(result.turns, finding.subset).empty:
        return f"no {subset} turns in these results (none was run; a --limit may leave them out)"
    named = ", ".join(repr(name) if name != "*" else "any variant" for name in missing)
    return (
        f"no value for {named} (the metric applies to none of these turns, or the variant "
        "was not run)"
    )


def _compare(
    finding: Finding, points: dict[str, _Point], few: Mapping[str, float]
) -> tuple[Verdict, str]:
    base_name, name = str(finding.baseline), finding.variant
    base, other = points[base_name], points[name]
    if finding.expect == "lower":
        holds = other[2] < base[1]
    elif finding.expect == "higher":
        holds = other[1] > base[2]
    else:
        holds = not (other[2] < base[1] or other[1] > base[2])
    text = (
        f"{base_name} {point_text(base, few.get(base_name))} vs "
        f"{name} {point_text(other, few.get(name))}, expected {finding.expect}"
    )
    return ("holds" if holds else "fails"), text


def _bound(
    finding: Finding, points: dict[str, _Point], few: Mapping[str, float]
) -> tuple[Verdict, str]:
    names = sorted(points) if finding.variant == "*" else [finding.variant]
    holds = all(
        within(points[name][0], points[name][0], finding.min, finding.max) for name in names
    )
    listed = ", ".join(f"{name} {point_text(points[name], few.get(name))}" for name in names)
    bounds = [f"≥ {finding.min:g}"] if finding.min is not None else []
    bounds += [f"≤ {finding.max:g}"] if finding.max is not None else []
    return ("holds" if holds else "fails"), f"{listed}, expected {' and '.join(bounds)}"


def point_text(point: _Point, few: float | None = None) -> str:
    """A value and its interval as a sentence gives them; with ``few`` (the units of a value
    on too few units to resample) the interval is Wilson's, and says so and why."""
    mark = ""
    if few is not None:
        why = "too few units" if few < MIN_UNITS else "too few units, all alike"
        mark = f" ({why}: Wilson)"
    return f"{point[0]:.3f} [{point[1]:.3f}, {point[2]:.3f}]{mark}"
