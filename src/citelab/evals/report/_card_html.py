"""A judge card as HTML: a self-contained page (``card_page``) and a notebook fragment
(``card_fragment``).

No external asset and no script: the picture is SVG embedded as base64 ``<img>`` data (no
text inside it is parsed as markup), and every other string — the judge's name and
configuration (a ``module:attr`` name, an LLM prompt), file names, categories, reference
names, notes — is HTML-escaped (the tables by the report's table builder).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from citelab.evals.cards import AgreementFigures, CardData, Estimate
from citelab.evals.report._card_plot import card_figure, figure_svg
from citelab.evals.report._html import Cell, Row
from citelab.evals.report._html import escape as _e
from citelab.evals.report._html import table as html_table

__all__ = ["card_fragment", "card_page"]

_STYLE = """
.citelab-card { font: 14px/1.45 system-ui, sans-serif; color: #222; max-width: 62rem; }
.citelab-card table { border-collapse: collapse; margin: .4rem 0 1rem; }
.citelab-card th, .citelab-card td { border: 1px solid #ccc; padding: .2rem .5rem;
  text-align: right; }
.citelab-card th:first-child, .citelab-card td:first-child { text-align: left; }
.citelab-card .weak { background: #fde2e1; }
.citelab-card table.about td { text-align: left; }
.citelab-card .summary { font-size: 15px; max-width: 50rem; }
.citelab-card .note { color: #555; }
.citelab-card img { max-width: 100%; }
.citelab-card pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; }
"""

_FIGURES = (
    ("accuracy", "accuracy"),
    ("macro_f1", "macro-F1"),
    ("kappa", "Cohen's κ"),
    ("auc", "AUC"),
    ("sensitivity", "sensitivity"),
    ("specificity", "specificity"),
    ("says_yes", "says yes"),
    ("ppv", "PPV (precision)"),
    ("npv", "NPV"),
)


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _interval(estimate: Estimate | None, units: int) -> str:
    """The interval as plain text (the table builder escapes it)."""
    if estimate is None or estimate.low is None or estimate.high is None:
        return "—"
    return estimate.interval_text(units)


def card_page(card: CardData) -> str:
    """The whole page."""
    title = f"Judge card: {card.judge.label} on {card.labels.name}"
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{card_fragment(card, style=False)}</body></html>\n"
    )


def card_fragment(card: CardData, *, style: bool = True) -> str:
    """The card as one ``<div>`` (with its own styles unless ``style`` is false)."""
    parts = [
        f"<style>{_STYLE}</style>" if style else "",
        '<div class="citelab-card">',
        f"<h2>Judge card: {_e(card.judge.label)}</h2>",
        f'<p class="summary">{_e(card.summary())}</p>',
        _labels_section(card),
        _figures_section(card),
        _confusion_section(card.metrics),
        _picture(card),
        _threshold_section(card),
        _categories_section(card),
        _grades_section(card),
        _references_section(card),
        _published_section(card),
        _notes_section(card),
        _config_section(card),
        "</div>",
    ]
    return "\n".join(part for part in parts if part)


def _labels_section(card: CardData) -> str:
    labels = card.labels
    rows = [
        ("label set", labels.name),
        ("read as", f"{labels.format}: {labels.description}"),
        ("who labelled it", labels.provenance or "not known to citelab"),
        ("pairs, claims", f"{labels.pairs} pairs, {labels.claims} claims"),
        ("labels", labels.mapping_text()),
        ("sha256", labels.sha256 or "—"),
        ("intervals", f"95% percentile bootstrap over claims, {card.bootstrap.resamples} "
                      f"resamples, seed {card.bootstrap.seed}"),
    ]  # fmt: skip
    return html_table([], [[Cell(k, header=True), v] for k, v in rows], cls="about")


def _figures_section(card: CardData) -> str:
    rows = []
    for name, shown in _FIGURES:
        estimate = getattr(card.metrics, name)
        if estimate is None:
            continue
        counts = f"{estimate.count} of {estimate.of}" if hasattr(estimate, "count") else ""
        interval = _interval(estimate, card.metrics.claims)
        rows.append([shown, _num(estimate.value), interval, counts])
    head = ["figure", "value", "95% interval", "counts"]
    return f"<h3>Agreement with the labels</h3>{html_table(head, rows)}"


def _confusion_section(figures: AgreementFigures) -> str:
    c = figures.confusion
    rows = [
        [Cell("people: supported", header=True), c.true_yes, c.false_no],
        [Cell("people: not supported", header=True), c.false_yes, c.true_no],
    ]
    return "<h3>Confusion matrix (claims)</h3>" + html_table(["", "judge: yes", "judge: no"], rows)


def _picture(card: CardData) -> str:
    svg = figure_svg(card_figure(card))
    data = base64.b64encode(svg).decode("ascii")
    alt = "ROC curve and figures against the threshold"
    return f'<img alt="{_e(alt)}" src="data:image/svg+xml;base64,{data}">'


def _threshold_section(card: CardData) -> str:
    sweep = card.threshold
    if sweep is None:
        return '<p class="note">The judge gives verdicts only: no score to sweep.</p>'
    best = sweep.best
    operating = "none" if sweep.operating is None else f"{sweep.operating:g}"
    follows = "yes" if sweep.verdicts_follow_score else "no"
    rows = [
        ("score", sweep.score),
        ("its operating threshold", operating),
        ("verdicts are score ≥ threshold", follows),
        ("κ-best threshold on these labels (optimistic)",
         f"{best.threshold:.3g} (κ {_num(best.kappa)}, accuracy {_num(best.accuracy)}, says yes "
         f"{_num(best.says_yes)})"),
    ]  # fmt: skip
    return "<h3>Threshold</h3>" + html_table([], [[Cell(k, header=True), v] for k, v in rows])


def _row(name: str, figures: AgreementFigures, css: str | None = None) -> Row:
    auc = figures.auc.value if figures.auc is not None else None
    cells = [
        name,
        str(figures.claims),
        _num(figures.says_yes.value),
        _num(figures.accuracy.value),
        _num(figures.macro_f1.value),
        f"{_num(figures.kappa.value)} {_interval(figures.kappa, figures.claims)}",
        _num(auc),
        _num(figures.sensitivity.value),
        _num(figures.specificity.value),
    ]
    return Row(cells, cls=css)


def _head(first: str) -> list[str]:
    """The header of :func:`_row`'s tables, whose first column is ``first``."""
    return [first, "claims", "says yes", "accuracy", "macro-F1", "κ [95%]", "AUC", "sensitivity",
            "specificity"]  # fmt: skip


def _categories_section(card: CardData) -> str:
    if not card.categories:
        return ""
    rows = [_row(c.category, c.figures, "weak" if c.weak else None) for c in card.categories]
    weak = ", ".join(card.weak_categories) or "none"
    return (
        f"<h3>By category</h3><p>Weak (accuracy interval wholly below the overall "
        f"accuracy): {_e(weak)}</p>{html_table(_head('category'), rows)}"
    )


def _grades_section(card: CardData) -> str:
    if not card.grades:
        return ""
    rows = [
        [g.grade, g.claims, _num(g.says_yes.value), _interval(g.says_yes, g.claims)]
        for g in card.grades
    ]
    head = ["label", "claims", "says yes", "95% interval"]
    return f"<h3>Says yes, by the label as written</h3>{html_table(head, rows)}"


def _references_section(card: CardData) -> str:
    if not card.references:
        return ""
    rows: list[Row | list[Cell]] = [_row(f"{card.judge.label} (all claims)", card.metrics)]
    for reference in card.references:
        at = f", yes at ≥ {reference.threshold:g}" if reference.threshold is not None else ""
        rows.append(_row(f"{reference.name} (published outputs{at})", reference.reference))
        rows.append(_row(f"{card.judge.label} (same {reference.claims} claims)", reference.judge))
        diff = reference.kappa_difference
        note = (
            f"κ difference ({card.judge.name} − {reference.name}): {_num(diff.value)} "
            f"{_interval(diff, reference.claims)}; outputs from {reference.file}, "
            f"{reference.not_in_labels} of their ids not in the label set"
        )
        rows.append([Cell(note, cls="note", colspan=len(_head("judge")))])
    return f"<h3>Reference judges, side by side</h3>{html_table(_head('judge'), rows)}"


def _published_section(card: CardData) -> str:
    if not card.published:
        return ""
    rows = [[p.judge, _num(p.accuracy), _num(p.kappa), p.source] for p in card.published]
    head = ["judge", "accuracy", "κ", "source"]
    return f"<h3>Published elsewhere (other data)</h3>{html_table(head, rows)}"


def _notes_section(card: CardData) -> str:
    items = "".join(f"<li>{_e(note)}</li>" for note in card.notes)
    return f'<h3>Read with care</h3><ul class="note">{items}</ul>' if items else ""


def _config_section(card: CardData) -> str:
    config: dict[str, Any] = card.judge.config
    text = json.dumps(config, indent=2, ensure_ascii=False, default=str, sort_keys=True)
    return (
        f"<details><summary>judge configuration</summary><pre>{_e(text)}</pre></details>"
        f'<p class="note">citelab {_e(card.citelab_version)} · {_e(card.format)}</p>'
    )
