"""Writing a run's results: CSV (and Parquet), ``run.json`` and one self-contained HTML page.

The HTML report has no external assets and makes no request: plots are SVG drawn by
matplotlib and embedded as base64 ``<img>`` data, so no text inside a plot is ever parsed as
markup; every other string (variant names, questions, configuration, judge prompts) is
HTML-escaped; the case browser (``js/report.js``, bundled) and its data are inline, the data
escaped for a script element, and renders answers through the front end's sanitizer.

It opens with the errors (when turns failed), then the findings, the variants (with their
descriptions and notes), the summary (value, interval, units and cases, a flag under
:data:`MIN_UNITS` units), the paired differences against the baseline, the plots, the case
browser, the per-dataset table, the metric glossary and the configuration.

:class:`ReportView` shows a report inside a notebook: an ``<iframe srcdoc>``, so the page's
styles never reach JupyterLab's.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import io
import json
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from citelab.evals._stats import MIN_UNITS as STATS_MIN_UNITS
from citelab.evals._stats import too_few_units
from citelab.evals.report._case_browser import case_browser_parts, static_text
from citelab.evals.report._colors import variant_colors, variant_order
from citelab.evals.report._glossary import metric_glossary
from citelab.evals.report._html import Cell, Safe
from citelab.evals.report._html import escape as _e
from citelab.evals.report._html import table as html_table
from citelab.evals.report._judges import WARNING_MARK, judge_line
from citelab.evals.report._judges import corrected_html as _corrected_html
from citelab.evals.report._judges import faults_html as _faults_html
from citelab.evals.report._judges import judges_html as _judges_html
from citelab.evals.report._judges import labelled_html as _labelled_html
from citelab.evals.report._plots import differences_figure, stability_figure, values_figure
from citelab.evals.report._usage_html import usage_html
from citelab.evals.results import (
    EvalResult,
    Finding,
    FindingResult,
    Gate,
    GateResult,
    JudgedMetric,
    evaluate_findings,
    evaluate_gates,
    fault_agreement,
    identical_answers,
    required_findings,
)

__all__ = ["MIN_UNITS", "ReportView", "comparison_intro", "render_html", "write_outputs"]

MIN_UNITS = STATS_MIN_UNITS
"""Below this many units a metric's value is flagged "too few units" (as is a zero-width
interval): its resampled interval says too little to print."""

FEW_TITLE = (
    f"too few units: under {STATS_MIN_UNITS} units, or every resample the same (a "
    "zero-width interval)"
)
"""What ⚠ means wherever the report shows it."""

_Check = TypeVar("_Check", Finding, Gate)

MATH_IGNORE_CLASS = "mathjax_ignore"
"""JupyterLab typesets ``$…$`` in HTML outputs as math unless under an element of this class
(MathJax 3's ``ignoreHtmlClass``); the widget's ``citelab.widget._display`` has the same
constant (the report sits below the widget and does not import it)."""


def write_outputs(
    result: EvalResult,
    out_dir: str | Path,
    findings: Sequence[Finding] = (),
    title: str = "",
    gates: Sequence[Gate] = (),
) -> dict[str, Path]:
    """Write the tables (CSV, and Parquet when pyarrow is installed), run.json and report.html.

    ``findings`` and ``gates`` are checked against the results: ``run.json`` holds each
    finding (``findings``) and each gate with every required finding (``gates``) with its
    verdict, and so do ``result.config`` and the report."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    parquet = _has_pyarrow()
    subsets = sorted(({f.subset for f in findings} | {g.subset for g in gates}) - {"all"})
    # Each statistic once (the tables, the findings, the report and its plots share them),
    # computed on another thread while this one builds the case browser and writes the
    # turn-level tables: the bootstraps are numpy work that mostly runs without the GIL. The
    # thread gets its own copies of the two tables it reads, so no pandas object is used by
    # two threads at once.
    own = dataclasses.replace(result, scores=result.scores.copy(), turns=result.turns.copy())
    with ThreadPoolExecutor(max_workers=1) as pool:
        statistics = pool.submit(_statistics, own, subsets)
        browser = case_browser_parts(result)
        _write_turn_tables(result, out, parquet)
        stability = result.stability_by_round()
        summary, differences, by_dataset, summaries, corrected = statistics.result()
    _write_table(out, "summary", summary, parquet)
    _write_table(out, "differences", differences, parquet)
    _write_table(out, "corrected", corrected, parquet)
    usage = result.usage()
    _write_table(out, "usage", usage, parquet)
    written: dict[str, Path] = {}
    tables = (
        *("summary", "differences", "corrected", "usage"),
        *("scores", "cases", "statements", "citations"),
    )
    for name in tables:
        written[f"{name}.csv"] = out / f"{name}.csv"
        if parquet:
            written[f"{name}.parquet"] = out / f"{name}.parquet"
    faults = fault_agreement(result)
    if not faults.empty:  # only a run with a perturbing model has faults of known truth
        _write_table(out, "fault_agreement", faults, parquet)
        written["fault_agreement.csv"] = out / "fault_agreement.csv"
        if parquet:
            written["fault_agreement.parquet"] = out / "fault_agreement.parquet"
    else:  # nor a table left over from an earlier run into this folder
        for suffix in ("csv", "parquet"):
            (out / f"fault_agreement.{suffix}").unlink(missing_ok=True)
    gold = {
        f"{dataset}/{case_id}": case.model_dump(mode="json")
        for (dataset, case_id), case in sorted(result.cases.items())
    }
    written["gold.json"] = out / "gold.json"
    written["gold.json"].write_text(json.dumps(gold, ensure_ascii=False), encoding="utf-8")
    known = {"all": summary, **summaries}
    checked = evaluate_findings(result, findings, summaries=known)
    base = result.baseline()
    paired = {(base, "all", 0.95): differences} if base is not None else {}
    gated = [
        *evaluate_gates(result, gates, summaries=known, differences=paired),
        *required_findings(checked),
    ]
    result.config["findings"] = [c.model_dump(mode="json") for c in checked]
    result.config["gates"] = [g.model_dump(mode="json") for g in gated]
    judges = result.judges()
    run = {
        **result.config,
        "judges": [judge.model_dump(mode="json") for judge in judges],
        "corrected": _records_json(corrected),
        "fault_agreement": _records_json(faults),
        "usage": _records_json(usage),
    }
    written["run.json"] = out / "run.json"
    written["run.json"].write_text(json.dumps(run, indent=2, default=str), encoding="utf-8")
    written["report.html"] = out / "report.html"
    parts = _Parts(summary, differences, by_dataset, stability, browser, corrected, judges, faults)
    name = title or str(result.config.get("suite", {}).get("name", ""))
    page = _page(result, checked, name, "", parts, gated)
    written["report.html"].write_text(page, encoding="utf-8")
    return written


def _write_turn_tables(result: EvalResult, out: Path, parquet: bool) -> None:
    _write_table(out, "scores", result.scores, parquet)
    _write_table(out, "cases", result.to_pandas("case"), parquet)
    _write_table(out, "statements", result.to_pandas("statement"), parquet)
    _write_table(out, "citations", result.to_pandas("citation"), parquet)


def _write_table(out: Path, name: str, frame: pd.DataFrame, parquet: bool) -> None:
    _write_csv(frame, out / f"{name}.csv")
    if parquet:
        _write_parquet(frame, out / f"{name}.parquet")


_Statistics = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame], pd.DataFrame]


