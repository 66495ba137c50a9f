"""Writing a run's results: CSV (and Parquet), ``run.json`` and one self-contained HTML page.

The HTML report has no external assets: plots are SVG drawn by matplotlib (Agg) and embedded
as base64 ``<img>`` data, so no text inside a plot is ever parsed as markup; every other
string (variant names, questions, configuration, judge prompts) is HTML-escaped.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from citelab.evals._findings import Finding, FindingResult, evaluate_findings
from citelab.evals._results import EvalResult

__all__ = ["render_html", "write_outputs"]


def write_outputs(
    result: EvalResult, out_dir: str | Path, findings: Sequence[Finding] = (), title: str = ""
) -> dict[str, Path]:
    """Write the tables (CSV, and Parquet when pyarrow is installed), run.json and report.html."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    tables = {
        "summary": result.to_pandas("variant"),
        "cases": result.to_pandas("case"),
        "statements": result.to_pandas("statement"),
        "citations": result.to_pandas("citation"),
    }
    parquet = _has_pyarrow()
    for name, frame in tables.items():
        written[f"{name}.csv"] = _write_csv(frame, out / f"{name}.csv")
        if parquet:
            written[f"{name}.parquet"] = _write_parquet(frame, out / f"{name}.parquet")
    checked = evaluate_findings(result, findings)
    run = {**result.config, "findings": [c.model_dump(mode="json") for c in checked]}
    written["run.json"] = out / "run.json"
    written["run.json"].write_text(json.dumps(run, indent=2, default=str), encoding="utf-8")
    written["report.html"] = out / "report.html"
    page = render_html(
        result, checked, title or str(result.config.get("suite", {}).get("name", ""))
    )
    written["report.html"].write_text(page, encoding="utf-8")
    return written


