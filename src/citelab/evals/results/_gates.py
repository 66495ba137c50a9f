"""Gates: checks a run must pass, for CI (``[[gates]]`` in a suite, ``--non-inferior`` in
``citelab compare``). A failed gate makes ``citelab eval`` and ``citelab compare`` exit 3.

Two kinds:

thresholds (``min`` and/or ``max``, as findings write them)
    the metric of ``variant`` (``"*"``, the default: of every variant) on ``subset`` against
    a number. ``by = "value"`` (the default) compares the value; ``by = "interval"`` asks for
    95% confidence: the interval's worse end must pass (``ci_low >= min``, ``ci_high <=
    max``).
non-inferiority (``not_worse_than = "baseline"`` with ``margin``)
    ``variant`` against another on the cases both scored, with the paired bootstrap interval of
    their difference (the one the report's differences table shows, at ``confidence``): it
    passes when the interval's worse end is no worse than ``margin`` (higher-is-better
    metrics: ``ci_low >= -margin``; lower-is-better: ``ci_high <= margin``). "B is not worse
    than A by more than 0.02 with 95% confidence." When the run has labels of its own and
    both variants have labels of the metric (30 or more), the gate reads the paired PPI++
    difference from their labels and the judge instead (:meth:`EvalResult.label_differences`);
    ``method`` says which decided, and the sentence why a gate fell back to the judged one.

A gate is checked per model (but those it names in ``skip_models``) and passes only if it
passes for each. A gate that has nothing to
check (no value for a variant it names: no applicable turn, a subset not run) is *not testable
here*, and fails the run too: a CI check that could not be made has not passed. A
non-inferiority gate whose two variants gave identical answers (for a model) is *not
informative*: its difference is 0 by construction, so it is never reported as passed
(``passed`` is None); it fails the run when the gate is ``required`` (the default), and is
only reported when ``required = false``. Findings with ``required = true`` are gates as well
(see :mod:`citelab.evals.results._findings`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from citelab.evals._stats import MIN_UNITS
from citelab.evals.results._findings import (
    FindingResult,
    Verdict,
    identical_answers,
    point_text,
    subset_words,
    worst,
)
from citelab.evals.results._labelled import difference_too_few
from citelab.evals.results._results import EvalResult, select_turns
from citelab.evals.results._thresholds import refuse_old_spellings, within

__all__ = [
    "Gate",
    "GateResult",
    "evaluate_gates",
    "failed_gates",
    "required_findings",
]


class Gate(BaseModel):
    """A check the run must pass; see the module docs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str = Field(default="", pattern=r"^[A-Za-z_][\w.]*$|^$")
    """The metric column checked."""
    min: float | None = None
    """Passes when the value (or the interval's lower end, ``by = "interval"``) is at least this."""
    max: float | None = None
    """Passes when the value (or the interval's upper end) is at most this."""
    by: Literal["value", "interval"] = "value"
    """What a threshold compares: the value, or the 95% interval's worse end."""
    variant: str = Field(default="*", min_length=1)
    """The variant checked (``"*"``: every variant; a non-inferiority gate names one)."""
    skip_models: list[str] = []
    """Models (by their name in results) the gate does not check: say, a perturbing model
    whose faults are there on purpose, to measure the judge. A name the run lacks is no
    error (``--model`` may have replaced the suite's models)."""
    not_worse_than: str | None = None
    """The reference variant of a non-inferiority gate."""
    margin: float | None = Field(default=None, ge=0)
    """How much worse than the reference the variant may be (a non-inferiority gate)."""
    confidence: float = Field(default=0.95, gt=0, lt=1)
    """The confidence of the paired interval of a non-inferiority gate."""
    subset: str = "all"
    """Which turns: ``all``, ``multi_round``, ``single_round`` or ``tag:<name>``."""
    title: str = ""
    """How the report names it (default: the check written out)."""
    required: bool = True
    """Whether a gate that is not informative here (identical answers compared) fails the
    run; a gate that fails, or cannot be tested, always does."""

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any) -> Any:
        refuse_old_spellings(data)
        return data

    @model_validator(mode="after")
    def _one_kind(self) -> Gate:
        if not self.metric:
            raise ValueError("a gate needs a metric")
        threshold = self.min is not None or self.max is not None
        if self.not_worse_than is not None:
            if threshold:
                raise ValueError("a gate is a threshold (min/max) or not_worse_than, not both")
            if self.margin is None:
                raise ValueError("not_worse_than needs a margin (e.g. margin = 0.02)")
            if self.variant in {"*", self.not_worse_than}:
                raise ValueError("not_worse_than compares a named variant with another")
        elif not threshold:
            raise ValueError("a gate needs min, max, or not_worse_than with a margin")
        elif self.margin is not None:
            raise ValueError("margin belongs to a not_worse_than gate")
        return self

    @property
    def kind(self) -> Literal["threshold", "non_inferiority"]:
        return "threshold" if self.not_worse_than is None else "non_inferiority"

    @property
    def name(self) -> str:
        """The title, else the check written out."""
        if self.title:
            return self.title
        where = "" if self.subset == "all" else f" on {self.subset} turns"
        if self.kind == "non_inferiority":
            return (
                f"{self.metric} of {self.variant} not worse than {self.not_worse_than} by more "
                f"than {self.margin:g} ({self.confidence:.0%} confidence){where}"
            )
        bounds = []
        if self.min is not None:
            bounds.append(f">= {self.min:g}")
        if self.max is not None:
            bounds.append(f"<= {self.max:g}")
        scope = "every variant" if self.variant == "*" else self.variant
        by = " (95% interval)" if self.by == "interval" else ""
        return f"{self.metric}{by} {' and '.join(bounds)} for {scope}{where}"


