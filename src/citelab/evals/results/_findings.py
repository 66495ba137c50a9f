"""Findings: claims about variants that a report checks against its own results.

A finding is configuration (``[[findings]]`` in a suite). Two kinds:

comparisons (``expect = "lower" | "higher" | "same"``)
    ``variant`` against ``baseline`` on one metric and subset of turns. "lower" holds when the
    variant's 95% interval lies wholly below the baseline's; "same" when they overlap.
thresholds (``expect = "at_least" | "at_most"`` with ``threshold``)
    the value of ``variant`` (``"*"``: of every variant) against a fixed number.

With several models, a finding is checked per model and holds only if it holds for each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from citelab.evals.results._results import EvalResult

__all__ = ["Finding", "FindingResult", "evaluate_findings"]

Expectation = Literal["lower", "higher", "same", "at_least", "at_most"]
_COMPARISONS = frozenset({"lower", "higher", "same"})


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
    expect: Expectation = "lower"
    """What the finding predicts."""
    threshold: float | None = None
    """The bound of ``at_least`` / ``at_most``."""

    @model_validator(mode="after")
    def _complete(self) -> Finding:
        if self.expect in _COMPARISONS:
            if self.baseline is None or self.variant == "*":
                raise ValueError(
                    f"expect={self.expect!r} compares two named variants: give variant and baseline"
                )
        elif self.threshold is None:
            raise ValueError(f"expect={self.expect!r} needs a threshold")
        return self

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


def _evaluate(result: EvalResult, finding: Finding, summary: pd.DataFrame) -> FindingResult:
    rows = summary[summary["metric"] == finding.metric]
    models = sorted(result.turns["model"].unique()) if not result.turns.empty else []
    values: dict[str, _Point] = {}
    verdicts: list[bool] = []
    parts: list[str] = []
    for model in models:
        points = _points(rows[rows["model"] == model])
        values.update({f"{variant} · {model}": point for variant, point in points.items()})
        holds, text = _check(finding, points)
        verdicts.append(holds)
        parts.append(text if len(models) == 1 else f"[{model}] {text}")
    holds = bool(verdicts) and all(verdicts)
    where = f"{finding.metric} on {finding.subset.replace('_', '-')} turns"
    verdict = "as predicted" if holds else "NOT shown by these results"
    sentence = f"{where}: {'; '.join(parts) or 'no results'} — {verdict}."
    return FindingResult(finding=finding, values=values, holds=holds, sentence=sentence)


def _points(rows: pd.DataFrame) -> dict[str, _Point]:
    return {
        str(row["variant"]): (float(row["value"]), float(row["ci_low"]), float(row["ci_high"]))
        for row in rows.to_dict("records")
    }


def _check(finding: Finding, points: dict[str, _Point]) -> tuple[bool, str]:
    if finding.expect in _COMPARISONS:
        return _compare(finding, points)
    return _bound(finding, points)


def _compare(finding: Finding, points: dict[str, _Point]) -> tuple[bool, str]:
    base_name, name = str(finding.baseline), finding.variant
    base, other = points.get(base_name), points.get(name)
    if base is None or other is None:
        missing = base_name if base is None else name
        return False, f"no value for {missing!r} (no applicable turns)"
    if finding.expect == "lower":
        holds = other[2] < base[1]
    elif finding.expect == "higher":
        holds = other[1] > base[2]
    else:
        holds = not (other[2] < base[1] or other[1] > base[2])
    text = f"{base_name} {_fmt(base)} vs {name} {_fmt(other)}, expected {finding.expect}"
    return holds, text


def _bound(finding: Finding, points: dict[str, _Point]) -> tuple[bool, str]:
    threshold = float(finding.threshold or 0.0)
    names = sorted(points) if finding.variant == "*" else [finding.variant]
    if not names or any(name not in points for name in names):
        return False, f"no value for {finding.variant!r} (no applicable turns)"

    def ok(point: _Point) -> bool:
        return point[0] >= threshold if finding.expect == "at_least" else point[0] <= threshold

    holds = all(ok(points[name]) for name in names)
    listed = ", ".join(f"{name} {_fmt(points[name])}" for name in names)
    bound = "≥" if finding.expect == "at_least" else "≤"
    return holds, f"{listed}, expected {bound} {threshold:g}"


def _fmt(point: _Point) -> str:
    return f"{point[0]:.3f} [{point[1]:.3f}, {point[2]:.3f}]"