def _write_csv(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_csv(path, index=False, float_format="%.6g")
    return path


def _write_parquet(frame: pd.DataFrame, path: Path) -> Path:
    # Mixed-type object columns (e.g. None next to str) are written as strings.
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object:
            safe[column] = safe[column].map(lambda v: None if _missing(v) else str(v))
    safe.to_parquet(path, index=False)
    return path


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _has_pyarrow() -> bool:
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


# --- HTML ------------------------------------------------------------------------------------


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#1b1b1b}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.errors{border:2px solid #a11;padding:0 1rem;margin:1rem 0}.errors h2{color:#a11}
.holds{color:#0a6b2d}.fails{color:#a11}pre{background:#f7f7f7;padding:.6rem;overflow:auto;
max-height:24rem;white-space:pre-wrap}img{max-width:100%}.muted{color:#666}
"""


def render_html(result: EvalResult, findings: Sequence[FindingResult], title: str) -> str:
    """The whole report as one HTML document (every string escaped, plots inline)."""
    summary = result.to_pandas("variant")
    sections = [
        f"<h1>citelab evaluation: {_e(title or 'run')}</h1>",
        _errors_html(result),
        _run_facts(result),
        _findings_html(findings),
        "<h2>Variant summary (95% bootstrap intervals over cases)</h2>",
        _summary_table(summary),
        "<h2>Metrics by variant</h2>",
        _img(_metric_bars(summary), "metric bars with intervals"),
        "<h2>Numbering stability per round</h2>",
        _stability_section(result),
        "<h2>By dataset</h2>",
        _summary_table(result.summary(by=["dataset"]), by=["dataset"]),
        "<h2>Misses (the first 30 statement- and citation-level units that failed)</h2>",
        _failures(result),
        "<h2>Configuration</h2>",
        _config_html(result.config),
    ]
    body = "\n".join(sections)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title or 'citelab evaluation')}</title><style>{_STYLE}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )


def _errors_html(result: EvalResult) -> str:
    """The report's first section when turns failed: each cause, how often, where first."""
    errors = result.errors()
    if errors.empty:
        return ""
    failed, total = int(errors["count"].sum()), len(result.turns)
    rows = "".join(
        f'<tr><td class="num">{int(r["count"])}</td><td>{_e(r["first_message"])}</td>'
        f"<td>{_e(r['variant'])} · {_e(r['model'])} · {_e(r['dataset'])}/"
        f"{_e(r['case_id'])} turn {_e(r['turn'])}</td></tr>"
        for r in errors.to_dict("records")
    )
    return (
        '<section class="errors"><h2>Errors</h2>'
        f"<p><b>{failed} of {total} turns failed</b>; they are scored as nothing, so every "
        "value below leaves them out. Fix the cause and run again: failed cases are run "
        "again on resume.</p>"
        "<table><tr><th>turns</th><th>first message</th><th>first in</th></tr>"
        f"{rows}</table></section>"
    )


def _run_facts(result: EvalResult) -> str:
    turns = result.turns
    facts = {
        "variants": turns["variant"].nunique(),
        "models": ", ".join(sorted(turns["model"].unique())),
        "datasets": ", ".join(sorted(turns["dataset"].unique())),
        "cases": turns[["dataset", "case_id"]].drop_duplicates().shape[0],
        "turns scored": len(turns),
        "turns failed": int(turns["error"].notna().sum()),
        "seed": result.seed,
    }
    items = "".join(f"<li><b>{_e(k)}</b>: {_e(v)}</li>" for k, v in facts.items())
    return f"<ul>{items}</ul>"


def _findings_html(findings: Sequence[FindingResult]) -> str:
    if not findings:
        return ""
    items = []
    for checked in findings:
        css = "holds" if checked.holds else "fails"
        mark = "✔" if checked.holds else "✘"
        items.append(
            f"<li><b>{_e(checked.finding.title)}</b><br>"
            f'<span class="{css}">{mark} {_e(checked.sentence)}</span></li>'
        )
    return "<h2>Findings</h2><ul>" + "".join(items) + "</ul>"


def _summary_table(summary: pd.DataFrame, by: Sequence[str] = ()) -> str:
    """Rows: ``by`` columns then metric; columns: variant · model; cells: value [interval] n."""
    if summary.empty:
        return '<p class="muted">No applicable turns.</p>'
    keys = [*by, "metric"]
    cells = summary.assign(cell=summary.apply(_cell, axis=1))
    table = cells.pivot_table(
        index=keys, columns=["variant", "model"], values="cell", aggfunc="first", sort=False
    )
    header = "".join(f"<th>{_e(k)}</th>" for k in keys) + "".join(
        f"<th>{_e(' · '.join(map(str, _tuple(c))))}</th>" for c in table.columns
    )
    rows = []
    for key, values in table.iterrows():
        parts = [str(part) for part in _tuple(key)]
        arrow = "↑" if _higher(summary, parts[-1]) else "↓"
        parts[-1] = f"{parts[-1]} {arrow}"
        heads = "".join(f"<th>{_e(part)}</th>" for part in parts)
        tds = "".join(f'<td class="num">{_e(v if isinstance(v, str) else "")}</td>' for v in values)
        rows.append(f"<tr>{heads}{tds}</tr>")
    return f"<table><tr>{header}</tr>{''.join(rows)}</table>"


_SUMMARY_VALUES = {"value", "ci_low", "ci_high", "units", "cases", "aggregate", "higher_is_better"}


def _tuple(value: object) -> tuple[object, ...]:
    return value if isinstance(value, tuple) else (value,)


def _higher(summary: pd.DataFrame, metric: str) -> bool:
    return bool(summary.loc[summary["metric"] == metric, "higher_is_better"].iloc[0])


def _cell(row: pd.Series) -> str:
    return f"{row['value']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}] n={int(row['units'])}"


def _stability_section(result: EvalResult) -> str:
    table = result.stability_by_round()
    if table.empty:
        return '<p class="muted">No citations written in rounds that could be checked.</p>'
    plot = _img(_stability_plot(table), "numbering stability per round")
    rows = "".join(
        f"<tr><td>{_e(r['variant'])}</td><td>{_e(r['model'])}</td>"
        f'<td class="num">{int(r["round"]) + 1}</td><td class="num">{r["value"]:.3f}</td>'
        f'<td class="num">{int(r["citations"])}</td></tr>'
        for r in table.to_dict("records")
    )
    head = "<tr><th>variant</th><th>model</th><th>round</th><th>stability</th><th>citations</th>"
    return f"{plot}<table>{head}</tr>{rows}</table>"


_FAILURE_KEYS = ["variant", "model", "dataset", "case_id", "turn", "metric"]


def _failures(result: EvalResult, limit: int = 30) -> str:
    """The first misses (a miss is a unit that went the wrong way), details in one column."""
    better = {s.metric: s.higher_is_better for s in result.scorers}
    misses = []
    for level in ("statement", "citation"):
        frame = result.details.get(level, pd.DataFrame())
        for row in frame.to_dict("records"):
            if bool(row["hit"]) != better.get(str(row["metric"]), True):
                misses.append(row)
    if not misses:
        return '<p class="muted">None.</p>'
    head = "".join(f"<th>{_e(k)}</th>" for k in [*_FAILURE_KEYS, "detail"])
    rows = []
    for row in misses[:limit]:
        keys = "".join(f"<td>{_e(row[k])}</td>" for k in _FAILURE_KEYS)
        rows.append(f"<tr>{keys}<td>{_e(_detail(row))}</td></tr>")
    more = len(misses) - limit
    tail = f'<p class="muted">… and {more} more (see the CSV tables).</p>' if more > 0 else ""
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>{tail}"


def _detail(row: dict[Any, Any]) -> str:
    return "; ".join(
        f"{key}={value}"
        for key, value in row.items()
        if key not in _FAILURE_KEYS and key != "hit" and not _missing(value) and value != ""
    )


def _config_html(config: dict[str, Any]) -> str:
    text = json.dumps(config, indent=2, default=str, sort_keys=True)
    return f"<details open><summary>run.json</summary><pre>{_e(text)}</pre></details>"


# --- plots -----------------------------------------------------------------------------------


def _img(svg: bytes | None, alt: str) -> str:
    if svg is None:
        return ""
    data = base64.b64encode(svg).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/svg+xml;base64,{data}">'


def _figure_svg(figure: Any) -> bytes:
    import matplotlib

    buffer = io.BytesIO()
    # A local rc context: the report never changes the user's backend or global settings
    # (a notebook that runs an evaluation keeps its inline plots).
    with matplotlib.rc_context({"svg.hashsalt": "citelab"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()


def _new_figure(width: float, height: float) -> tuple[Any, Any]:
    """A figure outside pyplot: no backend switch, no global state, safe in worker threads."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    return figure, figure.add_subplot()


def _metric_bars(summary: pd.DataFrame) -> bytes | None:
    """One horizontal grouped bar chart: a group per metric, a bar per variant, 95% intervals."""
    if summary.empty:
        return None
    metrics = list(dict.fromkeys(summary["metric"]))
    series = list(dict.fromkeys(zip(summary["variant"], summary["model"], strict=True)))
    several_models = len({model for _, model in series}) > 1
    height = 0.8 / len(series)
    figure, axis = _new_figure(8.0, 0.5 + 0.32 * len(metrics) * max(1, len(series) / 2))
    for index, (variant, model) in enumerate(series):
        part = summary[(summary["variant"] == variant) & (summary["model"] == model)]
        rows = [metrics.index(m) for m in part["metric"]]
        values = part["value"].to_numpy()
        errors = [values - part["ci_low"].to_numpy(), part["ci_high"].to_numpy() - values]
        positions = [row + index * height for row in rows]
        label = f"{variant} · {model}" if several_models else str(variant)
        axis.barh(positions, values, height=height, xerr=errors, capsize=2, label=label)
    arrows = {
        m: "↑" if bool(summary.loc[summary["metric"] == m, "higher_is_better"].iloc[0]) else "↓"
        for m in metrics
    }
    axis.set_yticks(
        [row + 0.4 - height / 2 for row in range(len(metrics))],
        [f"{m} {arrows[m]}" for m in metrics],
        fontsize=8,
    )
    axis.invert_yaxis()
    axis.set_xlim(0, 1.05)
    axis.set_xlabel("value (95% bootstrap interval over cases)")
    axis.legend(fontsize=7, loc="lower right")
    return _figure_svg(figure)


def _stability_plot(table: pd.DataFrame) -> bytes:
    figure, axis = _new_figure(6.5, 3.2)
    for (variant, model), part in table.groupby(["variant", "model"], sort=False):
        label = str(variant) if table["model"].nunique() == 1 else f"{variant} · {model}"
        axis.plot(part["round"] + 1, part["value"], marker="o", label=label)
    axis.set_xlabel("model round within the turn")
    axis.set_ylabel("numbering stability")
    axis.set_ylim(0, 1.05)
    axis.set_xticks(sorted(table["round"].unique() + 1))
    axis.legend(fontsize=7, loc="lower left")
    figure.tight_layout()
    return _figure_svg(figure)