class GateResult(BaseModel):
    """A gate (or a required finding) checked against the results."""

    name: str
    """What was checked, in words."""
    verdict: Verdict
    """``holds`` (passed), ``fails``, ``untestable`` (not testable here: it fails too) or
    ``uninformative`` (identical answers compared: neither passed nor failed)."""
    passed: bool | None
    """True when it holds, False when it fails or cannot be tested, None when not
    informative."""
    required: bool = True
    """Whether not informative fails the run (see :attr:`Gate.required`)."""
    fails_run: bool
    """Whether this result fails ``citelab eval`` / ``compare`` (exit 3)."""
    sentence: str
    """The figures it looked at and its verdict."""
    gate: Gate | None = None
    """The gate; None for a required finding."""
    method: Literal["ppi", "judged", "ppi and judged"] | None = None
    """What decided a non-inferiority gate: ``ppi`` (the paired difference from both
    variants' own labels and the judge), ``judged`` (the judged difference: a side has no
    labels, or too few), or each for some models; None for other checks."""


def evaluate_gates(
    result: EvalResult,
    gates: Sequence[Gate],
    *,
    summaries: Mapping[str, pd.DataFrame] | None = None,
    differences: Mapping[tuple[str, str, float], pd.DataFrame] | None = None,
) -> list[GateResult]:
    """Each gate checked. ``summaries`` maps a subset to ``result.summary(subset=...)`` and
    ``differences`` maps ``(baseline, subset, confidence)`` to ``result.differences(...)``
    already computed; the others are computed here, once each."""
    known = dict(summaries or {})
    paired = dict(differences or {})
    estimated: dict[tuple[str, str, float], pd.DataFrame] = {}
    checked = []
    for gate in gates:
        if gate.kind == "threshold":
            if gate.subset not in known:
                known[gate.subset] = result.summary(subset=gate.subset)
            checked.append(_threshold(result, gate, known[gate.subset]))
            continue
        key = (str(gate.not_worse_than), gate.subset, gate.confidence)
        if key not in paired:
            paired[key] = result.differences(key[0], subset=gate.subset, confidence=gate.confidence)
        if key not in estimated:
            estimated[key] = result.label_differences(
                key[0], subset=gate.subset, confidence=gate.confidence
            )
        checked.append(_non_inferior(result, gate, paired[key], estimated[key]))
    return checked


