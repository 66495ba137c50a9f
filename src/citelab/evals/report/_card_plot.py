"""A judge card's picture, drawn as the report draws its plots: a matplotlib ``Figure`` made
outside pyplot (no backend switch, no global state), and SVG bytes for HTML.

Left: the ROC curve of the judge's score (when it has one), its operating point, and each
reference's operating point on the claims it covers. Right: accuracy, κ, sensitivity,
specificity and says-yes against the threshold, the operating and κ-best thresholds marked.
A judge with verdicts only gets the left panel with its one point.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from citelab.evals.cards import AgreementFigures, CardData

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["card_figure", "figure_svg"]

_CURVES = (
    ("accuracy", "#1f77b4"),
    ("kappa", "#d62728"),
    ("sensitivity", "#2ca02c"),
    ("specificity", "#9467bd"),
    ("says_yes", "#7f7f7f"),
)
_MARKERS = ["s", "^", "D", "v", "P", "X"]


def card_figure(card: CardData) -> Figure:
    """The card's figure (see the module docs)."""
    from matplotlib.figure import Figure

    scored = card.threshold is not None
    figure = Figure(figsize=(10.0 if scored else 5.0, 4.2))
    roc = figure.add_subplot(1, 2 if scored else 1, 1)
    _roc_panel(roc, card)
    if scored:
        _threshold_panel(figure.add_subplot(1, 2, 2), card)
    figure.suptitle(f"{card.judge.label} on {card.labels.name} ({card.metrics.claims} claims)",
                    fontsize=10)  # fmt: skip
    figure.tight_layout()
    return figure


def _point(figures: AgreementFigures) -> tuple[float, float] | None:
    sensitivity, specificity = figures.sensitivity.value, figures.specificity.value
    if sensitivity is None or specificity is None:
        return None
    return 1.0 - specificity, sensitivity


def _roc_panel(axis: Any, card: CardData) -> None:
    if card.threshold is not None:
        points = [
            (1.0 - p.specificity, p.sensitivity)
            for p in card.threshold.points
            if p.specificity is not None and p.sensitivity is not None
        ]
        xs = [0.0, *sorted(x for x, _ in points), 1.0]
        ys = [0.0, *sorted(y for _, y in points), 1.0]
        auc = card.metrics.auc.value if card.metrics.auc is not None else None
        label = f"{card.judge.name} score" + (f" (AUC {auc:.3f})" if auc is not None else "")
        axis.plot(xs, ys, color="#1f77b4", linewidth=1.2, label=label)
    axis.plot([0, 1], [0, 1], color="#bbbbbb", linewidth=0.8, linestyle=":")
    own = _point(card.metrics)
    if own is not None:
        axis.plot(*own, "o", color="#1f77b4", markersize=7, label=f"{card.judge.label} verdicts")
    for number, reference in enumerate(card.references):
        point = _point(reference.reference)
        if point is not None:
            at = f" at {reference.threshold:g}" if reference.threshold is not None else ""
            axis.plot(
                *point,
                _MARKERS[number % len(_MARKERS)],
                color="#d62728",
                markersize=7,
                label=f"{reference.name}{at} ({reference.claims} claims)",
            )
    axis.set_xlim(-0.02, 1.02)
    axis.set_ylim(-0.02, 1.02)
    axis.set_xlabel("1 − specificity (unsupported claims called supported)")
    axis.set_ylabel("sensitivity (supported claims called supported)")
    axis.legend(fontsize=7, loc="lower right")
    axis.grid(linewidth=0.3)


def _threshold_panel(axis: Any, card: CardData) -> None:
    sweep = card.threshold
    assert sweep is not None
    thresholds = [p.threshold for p in sweep.points]
    for name, color in _CURVES:
        values = [getattr(p, name) for p in sweep.points]
        axis.plot(
            thresholds,
            [float("nan") if v is None else v for v in values],
            color=color,
            linewidth=1.1,
            label=name.replace("_", "-"),
        )
    if sweep.operating is not None:
        axis.axvline(sweep.operating, color="#333333", linewidth=0.9, label="its threshold")
    axis.axvline(sweep.best.threshold, color="#333333", linewidth=0.9, linestyle="--",
                 label="κ-best here (optimistic)")  # fmt: skip
    axis.set_xlabel(f"threshold on the judge's {sweep.score}")
    axis.set_ylim(-0.05, 1.05)
    axis.legend(fontsize=7, loc="best")
    axis.grid(linewidth=0.3)


def figure_svg(figure: Figure) -> bytes:
    """SVG bytes, the same for the same figure (fixed ids, no date)."""
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "citelab"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()
