"""The report's judge sections: which judge made each judged metric, its card, κ and weak
categories, loud warnings (no card, low κ, an ``_alce`` metric not judged by ALCE's judge),
and citation recall and precision as judged and corrected for the judge's error.

Every string (judge names, label set names, categories) comes from configuration or files a
user gave: all of it is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from citelab.evals.report._html import Cell, Safe
from citelab.evals.report._html import escape as _e
from citelab.evals.report._html import table as html_table
from citelab.evals.results import MIN_FAULT_UNITS, JudgedMetric, card_view

__all__ = [
    "DOES_NOT_FIT",
    "DOMAIN_LINE",
    "WARNING_MARK",
    "corrected_cell",
    "corrected_html",
    "faults_html",
    "judge_line",
    "judges_html",
    "label_step",
    "labelled_html",
]


def _kappa(judge: JudgedMetric) -> str:
    if judge.kappa is None:
        return "κ undefined" if judge.card else "no card"
    if judge.kappa_low is None:
        interval = ""
    elif judge.kappa_low == judge.kappa_high:
        interval = " (too few units for an interval)"
    else:
        interval = f" [{judge.kappa_low:.2f}, {judge.kappa_high:.2f}]"
    return f"κ {judge.kappa:.2f}{interval}"


def judge_line(judge: JudgedMetric) -> str:
    """The muted line under a judged metric's name: its judge and κ (HTML)."""
    mark = (
        f' <span class="warn" title="{_e("; ".join(judge.warnings))}">{WARNING_MARK}</span>'
        if judge.warnings
        else ""
    )
    return f'<br><span class="muted">judged by {_e(judge.judge)} · {_e(_kappa(judge))}</span>{mark}'


DOMAIN_LINE = (
    "Agreement varies by domain: the default judge lexical_trained reaches κ 0.42 on WiCE's "
    "held-out test claims but κ 0.33 on 1,552 held-out claims of real LLM and generative-"
    "search answers (κ 0.15, 0.44 and 0.59 on its three sources), and published judges move "
    "the same way (AttributionBench: TRUE κ ≈ 0.10 / 0.37 / 0.54, GPT-4 κ ≈ 0.20 / 0.44 / "
    "0.67). This run has no labels of its own: label 100 of its pairs (citelab.Labeller) to "
    "know how far its judge agrees on these answers."
)
"""The judges section's one line when a run has no labels of its own (figures: README)."""

WARNING_MARK = "⚑"
"""A warning about a judge (no card, low agreement, not comparable); ⚠ means few units."""


def judges_html(judges: Sequence[JudgedMetric], has_labels: bool = False) -> str:
    """The judges section: warnings first, then one row per judged metric; without labels
    of the run's own, the line that says agreement varies by domain."""
    if not judges:
        return ""
    warnings = list(dict.fromkeys(w for judge in judges for w in judge.warnings))
    loud = (
        '<section class="errors judge-warnings">'
        + "".join(f"<p><b>{WARNING_MARK} {_e(w)}</b></p>" for w in warnings)
        + "</section>"
        if warnings
        else ""
    )
    rows = [
        [
            j.metric,
            j.judge,
            Safe(
                f"{_e(j.card or 'none: uncalibrated')} "
                f'<span class="muted">({_e(j.card_source)})</span>'
            ),
            Cell(_kappa(j), cls="num"),
            ", ".join(j.weak_categories) or "—",
        ]
        for j in judges
    ]
    head = ["metric", "judge", "card", "agreement with people", "weak categories"]
    return (
        "<h2>Judges: who decided the judged numbers</h2>"
        '<p class="muted">Every judged metric is a judge\'s verdicts counted. Its card says how '
        "far the judge agrees with people (Cohen's κ with its 95% interval) on the card's "
        "labelled set; a judge without a card is uncalibrated. Agreement on the card's set may "
        "not carry over to other text.</p>"
        + ("" if has_labels else f'<p class="domain">{_e(DOMAIN_LINE)}</p>')
        + loud
        + html_table(head, rows)
    )