def required_findings(findings: Sequence[FindingResult]) -> list[GateResult]:
    """The required findings as gates: passed only when the finding holds."""
    return [
        GateResult(
            name=f"required finding: {checked.finding.title}",
            verdict=checked.verdict,
            passed=_passed(checked.verdict),
            fails_run=checked.verdict != "holds",
            sentence=checked.sentence,
        )
        for checked in findings
        if checked.finding.required
    ]


def failed_gates(gates: Sequence[GateResult]) -> list[GateResult]:
    """The gates that fail the run (failed, not testable here, or required and not
    informative)."""
    return [gate for gate in gates if gate.fails_run]


def _passed(verdict: Verdict) -> bool | None:
    return None if verdict == "uninformative" else verdict == "holds"


def _models(result: EvalResult, gate: Gate) -> list[str]:
    models = sorted(result.turns["model"].unique()) if not result.turns.empty else []
    return [model for model in models if model not in gate.skip_models]


def _threshold(result: EvalResult, gate: Gate, summary: pd.DataFrame) -> GateResult:
    rows = summary[summary["metric"] == gate.metric]
    verdicts: list[Verdict] = []
    parts: list[str] = []
    models = _models(result, gate)
    for model in models:
        mine = rows[rows["model"] == model]
        points: dict[str, Mapping[Any, Any]] = {
            str(r["variant"]): r for r in mine.to_dict("records")
        }
        names = sorted(points) if gate.variant == "*" else [gate.variant]
        verdict: Verdict
        if not points or any(name not in points for name in names):
            verdict, text = "untestable", _why_untestable(result, gate, names, points)
        else:
            oks = [_within(gate, points[name]) for name in names]
            verdict = "holds" if all(oks) else "fails"
            text = ", ".join(_point_text(gate, name, points[name]) for name in names)
        verdicts.append(verdict)
        parts.append(text if len(models) == 1 else f"[{model}] {text}")
    return _result(gate, verdicts, parts)


def _within(gate: Gate, row: Mapping[Any, Any]) -> bool:
    low = float(row["ci_low"] if gate.by == "interval" else row["value"])
    high = float(row["ci_high"] if gate.by == "interval" else row["value"])
    return within(low, high, gate.min, gate.max)


def _point_text(gate: Gate, name: str, row: Mapping[Any, Any]) -> str:
    point = (float(row["value"]), float(row["ci_low"]), float(row["ci_high"]))
    few = float(row["units"]) if row.get("too_few") else None
    return f"{name} {point_text(point, few)}"


def _non_inferior(
    result: EvalResult, gate: Gate, differences: pd.DataFrame, estimated: pd.DataFrame
) -> GateResult:
    """Per model: on the ppi difference when both variants have labels of the metric,
    else on the judged (paired bootstrap) difference, saying why."""
    rows = differences[
        (differences["metric"] == gate.metric) & (differences["variant"] == gate.variant)
    ]
    labelled = estimated[
        (estimated["metric"] == gate.metric) & (estimated["variant"] == gate.variant)
    ]
    verdicts: list[Verdict] = []
    parts: list[str] = []
    methods: list[str] = []
    models = _models(result, gate)
    for model in models:
        mine = rows[rows["model"] == model].to_dict("records")
        ppi = labelled[labelled["model"] == model].to_dict("records")
        if not mine:
            verdicts.append("untestable")
            text = (
                f"no {subset_words(gate.subset)} turns in these results"
                if select_turns(result.turns, gate.subset).empty
                else f"no case where both {gate.variant!r} and {gate.not_worse_than!r} have a "
                f"{gate.metric} value (not run, or the metric applies to none)"
            )
        else:
            usable = ppi and not ppi[0]["too_few"]
            method = "ppi" if usable else "judged"
            methods.append(method)
            verdict, text = _paired_verdict(gate, ppi[0] if usable else mine[0], method)
            if not usable:
                text += f" ({_why_judged(result, gate, ppi[0] if ppi else None)})"
            if identical_answers(
                result, str(gate.not_worse_than), gate.variant, model, gate.subset
            ):
                verdict = "uninformative"
                text += (
                    f"; but every answer of {gate.variant} is identical to "
                    f"{gate.not_worse_than}'s, so the difference is 0 by construction"
                )
            verdicts.append(verdict)
        parts.append(text if len(models) == 1 else f"[{model}] {text}")
    decided = sorted(set(methods), key=["ppi", "judged"].index)
    by = " and ".join(decided) if decided else None
    return _result(gate, verdicts, parts).model_copy(update={"method": by})