def _statistics(result: EvalResult, subsets: Sequence[str]) -> _Statistics:
    """What the outputs need of the bootstraps: the summary, the paired differences, the
    summary by dataset, the summary of each subset the findings look at, and the judged
    metrics corrected for their judges' error."""
    summaries = {subset: result.summary(subset=subset) for subset in subsets}
    summary = result.summary()
    corrected = result.corrected(summary=summary)
    return summary, result.differences(), result.summary(by=["dataset"]), summaries, corrected


def _records_json(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table's rows for JSON: NaN as null."""
    return [
        {str(k): (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
        for row in frame.to_dict("records")
    ]


@dataclass
class _Parts:
    """What a report shows that takes time to compute (see :func:`render_html`)."""

    summary: pd.DataFrame
    differences: pd.DataFrame
    by_dataset: pd.DataFrame
    stability: pd.DataFrame
    browser: tuple[str, str]
    """The case browser and its details (:func:`case_browser_parts`)."""
    corrected: pd.DataFrame
    """:meth:`EvalResult.corrected` of the summary."""
    judges: list[JudgedMetric]
    """:meth:`EvalResult.judges`."""
    faults: pd.DataFrame | None = None
    """:func:`~citelab.evals.results.fault_agreement` (None: computed when the page is)."""


FLOAT_FORMAT = "%.6g"
"""How the CSV tables write floats."""


def _write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """``frame.to_csv(path, index=False, float_format=FLOAT_FORMAT)``, the same bytes in
    less time: pandas formats every float in a Python loop and hands pyarrow-backed strings
    to the writer one by one (most of a big run's CSV time). Here each float column is
    formatted once per distinct value and the rows go to the same standard ``csv`` writer
    pandas uses, with pandas' settings (minimal quoting, ``\\n`` lines, missing as empty)."""
    with path.open("w", encoding="utf-8", newline="") as sink:
        write_csv_rows(frame, sink)
    return path


def write_csv_rows(frame: pd.DataFrame, sink: Any) -> None:
    """``frame`` as CSV into the text stream ``sink``; see :func:`_write_csv`."""
    writer = csv.writer(sink, lineterminator="\n")
    writer.writerow([str(name) for name in frame.columns])
    columns = [_csv_cells(frame.iloc[:, i]) for i in range(frame.shape[1])]
    writer.writerows(zip(*columns, strict=True))


def _csv_cells(column: pd.Series) -> list[Any]:
    """A column's cells as the writer takes them: floats as ``FLOAT_FORMAT`` text (once per
    distinct bit pattern, so 0.0 and -0.0 keep their own text), missing values None."""
    if isinstance(column.dtype, np.dtype) and column.dtype.kind == "f":
        values = column.to_numpy(dtype=np.float64)
        bits, inverse = np.unique(values.view(np.int64), return_inverse=True)
        texts = [
            None if math.isnan(v) else FLOAT_FORMAT % v for v in bits.view(np.float64).tolist()
        ]
        return [texts[i] for i in inverse.reshape(-1).tolist()]
    cells = column.tolist()
    missing = column.isna().to_numpy(dtype=bool)
    if missing.any():
        for index in np.flatnonzero(missing).tolist():
            cells[index] = None
    return cells


def _write_parquet(frame: pd.DataFrame, path: Path) -> Path:
    # Mixed-type object columns (e.g. None next to str) are written as strings.
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object:
            cells = [None if _missing(v) else str(v) for v in safe[column].tolist()]
            safe[column] = pd.Series(cells, index=safe.index)  # dtype inferred, as map does
    safe.to_parquet(path, index=False)
    return path


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _has_pyarrow() -> bool:
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


# --- HTML ------------------------------------------------------------------------------------


_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1180px;color:#1b1b1b;
padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.errors{border:2px solid #a11;padding:0 1rem;margin:1rem 0}.errors h2{color:#a11}
.holds{color:#0a6b2d}.fails{color:#a11}.untestable,.uninformative{color:#666;font-style:italic}pre{background:#f7f7f7;padding:.6rem;overflow:auto;
max-height:24rem;white-space:pre-wrap}img{max-width:100%}.muted,.citelab-muted{color:#666}
.few{color:#8a5a00}.warn{color:#a11}.better{color:#0a6b2d;font-weight:600}.worse{color:#a11;font-weight:600}
td:first-child{white-space:nowrap}
.citelab-swatch{display:inline-block;width:.8em;height:.8em;border-radius:50%;
margin-right:.35em;vertical-align:baseline;background:#999}
.citelab.citelab-cases{max-width:none}
.citelab-case-filters{display:flex;flex-wrap:wrap;gap:.4rem 1rem;margin:.5rem 0}
.citelab-case-scroll{max-height:22rem;overflow:auto;border:1px solid #ddd}
.citelab-case-list{width:100%;margin:0}.citelab-case-list th{position:sticky;top:0}
.citelab-case-row{cursor:pointer}
.citelab-case-row:hover,.citelab-case-row:focus{background:#eef4ff;outline:none}
.citelab-case-row[aria-selected=true]{background:#dbe8ff}
.citelab-case-detail{border-top:2px solid #ccc;margin-top:1rem;padding-top:.3rem}
.citelab-case-detail:focus{outline:none}.citelab-case-error{color:#a11;font-weight:600}
.citelab-case-answer{border-left:3px solid #ccd;padding-left:.8rem}
.citelab-uncited{color:#666}.citelab-miss{color:#a11}.citelab-hit{color:#0a6b2d}
.citelab-case-reasons div{font-size:12px}.citelab-case-wrote{max-height:12rem}
.citelab-na{color:#888}
"""


def render_html(
    result: EvalResult,
    findings: Sequence[FindingResult] | None,
    title: str,
    *,
    intro: str = "",
    summary: pd.DataFrame | None = None,
    differences: pd.DataFrame | None = None,
    gates: Sequence[GateResult] | None = (),
) -> str:
    """The whole report as one HTML document (every string escaped, plots inline).

    ``findings`` and ``gates`` are checked already; None checks the ones the run's suite
    states (``result.config["suite"]``: what a notebook's ``result.show()`` shows).
    ``intro`` is HTML put after the heading (already escaped by the caller: the comparison
    report's table of runs). ``summary`` and ``differences``, when given, are
    ``result.summary()`` and ``result.differences()`` already computed (a caller that
    writes them as tables too need not compute them again)."""
    if findings is None:
        findings = evaluate_findings(result, _configured(result, "findings", Finding))
    if gates is None:
        gates = [
            *evaluate_gates(result, _configured(result, "gates", Gate)),
            *required_findings(findings),
        ]
    parts = _Parts(
        summary=result.summary() if summary is None else summary,
        differences=result.differences() if differences is None else differences,
        by_dataset=result.summary(by=["dataset"]),
        stability=result.stability_by_round(),
        browser=case_browser_parts(result),
        corrected=pd.DataFrame(),
        judges=result.judges(),
    )
    parts.corrected = result.corrected(summary=parts.summary)
    return _page(result, findings, title, intro, parts, gates)


def _configured(result: EvalResult, key: str, kind: type[_Check]) -> list[_Check]:
    """The findings or gates of the run's suite, as its configuration holds them."""
    suite = result.config.get("suite") or {}
    return [kind.model_validate(item) for item in suite.get(key) or []]


def _page(  # noqa: PLR0917 - private, two call sites
    result: EvalResult,
    findings: Sequence[FindingResult],
    title: str,
    intro: str,
    parts: _Parts,
    gates: Sequence[GateResult] = (),
) -> str:
    """See :func:`render_html`: the page of ``result`` with ``parts`` computed."""
    if result.config.get("command") == "score":
        return _document(title, _score_sections(result, title, parts))
    summary, differences = parts.summary, parts.differences
    colors = variant_colors(variant_order(result))
    description = str(result.config.get("suite", {}).get("description") or "")
    # The cases' details (most of a big page's bytes) come last: everything else, the case
    # list included, is on screen before the parser reaches them.
    cases, case_details = parts.browser
    sections = [
        f"<h1>citelab evaluation: {_e(title or 'run')}</h1>",
        f"<p>{_e(description)}</p>" if description else "",
        intro,
        _errors_html(result),
        _run_facts(result),
        _gates_html(gates),
        _findings_html(findings),
        "<h2>Variants</h2>",
        _variants_html(result, colors),
        _judges_html(parts.judges, has_labels=bool(result.config.get("labels"))),
        _faults_html(parts.faults if parts.faults is not None else fault_agreement(result)),
        "<h2>Summary</h2>",
        _summary_note(),
        _summary_table(summary, colors, result, judges=parts.judges),
        _corrected_html(parts.corrected, parts.judges, _suite_name(result)),
        _labelled_html(parts.corrected),
        f"<h2>{_e(_differences_heading(result.baseline()))}</h2>",
        _differences_html(_mark_identical(result, differences), colors, variant_order(result)),
        usage_html(result),
        # As result.plot("differences") and result.plot("values") draw them.
        _img(
            _svg(differences_figure(differences, colors)),
            "differences from the baseline with intervals",
        ),
        "<h2>Values with their intervals</h2>",
        _img(_svg(values_figure(summary, colors)), "metric values with intervals"),
        "<h2>Numbering stability per round</h2>",
        _stability_section(parts.stability, colors),
        "<h2>Cases</h2>",
        _CASES_NOTE,
        cases,
        "<h2>By dataset</h2>",
        _summary_table(parts.by_dataset, colors, result, by=["dataset"]),
        "<h2>Metric glossary</h2>",
        _glossary_html(result),
        "<h2>Configuration</h2>",
        _config_html(result.config),
        case_details,
    ]
    return _document(title, sections)


def _suite_name(result: EvalResult) -> str | None:
    name = (result.config.get("suite") or {}).get("name")
    return str(name) if name else None


_CASES_NOTE = (
    '<p class="muted">Every scored turn; filter the list and open one to see its answer '
    "(cited spans highlighted), the sources it held and cited, the gold, every verdict "
    "with its reasons and the rounds.</p>"
)


def _score_sections(result: EvalResult, title: str, parts: _Parts) -> list[str]:
    """The page of answers ``citelab score`` read: what was scored (file, format, judge,
    statements), what could not be read or judged, the summary, the cases, the glossary.
    No variants, differences or rounds: there is one set of answers and no run of a model."""
    cases, case_details = parts.browser
    return [
        f"<h1>{_e(title or 'citelab score')}</h1>",
        _errors_html(result),
        "<h2>What was scored</h2>",
        _scored_facts(result),
        _notes_html(result.config.get("notes") or []),
        _judges_html(parts.judges, has_labels=bool(result.config.get("labels"))),
        "<h2>Summary</h2>",
        '<p class="muted">Each value with its 95% bootstrap interval (resampling answers), '
        "its units (statements or citations) and the answers it applies to. A unit whose "
        "source has no passage is not judgeable: left out, never scored 0.</p>",
        _score_summary(parts.summary, result),
        _corrected_html(parts.corrected, parts.judges),
        _labelled_html(parts.corrected),
        "<h2>Answers</h2>",
        _CASES_NOTE,
        cases,
        "<h2>Metric glossary</h2>",
        _glossary_html(result),
        "<h2>Configuration</h2>",
        _config_html(result.config),
        case_details,
    ]


def _scored_facts(result: EvalResult) -> str:
    config = result.config
    judge = config.get("judge") or {}
    settings = [
        f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
        for key, value in judge.items()
        if key != "name" and value is not None
    ]
    judge_text = str(judge.get("name", "")) + (f" ({', '.join(settings)})" if settings else "")
    granularity = {str(scorer.get("granularity")) for scorer in config.get("scorers") or []} - {
        "None"
    }
    statements = {
        "span": "each cited span (and each sentence no span touches)",
        "sentence": "each sentence of the answer, with its markers",
    }
    facts = {
        "file": config.get("input") or "(data given in Python)",
        "format": config.get("format"),
        "answers": config.get("answers", len(result.turns)),
        "judge": judge_text,
        "statements": "; ".join(statements[g] for g in sorted(granularity) if g in statements),
        "scorers": ", ".join(scorer.metric for scorer in result.scorers),
        "started": config.get("started_at"),
    }
    items = "".join(f"<li><b>{_e(k)}</b>: {_e(v)}</li>" for k, v in facts.items() if v)
    return f"<ul>{items}</ul>"


def _notes_html(notes: Sequence[str]) -> str:
    return "".join(f'<p class="warn">{WARNING_MARK} {_e(note)}</p>' for note in notes)


def _score_summary(summary: pd.DataFrame, result: EvalResult) -> str:
    """One row per scorer: value [interval], units, answers, units not judgeable."""
    rows_by_metric = {str(r["metric"]): r for r in summary.to_dict("records")}
    left_out = result.config.get("unjudgeable") or {}
    rows = []
    for scorer in result.scorers:
        arrow = "↑" if scorer.higher_is_better else "↓"
        row = rows_by_metric.get(scorer.metric)
        missing = int(left_out.get(scorer.metric, 0) or 0)
        cells: list[object]
        if row is None:
            why = f"not judgeable: {missing} units without passage" if missing else "n/a"
            cells = [Cell(why, cls="muted"), "", ""]
        else:
            few = _too_few(row)
            flag = f' <span class="few" title="{FEW_TITLE}">⚠</span>' if few else ""
            value = f"{row['value']:.3f} {_range(row['ci_low'], row['ci_high'], few)}{flag}"
            cells = [
                Cell(Safe(value), cls="num"),
                Cell(int(row["units"]), cls="num"),
                Cell(int(row["cases"]), cls="num"),
            ]
        label = Cell(f"{scorer.metric} {arrow}", header=True)
        rows.append([label, *cells, Cell(missing or "", cls="num")])
    head = ["metric", "value [95% interval]", "units", "answers", "not judgeable"]
    return html_table(head, rows)


def _document(title: str, sections: Sequence[str]) -> str:
    body = "\n".join(part for part in sections if part)
    style = _STYLE + static_text("citelab.css")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # No favicon request either: the page asks for nothing but itself.
        '<link rel="icon" href="data:,">'
        f"<title>{_e(title or 'citelab evaluation')}</title><style>{style}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )


class ReportView:
    """A report shown in a notebook cell: the page in an ``<iframe srcdoc>`` (sandboxed:
    scripts run, nothing reaches the notebook's page or styles).

    ``EvalResult.show()`` returns one; ``html`` is the page, ``height`` the frame's height.
    """

    def __init__(self, html_page: str, height: int = 900) -> None:
        self.html = html_page
        self.height = height

    def _repr_html_(self) -> str:
        # Questions and answers are no formulas ("costs $5 or $7"): no math typesetting.
        return (
            f'<div class="{MATH_IGNORE_CLASS}">'
            f'<iframe class="citelab-report-frame" srcdoc="{_e(self.html)}" '
            'sandbox="allow-scripts allow-popups allow-popups-to-escape-sandbox" '
            f'style="width:100%;height:{int(self.height)}px;border:1px solid #ccc" '
            'title="citelab evaluation report"></iframe></div>'
        )

    def save(self, path: str | Path) -> Path:
        """Write the page to ``path`` (a self-contained HTML file)."""
        target = Path(path)
        target.write_text(self.html, encoding="utf-8")
        return target


def comparison_intro(comparison: Any) -> str:
    """The comparison report's first section: the two runs and how their cases matched."""
    colors = variant_colors(list(comparison.labels))
    rows = []
    for label, folder, run in zip(
        comparison.labels, comparison.folders, comparison.runs, strict=True
    ):
        turns = run.turns
        suite = run.config.get("suite") or {}
        rows.append(
            [
                Safe(_swatch(colors[label]) + _e(label)),
                Safe(f"<code>{_e(folder)}</code>"),
                suite.get("name", ""),
                ", ".join(sorted(set(turns["model"]))),
                ", ".join(sorted(set(turns["variant"]))),
                Cell(len(turns[["dataset", "case_id"]].drop_duplicates()), cls="num"),
                Cell(int(turns["error"].notna().sum()), cls="num"),
            ]
        )
    head = ["run", "folder", "suite", "models", "variants", "cases", "failed turns"]
    table = f"<h2>Runs compared</h2>{html_table(head, rows)}"
    if len(comparison.labels) != 2:
        return table + _many_runs_note(comparison)
    a, b = comparison.labels
    only_a, only_b = comparison.only
    return (
        f"{table}"
        f"<p>{comparison.matched} cases matched by dataset and case id; {only_a} only in "
        f"{_e(a)}, {only_b} only in {_e(b)} (left out of the paired differences). In the "
        "tables below the <i>variant</i> is the run and the <i>model</i> column names what "
        f"was matched (a variant both runs have, or <code>run</code>); {_e(b)} is compared "
        f"with {_e(a)}.</p>"
    )


def _many_runs_note(comparison: Any) -> str:
    """How three or more runs were matched: every run against the first."""
    base = comparison.labels[0]
    missing = ", ".join(
        f"{_e(label)} {only}"
        for label, only in zip(comparison.labels, comparison.only, strict=True)
    )
    return (
        f"<p>{comparison.matched} cases matched by dataset and case id in every run; cases "
        f"not every run has, per run: {missing}. Each run is compared with {_e(base)} on the "
        "cases both scored. In the tables below the <i>variant</i> is the run and the "
        "<i>model</i> column names what was matched (a variant the runs have, or "
        "<code>run</code>).</p>"
    )


def _swatch(color: str | None) -> str:
    style = f' style="background:{color}"' if color and _is_hex(color) else ""
    return f'<span class="citelab-swatch"{style} aria-hidden="true"></span>'


def _is_hex(color: str) -> bool:
    return (
        len(color) == 7
        and color[0] == "#"
        and all(c in "0123456789abcdefABCDEF" for c in color[1:])
    )


def _errors_html(result: EvalResult) -> str:
    """The report's first section when turns failed: each cause, how often, where first."""
    errors = result.errors()
    if errors.empty:
        return ""
    failed, total = int(errors["count"].sum()), len(result.turns)
    rows = [
        [
            Cell(int(r["count"]), cls="num"),
            r["first_message"],
            f"{r['variant']} · {r['model']} · {r['dataset']}/{r['case_id']} turn {r['turn']}",
        ]
        for r in errors.to_dict("records")
    ]
    return (
        '<section class="errors"><h2>Errors</h2>'
        f"<p><b>{failed} of {total} turns failed</b>; they are scored as nothing, so every "
        "value below leaves them out. Fix the cause and run again: failed cases are run "
        "again on resume.</p>"
        f"{html_table(['turns', 'first message', 'first in'], rows)}</section>"
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
        "bootstrap resamples": result.resamples,
    }
    items = "".join(f"<li><b>{_e(k)}</b>: {_e(v)}</li>" for k, v in facts.items())
    return f"<ul>{items}</ul>"


_MARKS = {
    "holds": "✔",
    "fails": "✘",
    "untestable": "○ not testable here:",
    "uninformative": "≡ not informative:",
}
"""How a verdict shows: its class is the verdict itself (``holds``, ``fails``,
``untestable``, ``uninformative``)."""


def _findings_html(findings: Sequence[FindingResult]) -> str:
    if not findings:
        return ""
    items = []
    for checked in findings:
        required = ' <span class="muted">(required)</span>' if checked.finding.required else ""
        items.append(
            f"<li><b>{_e(checked.finding.title)}</b>{required}<br>"
            f'<span class="{checked.verdict}">{_MARKS[checked.verdict]} '
            f"{_e(checked.sentence)}</span></li>"
        )
    return "<h2>Findings</h2><ul>" + "".join(items) + "</ul>"


def _gates_html(gates: Sequence[GateResult]) -> str:
    """The gates first: whether the run passes them (what ``citelab eval`` exits 3 on)."""
    if not gates:
        return ""
    failed = sum(gate.fails_run for gate in gates)
    passed = sum(gate.passed is True for gate in gates)
    uninformative = sum(gate.verdict == "uninformative" for gate in gates)
    counts = f"{passed} passed" + (f", {uninformative} not informative" if uninformative else "")
    head = (
        f'<p class="fails"><b>{failed} of {len(gates)} gates did not pass</b> ({counts}; '
        "<code>citelab eval</code> and <code>citelab compare</code> exit 3).</p>"
        if failed
        else f'<p class="{"uninformative" if uninformative else "holds"}"><b>{counts}.</b>'
        + (
            " A gate that is not informative compared identical answers: it is neither "
            "passed nor failed."
            if uninformative
            else ""
        )
        + "</p>"
    )
    items = "".join(
        f"<li><b>{_e(gate.name)}</b><br>"
        f'<span class="{gate.verdict}">{_MARKS[gate.verdict]} {_e(gate.sentence)}</span></li>'
        for gate in gates
    )
    return f'<section class="gates"><h2>Gates</h2>{head}<ul>{items}</ul></section>'


def _variants_html(result: EvalResult, colors: dict[str, str]) -> str:
    """Each variant: its colour, description, overrides and what it cannot change."""
    configured = result.config.get("variants") or {}
    notes = dict(result.config.get("variant_notes") or {})
    same = _same_as_baseline(result)
    rows = []
    for name in variant_order(result):
        info = configured.get(name) or {}
        overrides = ", ".join(f"{k} = {json.dumps(v)}" for k, v in (info.get("set") or {}).items())
        note = notes.get(name, "")
        if name in same:
            note = (note + " " if note else "") + same[name]
        rows.append(
            [
                Safe(_swatch(colors.get(name)) + _e(name)),
                info.get("description") or "",
                Safe(f"<code>{_e(overrides)}</code>"),
                Cell(note, cls="note"),
            ]
        )
    return html_table(["variant", "description", "overrides", "note"], rows)


def _same_as_baseline(result: EvalResult) -> dict[str, str]:
    """Variants whose every answer equals the baseline's, with a sentence saying so."""
    baseline = result.baseline()
    turns = result.turns
    if baseline is None or turns.empty:
        return {}
    keys = ["model", "dataset", "case_id", "turn"]
    base = turns[turns["variant"] == baseline][[*keys, "answer"]]
    out = {}
    for name in variant_order(result):
        if name == baseline:
            continue
        part = turns[turns["variant"] == name][[*keys, "answer"]]
        paired = base.merge(part, on=keys, suffixes=("_b", "_v"))
        if len(paired) and (paired["answer_b"] == paired["answer_v"]).all():
            out[name] = (
                f"Every one of its {len(paired)} answers is identical to {baseline}'s: "
                "its differences are 0 by construction, not a finding."
            )
    return out


def _summary_note() -> str:
    return (
        '<p class="muted">Each cell: the value, its 95% bootstrap interval (resampling cases: '
        "a conversation's turns stay together), then <i>units</i> (what the metric counts: "
        "statements, citations, turns… see the glossary) and <i>cases</i>. "
        f'<span class="few">⚠</span> too few units: under {MIN_UNITS} units, or every '
        "resample the same (a zero-width interval); the cell then shows Wilson's interval "
        "of the share (marked W), valid at small n, instead of a bootstrap interval that "
        f'would only look confident; <span class="warn">{WARNING_MARK}</span> a warning '
        "about the metric's judge (see Judges). ↑ higher is better, ↓ lower is better. "
        "Citation metrics measure support (is what is cited backed by its sources); claim "
        "recall measures completeness (does the answer say what the gold says).</p>"
    )


def _summary_table(
    summary: pd.DataFrame,
    colors: dict[str, str],
    result: EvalResult,
    by: Sequence[str] = (),
    judges: Sequence[JudgedMetric] = (),
) -> str:
    """Rows: ``by`` columns then metric; columns: variant · model; cells: value, interval,
    units and cases (flagged under MIN_UNITS units)."""
    if summary.empty:
        return '<p class="muted">No applicable turns.</p>'
    keys = [*by, "metric"]
    cells = summary.assign(cell=summary.apply(_cell, axis=1))
    table = cells.pivot_table(
        index=keys, columns=["variant", "model"], values="cell", aggfunc="first", sort=False
    )
    rank = {name: i for i, name in enumerate(variant_order(result))}
    table = table[sorted(table.columns, key=lambda c: (rank.get(str(_tuple(c)[0]), 0), str(c)))]
    described = result.config.get("variants") or {}
    header: list[object] = list(keys)
    for column in table.columns:
        variant, model = (str(part) for part in _tuple(column))
        description = str((described.get(variant) or {}).get("description") or "")
        name = (
            f"{_swatch(colors.get(variant))}{_e(variant)} · {_e(model)}"
            f'<br><span class="muted">{_e(description)}</span>'
        )
        header.append(Cell(Safe(name), title=description))
    judged_by = {judge.metric: judge_line(judge) for judge in judges}
    rows = []
    for key, values in table.iterrows():
        parts = [str(part) for part in _tuple(key)]
        arrow = "↑" if _higher(summary, parts[-1]) else "↓"
        metric = Safe(_e(f"{parts[-1]} {arrow}") + judged_by.get(parts[-1], ""))
        heads = [Cell(part, header=True) for part in [*parts[:-1], metric]]
        # A cell is _cell's HTML (only numbers in it), or nothing where the pivot has none.
        tds = [Cell(Safe(v) if isinstance(v, str) else "", cls="num") for v in values]
        rows.append([*heads, *tds])
    return html_table(header, rows)


def _tuple(value: object) -> tuple[object, ...]:
    return value if isinstance(value, tuple) else (value,)


def _higher(summary: pd.DataFrame, metric: str) -> bool:
    return bool(summary.loc[summary["metric"] == metric, "higher_is_better"].iloc[0])


def _cell(row: pd.Series) -> str:
    """One summary cell as HTML (only numbers go in it)."""
    units, cases = int(row["units"]), int(row["cases"])
    few = _too_few(row)
    flag = f' <span class="few" title="{FEW_TITLE}">⚠</span>' if few else ""
    return (
        f"{row['value']:.3f} {_range(row['ci_low'], row['ci_high'], few)}<br>"
        f'<span class="muted">{units} units · {cases} cases</span>{flag}'
    )


def _too_few(row: Mapping[Any, Any] | pd.Series) -> bool:
    """A summary or difference row on too few units (a table written before citelab said
    so, as an older run folder's, is judged from its units and interval)."""
    if "too_few" in row and row["too_few"] == row["too_few"]:
        return bool(row["too_few"])
    return too_few_units(float(row["units"]), float(row["ci_low"]), float(row["ci_high"]))


def _range(low: float, high: float, wilson: bool) -> str:
    """A summary cell's interval: Wilson's is marked W (see the summary's note)."""
    if math.isnan(low) or math.isnan(high):
        return "—"
    mark = '<span class="muted" title="Wilson\'s interval">W</span>' if wilson else ""
    return f"[{low:.3f}, {high:.3f}]{mark}"


def _mark_identical(result: EvalResult, frame: pd.DataFrame) -> pd.DataFrame:
    """The differences with ``identical``: the variant's every answer is the baseline's
    under that model (:func:`identical_answers`), so its differences are 0 by
    construction."""
    base = result.baseline()
    if frame.empty or base is None:
        return frame.assign(identical=False)
    same = {
        (variant, model): identical_answers(result, base, variant, model)
        for variant, model in set(zip(frame["variant"], frame["model"], strict=True))
    }
    keys = zip(frame["variant"], frame["model"], strict=True)
    return frame.assign(identical=[same[key] for key in keys])


def _differences_html(frame: pd.DataFrame, colors: dict[str, str], order: list[str]) -> str:
    """Metric rows, variant columns: difference [paired interval], marked when it excludes 0."""
    if frame.empty:
        return '<p class="muted">No variant to compare with the baseline.</p>'
    rank = {name: i for i, name in enumerate(order)}
    series = sorted(
        dict.fromkeys(zip(frame["variant"], frame["model"], strict=True)),
        key=lambda pair: (rank.get(str(pair[0]), len(rank)), str(pair[1])),
    )
    metrics = list(dict.fromkeys(frame["metric"]))
    lookup = {(r["variant"], r["model"], r["metric"]): r for r in frame.to_dict("records")}
    header = ["metric"] + [
        Safe(f"{_swatch(colors.get(str(v)))}{_e(v)} · {_e(m)}") for v, m in series
    ]
    rows = []
    for metric in metrics:
        cells: list[object] = []
        higher = True
        for variant, model in series:
            row = lookup.get((variant, model, metric))
            if row is None:
                cells.append("")
                continue
            higher = bool(row["higher_is_better"])
            cells.append(_difference_cell(row))
        arrow = "↑" if higher else "↓"
        rows.append([Cell(f"{metric} {arrow}", header=True), *cells])
    note = (
        '<p class="muted">Variant minus baseline on the cases both were scored on; the '
        "interval is a paired bootstrap (the same cases drawn for both in every resample). "
        "<b>Bold</b>: the interval excludes 0 (green better, red worse); "
        f'<span class="few">⚠</span> too few units: under {MIN_UNITS} units, or every '
        "resample the same (no spread), so no interval is shown; ≡ the variant's answers are the "
        "baseline's (0 by construction).</p>"
    )
    return f"{note}{html_table(header, rows)}"


def _difference_cell(row: Mapping[Any, Any]) -> Cell:
    diff, low, high = float(row["difference"]), float(row["ci_low"]), float(row["ci_high"])
    css = ""
    if row["excludes_zero"]:
        good = (diff > 0) == bool(row["higher_is_better"])
        css = "better" if good else "worse"
    units, cases = int(row["units"]), int(row["cases"])
    if row.get("identical"):
        text = (
            '<span title="every answer is the baseline\'s">≡ identical answers</span><br>'
            f'<span class="muted">{units} units · {cases} cases</span>'
        )
        return Cell(Safe(text), cls="num")
    few = _too_few(row)
    flag = f' <span class="few" title="{FEW_TITLE}">⚠</span>' if few else ""
    interval = f"[{low:+.3f}, {high:+.3f}]"
    if few:
        interval = "— too few units" if units < MIN_UNITS else "— no spread"
    text = (
        f'{diff:+.3f} {interval}<br><span class="muted">{units} units · {cases} cases</span>{flag}'
    )
    return Cell(Safe(text), cls=f"num {css}")


def _stability_section(table: pd.DataFrame, colors: dict[str, str]) -> str:
    """``table`` is ``result.stability_by_round()``; the plot is ``result.plot("stability")``."""
    if table.empty:
        return '<p class="muted">No citations written in rounds that could be checked.</p>'
    plot = _img(_svg(stability_figure(table, colors)), "numbering stability per round")
    rows = [
        [
            Safe(_swatch(colors.get(str(r["variant"]))) + _e(r["variant"])),
            r["model"],
            Cell(int(r["round"]) + 1, cls="num"),
            Cell(f"{r['value']:.3f}", cls="num"),
            Cell(int(r["citations"]), cls="num"),
        ]
        for r in table.to_dict("records")
    ]
    head = ["variant", "model", "round", "stability", "citations"]
    return f"{plot}{html_table(head, rows)}"


def _differences_heading(baseline: str | None) -> str:
    """The section's title, naming the baseline variant unless its name says it already."""
    if baseline is None or baseline == "baseline":
        return "Differences from the baseline"
    return f"Differences from the baseline, {baseline}"


def _glossary_html(result: EvalResult) -> str:
    glossary = metric_glossary(result.scorers)
    if glossary.empty:
        return ""
    return html_table(list(glossary.columns), glossary.itertuples(index=False))


def _config_html(config: dict[str, Any]) -> str:
    text = json.dumps(config, indent=2, default=str, sort_keys=True)
    return f"<details><summary>run.json</summary><pre>{_e(text)}</pre></details>"


# --- plots -----------------------------------------------------------------------------------


def _img(svg: bytes | None, alt: str) -> str:
    if svg is None:
        return ""
    data = base64.b64encode(svg).decode("ascii")
    # Drawn when scrolled near: decoding the plots held up a big report's opening in chromium
    # before the case list could show (benchmarks/bench_report.py, docs/performance.md).
    return (
        f'<img alt="{_e(alt)}" loading="lazy" decoding="async" '
        f'src="data:image/svg+xml;base64,{data}">'
    )


def _svg(figure: Any) -> bytes | None:
    if figure is None:
        return None
    import matplotlib

    buffer = io.BytesIO()
    # A local rc context: the report never changes the user's backend or global settings
    # (a notebook that runs an evaluation keeps its inline plots).
    with matplotlib.rc_context({"svg.hashsalt": "citelab"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()
