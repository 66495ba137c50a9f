"""Results: the scoring loop (every scorer on every recorded turn), its tables as an
:class:`EvalResult` (citation, statement, case and variant level, bootstrap intervals, paired
differences), findings checked against them, and many records scored at once when a judge
asks a model (:func:`score_records_concurrently`), and a run's citations as pairs for people
to label (:func:`label_pairs`).

An :class:`EvalResult` is shown (plots, the HTML report) by ``citelab.evals.report``, which
registers how (:func:`set_display`) when it is imported.
"""

from citelab.evals.results._concurrent import concurrent_judges, score_records_concurrently
from citelab.evals.results._findings import Finding, FindingResult, evaluate_findings
from citelab.evals.results._label_pairs import (
    PAIR_UNITS,
    LabelPairs,
    PairSource,
    PairUnit,
    label_pairs,
    run_name,
)
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
    "PAIR_UNITS",
    "TURN_FACTS",
    "EvalResult",
    "Finding",
    "FindingResult",
    "LabelPairs",
    "Level",
    "PairSource",
    "PairUnit",
    "ResultDisplay",
    "ScoredRows",
    "bootstrap_interval",
    "concurrent_judges",
    "evaluate_findings",
    "label_pairs",
    "result_of",
    "run_name",
    "score_record",
    "score_records",
    "score_records_concurrently",
    "score_rows",
    "set_display",
    "summarize",
]