def _paired_verdict(gate: Gate, row: Mapping[Any, Any], method: str) -> tuple[Verdict, str]:
    margin = float(gate.margin or 0.0)
    low, high = float(row["ci_low"]), float(row["ci_high"])
    higher = _higher_is_better(row)
    holds = low >= -margin if higher else high <= margin
    bound = f"lower end ≥ {-margin:+g}" if higher else f"upper end ≤ {margin:+g}"
    what = (
        f"ppi difference (both variants' labels and the judge; {int(row['labels'])} labels a "
        "side at least)"
        if method == "ppi"
        else "judged difference"
    )
    few = ""
    if row.get("too_few"):
        units = float(row["units"])
        few = f" (too few units: {units:g})" if units < MIN_UNITS else " (too few units, all alike)"
    text = (
        f"{gate.variant} − {gate.not_worse_than} = {float(row['difference']):+.3f} "
        f"[{low:+.3f}, {high:+.3f}] on {int(row['cases'])} paired cases"
        f"{few if method != 'ppi' else ''}, {what}, needed: {bound}"
    )
    return ("holds" if holds else "fails"), text


def _higher_is_better(row: Mapping[Any, Any]) -> bool:
    """A difference row's direction (the estimated rows are of citation recall and
    precision, where higher is better)."""
    return bool(row.get("higher_is_better", True))


def _why_judged(result: EvalResult, gate: Gate, ppi: Mapping[Any, Any] | None) -> str:
    if ppi is not None:
        return f"{difference_too_few(int(ppi['labels']))}: not the ppi difference"
    if result.labels is None:
        return "no labels of this run: the judge's verdicts alone"
    return (
        f"{gate.variant!r} or {gate.not_worse_than!r} has no labels of {gate.metric}: the "
        "judge's verdicts alone"
    )


_WORDS: dict[str, str] = {
    "holds": "passed",
    "fails": "FAILED",
    "untestable": "not testable here (a gate that cannot be checked fails)",
    "uninformative": "not informative (neither passed nor failed)",
}


def _result(gate: Gate, verdicts: list[Verdict], parts: list[str]) -> GateResult:
    verdict = worst(verdicts) if verdicts else "untestable"
    text = "; ".join(parts) or "no results"
    words = _WORDS[verdict]
    if verdict == "uninformative" and gate.required:
        words = "not informative, and the gate is required: it fails the run"
    return GateResult(
        name=gate.name,
        verdict=verdict,
        passed=_passed(verdict),
        required=gate.required,
        fails_run=verdict != "holds" and (verdict != "uninformative" or gate.required),
        sentence=f"{text} — {words}.",
        gate=gate,
    )


def _why_untestable(
    result: EvalResult, gate: Gate, names: Sequence[str], points: Mapping[str, Any]
) -> str:
    if select_turns(result.turns, gate.subset).empty:
        return f"no {subset_words(gate.subset)} turns in these results"
    missing = [name for name in names if name not in points] or ["any variant"]
    listed = ", ".join(repr(name) for name in missing)
    return f"no {gate.metric} value for {listed} (not run, or the metric applies to no turn)"