def _interval(value: Any, low: Any, high: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if low is None or (isinstance(low, float) and math.isnan(low)):
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


LABELS_TO_FIX = 100
"""How many of a run's own pairs the report asks a researcher to label when a card does not
fit (about what a card needs for an interval of ±0.1 on sensitivity and specificity)."""

DOES_NOT_FIT = "— the card does not fit these answers"


def label_step(suite: str | None, judge: str = "lexical_trained") -> str:
    """The one step that fixes a card that does not fit: label a sample of this run's own
    pairs and estimate from those labels with the judge (plain text: commands to copy)."""
    folder = f"evaluations/reports/{suite}" if suite else "RUN_FOLDER"
    rescore = (
        f"citelab eval --suite {suite} --rescore --labels labels.jsonl"
        if suite
        else "citelab score FILE --labels labels.jsonl"
    )
    return (
        f"label {LABELS_TO_FIX} of this run's pairs — in a notebook, "
        f'citelab.Labeller("{folder}", "labels.jsonl", sample={LABELS_TO_FIX}) — then '
        f"{rescore} (the judge's verdicts and your labels together: method ppi)"
    )


def corrected_cell(row: Any) -> str:
    """A corrected value as the report shows it (plain text, never bold): its interval, or
    why there is no figure (no card, not correctable, the card does not fit these answers,
    a zero-width interval)."""
    fixed = _interval(row["corrected"], row["corrected_low"], row["corrected_high"])
    if row.get("clipped"):
        return f"{DOES_NOT_FIT} (clipped): label this run's pairs (below)"
    if fixed.startswith("—"):
        return "— (the judge has no card)" if row["card"] is None else "— (not correctable)"
    low, high = row["corrected_low"], row["corrected_high"]
    if isinstance(low, float) and isinstance(high, float) and low == high:
        return "— too few units (a zero-width interval)"
    return fixed


def corrected_html(
    corrected: pd.DataFrame, judges: Sequence[JudgedMetric], suite: str | None = None
) -> str:
    """Citation recall and precision as judged and corrected (empty without such metrics);
    ``suite`` names the run's suite in the step that fixes a card that does not fit."""
    if corrected.empty:
        return ""
    rows = []
    for row in card_view(corrected).to_dict("records"):
        judged = _interval(row["value"], row["ci_low"], row["ci_high"])
        rates = (
            "—" if row["card"] is None else f"{row['sensitivity']:.2f} / {row['specificity']:.2f}"
        )
        rows.append(
            [
                f"{row['variant']} · {row['model']}",
                row["metric"],
                row["judge"],
                Cell(judged, cls="num"),
                Cell(corrected_cell(row), cls="num"),
                Cell(rates, cls="num"),
            ]
        )
    clipped = corrected["clipped"].fillna(False).astype(bool)
    judge = str(corrected["judge"].iloc[0]).split(" ")[0]
    fix = (
        f'<p class="fix"><b>{clipped.sum()} of {len(corrected)} corrections: the card does not '
        f"fit these answers.</b> The one step that fixes it: {_e(label_step(suite, judge))}."
        "</p>"
        if clipped.any()
        else ""
    )
    head = [
        "variant · model",
        "metric",
        "judge",
        "as judged",
        "corrected",
        "sensitivity / specificity",
    ]
    return (
        "<h3>Judged and corrected for the judge's error</h3>"
        '<p class="muted">Corrected: the Rogan–Gladen estimate from the card\'s sensitivity '
        "and specificity, applied to the units the judge decided, clipped; its 95% interval "
        "resamples the cases and the card's sensitivity and specificity together (Beta "
        "posteriors from its confusion counts), so a card made on few labels gives a wide "
        "interval. It assumes the judge errs on these answers as on the card's labelled set "
        "and independently of the answer (the card's domain: its labelled set). When the judged "
        "value lies outside what the card's rates can produce (the estimate is clipped), these "
        "answers are unlike the card's labelled set: no figure is shown, only the step that "
        "gives one. See docs/corrected-metrics.md.</p>" + html_table(head, rows) + fix
    )


def labelled_html(corrected: pd.DataFrame) -> str:
    """The metrics estimated from the run's own labels (empty when the run has none)."""
    if corrected.empty or "method" not in corrected:
        return ""
    estimated = corrected[corrected["method"].isin(["ppi", "labels"])]
    if estimated.empty:
        return ""
    rows = []
    for row in estimated.to_dict("records"):
        value = _interval(row["value"], row["ci_low"], row["ci_high"])
        if row["labels"] == 0:
            value = "—"
        note = row.get("note") or ""
        if row["too_few"] and row["labels"]:
            value = f"{value} ⚠"
        width = "—" if row["labels"] == 0 or row["width"] != row["width"] else f"{row['width']:.3f}"
        rows.append(
            [
                f"{row['variant']} · {row['model']}",
                row["metric"],
                row["method"],
                Cell(int(row["labels"]), cls="num"),
                Cell(value, cls="num"),
                Cell(width, cls="num"),
                note,
            ]
        )
    return (
        "<h3>Estimated from this run's own labels</h3>"
        "<p class=\"muted\"><i>ppi</i>: people's labels of a sample of this run's units and "
        "the judge's verdicts on all of them together (prediction-powered inference, "
        "power-tuned: never wider than the labels alone, and valid however wrong the judge "
        "is); <i>labels</i>: the labels alone. Each assumes only that the labels are right "
        "and were drawn as their file says. ⚠ too few units: fewer than 30 labels, or "
        "no spread among them (the note says which), shown with Wilson's interval. See "
        "docs/corrected-metrics.md.</p>"
        + html_table(
            ["variant · model", "metric", "method", "labels", "estimate", "width", "note"], rows
        )
    )


TOO_FEW = "too few units"
"""What a fault-agreement figure from under :data:`MIN_FAULT_UNITS` units reads beside it."""


def faults_html(faults: pd.DataFrame) -> str:
    """The judge's sensitivity and specificity on this run's injected faults, beside its
    card's (empty when no perturbing model answered)."""
    if faults.empty:
        return ""
    rows = []
    for row in faults.to_dict("records"):
        value = _interval(row["value"], row["ci_low"], row["ci_high"])
        if row["too_few"]:
            value = f"{value} ({TOO_FEW})"
        card = _interval(row["card_value"], row["card_low"], row["card_high"])
        rows.append(
            [
                f"{row['variant']} · {row['model']}",
                row["judge"],
                row["measure"],
                Cell(f"{int(row['agreed'])} of {int(row['units'])}", cls="num"),
                Cell(value, cls="num"),
                Cell(card, cls="num"),
                row["card"] or "none",
            ]
        )
    head = [
        "variant · model",
        "judge",
        "measure",
        "agreed",
        "on injected faults",
        "on the card",
        "card",
    ]
    return (
        "<h3>Judge agreement on injected faults</h3>"
        '<p class="muted">Here the truth comes from the perturbing model: it injected citation '
        "faults at known rates into this run's own answers and recorded each one, so every "
        "citation it left is known to be intact or faulted, and the judge's agreement is "
        "measured where the truth is known. Sensitivity: the share of intact citations the "
        "judge calls supported; specificity: the share of faulted ones it calls not supported "
        "(the citation_precision verdict of a statement citing one source; 95% Wilson "
        "interval; a faulted source that happens to state the claim too counts against the "
        f'judge). Under {MIN_FAULT_UNITS} units a figure says "{TOO_FEW}". Beside it, the '
        "same figure on the judge's card.</p>" + html_table(head, rows)
    )
