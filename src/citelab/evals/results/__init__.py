"""Results: the scoring loop (every scorer on every recorded turn), its tables as an
:class:`EvalResult` (citation, statement, case and variant level, bootstrap intervals, paired
differences) and findings checked against them. Where records are scored (this process,
worker processes, Ray) is ``citelab.evals.execution``'s business.

An :class:`EvalResult` is shown (plots, the HTML report) by ``citelab.evals.report``, which
registers how (:func:`set_display`) when it is imported.
"""

from citelab.evals.results._findings import Finding, FindingResult, evaluate_findings
from citelab.evals.results._results import (
    TURN_FACTS,
    EvalResult,
    Level,
    ResultDisplay,
    ScoredRows,
    bootstrap_interval,
    result_of,
    score_record,
    score_records,
    score_rows,
    set_display,
    summarize,
)

__all__ = [
    "TURN_FACTS",
    "EvalResult",
    "Finding",
    "FindingResult",
    "Level",
    "ResultDisplay",
    "ScoredRows",
    "bootstrap_interval",
    "evaluate_findings",
    "result_of",
    "score_record",
    "score_records",
    "score_rows",
    "set_display",
    "summarize",
]
