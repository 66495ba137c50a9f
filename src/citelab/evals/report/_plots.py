"""The report's plots, as matplotlib figures made outside pyplot (no backend switch, no global
state, safe in worker threads); ``EvalResult.plot(kind)`` returns them for notebooks.

Every plot gives a variant the same colour (``variant_colors``): the tables and the case
browser use it too.

``differences``  each variant minus the baseline per metric, with its paired 95% interval
                 (a forest plot: a point and a bar per variant, 0 marked; "better" is right)
``values``       each variant's value per metric with its 95% interval (points, not bars)
``stability``    numbering stability per model round, one line per variant
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from citelab._errors import InvalidInput
from citelab.evals.report._colors import variant_colors, variant_order

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from citelab.evals.results import EvalResult

__all__ = ["PlotKind", "plot"]

PlotKind = Literal["differences", "values", "stability"]
_KINDS = ("differences", "values", "stability")


def plot(result: EvalResult, kind: PlotKind = "differences", **options: Any) -> Figure | None:
    """The figure of ``kind`` (see the module docs), or None when there is nothing to plot.

    Options: ``baseline`` (differences), ``subset`` (differences, values), ``metrics`` (a
    list: only these, in this order).
    """
    if kind not in _KINDS:
        raise InvalidInput(f"unknown plot {kind!r}; choose one of {', '.join(_KINDS)}")
    colors = variant_colors(variant_order(result))
    metrics = options.get("metrics")
    if kind == "stability":
        return stability_figure(result.stability_by_round(), colors)
    subset = str(options.get("subset", "all"))
    if kind == "values":
        return values_figure(_only(result.summary(subset=subset), metrics), colors)
    frame = result.differences(baseline=options.get("baseline"), subset=subset)
    return differences_figure(_only(frame, metrics), colors)


def _only(frame: pd.DataFrame, metrics: Any) -> pd.DataFrame:
    if not metrics:
        return frame
    wanted = [str(m) for m in metrics]
    kept = frame[frame["metric"].isin(wanted)]
    rank = {m: i for i, m in enumerate(wanted)}
    return kept.iloc[kept["metric"].map(rank).argsort(kind="stable")]


def _new_figure(width: float, height: float) -> tuple[Figure, Any]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    return figure, figure.add_subplot()


def _series_label(variant: str, model: str, several_models: bool) -> str:
    return f"{variant} · {model}" if several_models else variant


def _rows(frame: pd.DataFrame) -> tuple[list[str], list[tuple[str, str]], bool]:
    metrics = list(dict.fromkeys(frame["metric"]))
    series = list(dict.fromkeys(zip(frame["variant"], frame["model"], strict=True)))
    return metrics, series, len({model for _, model in series}) > 1


def _interval_points(
    axis: Any,
    frame: pd.DataFrame,
    column: str,
    colors: dict[str, str],
) -> tuple[list[str], int]:
    """A point and its interval per (variant, model) and metric; metrics down the y axis."""
    metrics, series, several = _rows(frame)
    step = 0.8 / max(1, len(series))
    for index, (variant, model) in enumerate(series):
        part = frame[(frame["variant"] == variant) & (frame["model"] == model)]
        rows = [metrics.index(m) + (index - (len(series) - 1) / 2) * step for m in part["metric"]]
        values = part[column].to_numpy(dtype=float)
        errors = [values - part["ci_low"].to_numpy(float), part["ci_high"].to_numpy(float) - values]
        marker = ["o", "s", "^", "D", "v"][series.index((variant, model)) // len(colors) % 5]
        axis.errorbar(
            values,
            rows,
            xerr=errors,
            fmt=marker,
            color=colors.get(str(variant), "#333333"),
            capsize=2,
            markersize=4,
            linewidth=1,
            label=_series_label(str(variant), str(model), several),
        )
    return metrics, len(series)


def _metric_axis(axis: Any, frame: pd.DataFrame, metrics: list[str]) -> None:
    better = {m: bool(frame.loc[frame["metric"] == m, "higher_is_better"].iloc[0]) for m in metrics}
    axis.set_yticks(range(len(metrics)), [f"{m} {'↑' if better[m] else '↓'}" for m in metrics])
    axis.tick_params(axis="y", labelsize=8)
    axis.set_ylim(len(metrics) - 0.5, -0.5)
    axis.grid(axis="x", linewidth=0.3)


def differences_figure(frame: pd.DataFrame, colors: dict[str, str]) -> Figure | None:
    """Forest plot of paired differences (variant − baseline) with their intervals."""
    if frame.empty:
        return None
    figure, axis = _new_figure(8.0, 0.8 + 0.3 * frame["metric"].nunique())
    metrics, _ = _interval_points(axis, frame, "difference", colors)
    axis.axvline(0.0, color="#555555", linewidth=0.8)
    _metric_axis(axis, frame, metrics)
    baseline = str(frame["baseline"].iloc[0])
    axis.set_xlabel(f"difference from {baseline} (paired 95% bootstrap interval over cases)")
    axis.legend(fontsize=7, loc="best")
    figure.tight_layout()
    return figure


def values_figure(frame: pd.DataFrame, colors: dict[str, str]) -> Figure | None:
    """Each variant's value per metric with its 95% interval."""
    if frame.empty:
        return None
    figure, axis = _new_figure(8.0, 0.8 + 0.3 * frame["metric"].nunique())
    metrics, _ = _interval_points(axis, frame, "value", colors)
    _metric_axis(axis, frame, metrics)
    axis.set_xlabel("value (95% bootstrap interval over cases)")
    axis.legend(fontsize=7, loc="best")
    figure.tight_layout()
    return figure


def stability_figure(table: pd.DataFrame, colors: dict[str, str]) -> Figure | None:
    """Numbering stability per model round, one line per variant (and model)."""
    if table.empty:
        return None
    figure, axis = _new_figure(6.5, 3.2)
    several = table["model"].nunique() > 1
    for (variant, model), part in table.groupby(["variant", "model"], sort=False):
        axis.plot(
            part["round"] + 1,
            part["value"],
            marker="o",
            color=colors.get(str(variant), "#333333"),
            label=_series_label(str(variant), str(model), several),
        )
    axis.set_xlabel("model round within the turn")
    axis.set_ylabel("numbering stability")
    axis.set_ylim(0, 1.05)
    axis.set_xticks(sorted(table["round"].unique() + 1))
    axis.legend(fontsize=7, loc="lower left")
    figure.tight_layout()
    return figure
