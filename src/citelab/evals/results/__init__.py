"""Results: the scoring loop (every scorer on every recorded turn), its tables as an
:class:`EvalResult` (citation, statement, case and variant level, bootstrap intervals, paired
differences) and findings and gates checked against them. Where records are scored (this
process, worker processes, Ray) is ``citelab.evals.execution``'s business.

An :class:`EvalResult` is shown (plots, the HTML report) by ``citelab.evals.report``, which
registers how (:func:`set_display`) when it is imported.
"""

from citelab.evals._stats import MIN_UNITS
from citelab.evals.results._faults import (
    FAULT_COLUMNS,
    MIN_FAULT_UNITS,
    fault_agreement,
    fault_truth,
    fault_units,
)
from citelab.evals.results._findings import (
    Finding,
    FindingResult,
    Verdict,
    evaluate_findings,
    identical_answers,
)
from citelab.evals.results._gates import (
    Gate,
    GateResult,
    evaluate_gates,
    failed_gates,
    required_findings,
)
from citelab.evals.results._judged import (
    LOW_KAPPA,
    METHOD_COLUMNS,
    JudgedMetric,
    card_view,
    check_cards,
    rogan_gladen,
)
from citelab.evals.results._labelled import PREDICTED_BY_SCORES, PREDICTED_BY_VERDICTS
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
)
from citelab.evals.results._usage import (
    TOKEN_FACTS,
    ModelPrice,
    parse_price,
    run_prices,
    usage_table,
    with_costs,
)

__all__ = [
    "FAULT_COLUMNS",
    "LOW_KAPPA",
    "METHOD_COLUMNS",
    "MIN_FAULT_UNITS",
    "MIN_UNITS",
    "PREDICTED_BY_SCORES",
    "PREDICTED_BY_VERDICTS",
    "TOKEN_FACTS",
    "TURN_FACTS",
    "EvalResult",
    "Finding",
    "FindingResult",
    "Gate",
    "GateResult",
    "JudgedMetric",
    "Level",
    "ModelPrice",
    "ResultDisplay",
    "ScoredRows",
    "Verdict",
    "bootstrap_interval",
    "card_view",
    "check_cards",
    "evaluate_findings",
    "evaluate_gates",
    "failed_gates",
    "fault_agreement",
    "fault_truth",
    "fault_units",
    "identical_answers",
    "parse_price",
    "required_findings",
    "result_of",
    "rogan_gladen",
    "run_prices",
    "score_record",
    "score_records",
    "score_rows",
    "set_display",
    "usage_table",
    "with_costs",
]
