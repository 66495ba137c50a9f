"""A judge card as HTML: a self-contained page (``card_page``) and a notebook fragment
(``card_fragment``).

No external asset and no script: the picture is SVG embedded as base64 ``<img>`` data (no
text inside it is parsed as markup), and every other string — the judge's name and
configuration (a ``module:attr`` name, an LLM prompt), file names, categories, reference
names, notes — is HTML-escaped.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from citelab.evals.cards import AgreementFigures, CardData, Estimate
from citelab.evals.report._card_plot import card_figure, figure_svg
from citelab.evals.report._html import escape as _e

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
    if estimate is None or estimate.low is None or estimate.high is None:
        return "—"
    return _e(estimate.interval_text(units))


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
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f'<table class="about">{body}</table>'


def _figures_section(card: CardData) -> str:
    head = "<tr><th>figure</th><th>value</th><th>95% interval</th><th>counts</th></tr>"
    rows = []
    for name, shown in _FIGURES:
        estimate = getattr(card.metrics, name)
        if estimate is None:
            continue
        counts = f"{estimate.count} of {estimate.of}" if hasattr(estimate, "count") else ""
        rows.append(
            f"<tr><td>{_e(shown)}</td><td>{_num(estimate.value)}</td>"
            f"<td>{_interval(estimate, card.metrics.claims)}</td><td>{_e(counts)}</td></tr>"
        )
    return f"<h3>Agreement with the labels</h3><table>{head}{''.join(rows)}</table>"


def _confusion_section(figures: AgreementFigures) -> str:
    c = figures.confusion
    return (
        "<h3>Confusion matrix (claims)</h3><table>"
        "<tr><th></th><th>judge: yes</th><th>judge: no</th></tr>"
        f"<tr><th>people: supported</th><td>{c.true_yes}</td><td>{c.false_no}</td></tr>"
        f"<tr><th>people: not supported</th><td>{c.false_yes}</td><td>{c.true_no}</td></tr>"
        "</table>"
    )


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
    return (
        "<h3>Threshold</h3><table>"
        f"<tr><th>score</th><td>{_e(sweep.score)}</td></tr>"
        f"<tr><th>its operating threshold</th><td>{_e(operating)}</td></tr>"
        f"<tr><th>verdicts are score ≥ threshold</th><td>{follows}</td></tr>"
        f"<tr><th>κ-best threshold on these labels (optimistic)</th><td>{best.threshold:.3g} "
        f"(κ {_num(best.kappa)}, accuracy {_num(best.accuracy)}, says yes "
        f"{_num(best.says_yes)})</td></tr></table>"
    )


def _row(name: str, figures: AgreementFigures, css: str = "") -> str:
    auc = figures.auc.value if figures.auc is not None else None
    cells = [
        str(figures.claims),
        _num(figures.says_yes.value),
        _num(figures.accuracy.value),
        _num(figures.macro_f1.value),
        f"{_num(figures.kappa.value)} {_interval(figures.kappa, figures.claims)}",
        _num(auc),
        _num(figures.sensitivity.value),
        _num(figures.specificity.value),
    ]
    attribute = f' class="{css}"' if css else ""
    return f"<tr{attribute}><td>{_e(name)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


_HEAD = (
    "<tr><th>{first}</th><th>claims</th><th>says yes</th><th>accuracy</th><th>macro-F1</th>"
    "<th>κ [95%]</th><th>AUC</th><th>sensitivity</th><th>specificity</th></tr>"
)


def _categories_section(card: CardData) -> str:
    if not card.categories:
        return ""
    rows = "".join(_row(c.category, c.figures, "weak" if c.weak else "") for c in card.categories)
    weak = ", ".join(card.weak_categories) or "none"
    return (
        f"<h3>By category</h3><p>Weak (accuracy interval wholly below the overall "
        f"accuracy): {_e(weak)}</p><table>{_HEAD.format(first='category')}{rows}</table>"
    )


def _grades_section(card: CardData) -> str:
    if not card.grades:
        return ""
    rows = "".join(
        f"<tr><td>{_e(g.grade)}</td><td>{g.claims}</td><td>{_num(g.says_yes.value)}</td>"
        f"<td>{_interval(g.says_yes, g.claims)}</td></tr>"
        for g in card.grades
    )
    return (
        "<h3>Says yes, by the label as written</h3><table><tr><th>label</th><th>claims</th>"
        f"<th>says yes</th><th>95% interval</th></tr>{rows}</table>"
    )


def _references_section(card: CardData) -> str:
    if not card.references:
        return ""
    rows = [_row(f"{card.judge.label} (all claims)", card.metrics)]
    for reference in card.references:
        at = f", yes at ≥ {reference.threshold:g}" if reference.threshold is not None else ""
        rows.append(_row(f"{reference.name} (published outputs{at})", reference.reference))
        rows.append(_row(f"{card.judge.label} (same {reference.claims} claims)", reference.judge))
        diff = reference.kappa_difference
        rows.append(
            f'<tr><td colspan="9" class="note">κ difference ({_e(card.judge.name)} − '
            f"{_e(reference.name)}): {_num(diff.value)} {_interval(diff, reference.claims)}; "
            "outputs from "
            f"{_e(reference.file)}, {reference.not_in_labels} of their ids not in the label "
            "set</td></tr>"
        )
    return (
        "<h3>Reference judges, side by side</h3>"
        f"<table>{_HEAD.format(first='judge')}{''.join(rows)}</table>"
    )


def _published_section(card: CardData) -> str:
    if not card.published:
        return ""
    rows = "".join(
        f"<tr><td>{_e(p.judge)}</td><td>{_num(p.accuracy)}</td><td>{_num(p.kappa)}</td>"
        f"<td>{_e(p.source)}</td></tr>"
        for p in card.published
    )
    return (
        "<h3>Published elsewhere (other data)</h3><table><tr><th>judge</th><th>accuracy</th>"
        f"<th>κ</th><th>source</th></tr>{rows}</table>"
    )


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
