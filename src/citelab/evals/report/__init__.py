"""The report: a run's tables written as CSV/Parquet with ``run.json`` and one
self-contained ``report.html`` (findings, summaries with intervals, paired differences, plots,
the case browser, the metric glossary), :class:`ReportView` for a notebook cell, and the
comparison of two runs' folders (:func:`compare_runs`).

Importing this package sets how an :class:`~citelab.evals.EvalResult` shows itself (its
``plot``, ``report_html`` and ``show``): results sit below the report and do not import it.
"""

from citelab.evals.cards import CardDisplay, set_card_display
from citelab.evals.report._card_html import card_fragment, card_page
from citelab.evals.report._card_plot import card_figure
from citelab.evals.report._compare import (
    Comparison,
    compare_many,
    compare_runs,
    figures_table,
    load_run,
    write_comparison,
)
from citelab.evals.report._mlflow import LoggedRun, log_to_mlflow, require_mlflow
from citelab.evals.report._plots import plot
from citelab.evals.report._report import ReportView, render_html, write_outputs
from citelab.evals.report._runs import HEADLINE_METRICS, Headline, RunEntry, RunIndex, list_runs
from citelab.evals.results import ResultDisplay, set_display

set_display(ResultDisplay(plot=plot, html=render_html, view=ReportView))
set_card_display(CardDisplay(plot=card_figure, page=card_page, fragment=card_fragment))

__all__ = [
    "HEADLINE_METRICS",
    "Comparison",
    "Headline",
    "LoggedRun",
    "ReportView",
    "RunEntry",
    "RunIndex",
    "compare_many",
    "compare_runs",
    "figures_table",
    "list_runs",
    "load_run",
    "log_to_mlflow",
    "render_html",
    "require_mlflow",
    "write_comparison",
    "write_outputs",
]
