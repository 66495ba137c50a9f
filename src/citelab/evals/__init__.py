"""Evaluations: datasets, judges, scorers, results, reports, the runner, other people's answers.

One subpackage (room) per job, each re-exported here; imports run one way, from the rooms on
top to the rooms below them (``pyproject.toml``'s import contract checks it):

* ``dataset`` and ``records`` — :func:`load_dataset` reads JSONL :class:`Case` lines (readers,
  turns, gold claims and their supporting entities, expected no-answers, multi-round
  scenarios); a :class:`CaseRecord` is what a run recorded of a case (``records.jsonl``).
* ``judges`` — every support decision goes through a :class:`Judge`:
  :class:`TrainedLexicalJudge` (offline, the default), :class:`LexicalJudge` (offline),
  :class:`LLMJudge` (any OpenAI-compatible model) or :class:`NLIJudge` (an entailment model
  run here).
* ``labels`` — what people said: :func:`load_label_set` reads labelled sets (WiCE, ALCE's
  human evaluation, your own), :func:`label_pairs` makes a run's citations pairs to label,
  :func:`label_queue` orders them and a :class:`LabelFile` keeps each label as it is given
  (``citelab.Labeller`` shows them in a notebook).
* ``cards`` — :func:`judge_card` measures a judge against labels (a :class:`JudgeCard`: figures
  only; the report draws it) and :func:`calibrate` tabulates several judges.
* ``scorers`` — small objects behind one :class:`Scorer` protocol, built by name from their
  configuration (:func:`build_scorer`): ALCE citation recall and precision (with an
  ``alce_compat`` mode), gold claims, anchors, uncited-source dropping, first-citation order,
  numbering stability, dangling markers, no-answer behaviour and restricted-source leakage.
* ``results`` — :func:`score_records` and :class:`EvalResult` (pandas tables at citation,
  statement, case and variant level, bootstrap intervals), checked :class:`Finding` s.
* ``report`` — :func:`write_outputs` (CSV, Parquet, ``run.json`` and a self-contained HTML
  report with plots and a case browser) and :func:`compare_runs`.
* ``execution`` — where the work runs: this process, worker processes or a Ray cluster
  (``citelab.evals.execution``), the same results wherever.
* ``runner`` — :func:`load_suite` reads a TOML/YAML :class:`Suite` (datasets × agents'
  variants × models); :func:`run` runs it (options: :class:`RunOptions`) through the answer
  service with bounded concurrency, a disk cache of model calls (:class:`CachedModel`),
  resumable records and progress bars; :func:`rescore` scores recorded runs again without
  any model call.
* ``external`` — :func:`score_answers` scores answers citelab did not produce (ALCE files,
  vendor responses, AnswerMessages) with the same scorers and reports.
"""

from typing import TYPE_CHECKING

from citelab._lazy import lazy_attributes
from citelab.evals.cards import (
    ALCE_PUBLISHED_AGREEMENT,
    JudgeCard,
    Reference,
    calibrate,
    calibration_table,
    category_accuracy,
    judge_card,
    load_labels,
)
from citelab.evals.dataset import (
    Case,
    Dataset,
    GoldClaim,
    GoldTurn,
    ReaderSpec,
    check_dataset,
    load_dataset,
)
from citelab.evals.external import (
    ANSWER_FORMATS,
    AnswerFormat,
    AnswerReader,
    ExternalAnswer,
    MessageReader,
    read_answers,
    score_answers,
    summary_json,
    to_answers,
)
from citelab.evals.judges import (
    DEFAULT_JUDGE,
    DEFAULT_JUDGE_PROMPT,
    JUDGES,
    FunctionJudge,
    Judge,
    LexicalJudge,
    LLMJudge,
    NLIJudge,
    TrainedLexicalJudge,
    build_judge,
    content_terms,
    judge_names,
    register_judge,
)
from citelab.evals.labels import (
    LABELS,
    PAIR_UNITS,
    Label,
    LabelColumns,
    LabelFile,
    LabelItem,
    LabelledPair,
    LabelLine,
    LabelPairs,
    LabelPassage,
    LabelQueue,
    LabelSet,
    PairUnit,
    label_pairs,
    label_queue,
    load_label_set,
    pending,
    read_label_file,
)
from citelab.evals.records import (
    CaseRecord,
    RestrictedEntity,
    RoundRecord,
    SourceRecord,
    TurnRecord,
)
from citelab.evals.report import (
    Comparison,
    ReportView,
    compare_runs,
    load_run,
    render_html,
    write_comparison,
    write_outputs,
)
from citelab.evals.results import (
    EvalResult,
    Finding,
    FindingResult,
    Gate,
    GateResult,
    Level,
    bootstrap_interval,
    evaluate_findings,
    evaluate_gates,
    score_records,
)
from citelab.evals.runner import ModelSpec, Suite, Variant, load_suite, resolve_suite_path
from citelab.evals.scorers import (
    SCORERS,
    AnchorValidity,
    CitationPrecision,
    CitationRecall,
    ClaimAttribution,
    ClaimRecall,
    CrossTurnStability,
    DanglingMarkers,
    FirstCitationOrder,
    GoldSources,
    NoAnswer,
    NumberingStability,
    RequiredSearches,
    Score,
    Scorer,
    SourceLanguage,
    SourceLeakage,
    Statement,
    UncitedDropping,
    accepts_argument,
    alce_output,
    alce_remove_citations,
    anchor_validity,
    build_scorer,
    build_scorers,
    citation_precision,
    citation_recall,
    claim_attribution,
    claim_recall,
    cross_turn_stability,
    dangling_markers,
    first_citation_order,
    gold_sources,
    no_answer,
    numbering_stability,
    register_scorer,
    required_searches,
    scorer_names,
    sent_tokenize,
    source_language,
    source_leakage,
    split_statements,
    split_statements_alce,
    uncited_dropping,
)

if TYPE_CHECKING:
    from citelab.evals.runner import (
        CachedModel,
        RunOptions,
        RunPlan,
        default_output_dir,
        plan_run,
        rescore,
        run,
        run_async,
        turn_record,
    )

# Imported on first use (from citelab.evals.runner, which imports them on first use too): the
# runner and the model-call cache pull in the agents, the answer service and the model
# adapters, which scoring other people's answers (``citelab score``) does not need.
_LAZY: dict[str, str] = dict.fromkeys(
    (
        "CachedModel",
        "RunOptions",
        "RunPlan",
        "default_output_dir",
        "plan_run",
        "rescore",
        "run",
        "run_async",
        "turn_record",
    ),
    "citelab.evals.runner",
)


__all__ = [
    "ALCE_PUBLISHED_AGREEMENT",
    "ANSWER_FORMATS",
    "DEFAULT_JUDGE",
    "DEFAULT_JUDGE_PROMPT",
    "JUDGES",
    "LABELS",
    "PAIR_UNITS",
    "SCORERS",
    "AnchorValidity",
    "AnswerFormat",
    "AnswerReader",
    "CachedModel",
    "Case",
    "CaseRecord",
    "CitationPrecision",
    "CitationRecall",
    "ClaimAttribution",
    "ClaimRecall",
    "Comparison",
    "CrossTurnStability",
    "DanglingMarkers",
    "Dataset",
    "EvalResult",
    "ExternalAnswer",
    "Finding",
    "FindingResult",
    "FirstCitationOrder",
    "FunctionJudge",
    "Gate",
    "GateResult",
    "GoldClaim",
    "GoldSources",
    "GoldTurn",
    "Judge",
    "JudgeCard",
    "LLMJudge",
    "Label",
    "LabelColumns",
    "LabelFile",
    "LabelItem",
    "LabelLine",
    "LabelPairs",
    "LabelPassage",
    "LabelQueue",
    "LabelSet",
    "LabelledPair",
    "Level",
    "LexicalJudge",
    "MessageReader",
    "ModelSpec",
    "NLIJudge",
    "NoAnswer",
    "NumberingStability",
    "PairUnit",
    "ReaderSpec",
    "Reference",
    "ReportView",
    "RequiredSearches",
    "RestrictedEntity",
    "RoundRecord",
    "RunOptions",
    "RunPlan",
    "Score",
    "Scorer",
    "SourceLanguage",
    "SourceLeakage",
    "SourceRecord",
    "Statement",
    "Suite",
    "TrainedLexicalJudge",
    "TurnRecord",
    "UncitedDropping",
    "Variant",
    "accepts_argument",
    "alce_output",
    "alce_remove_citations",
    "anchor_validity",
    "bootstrap_interval",
    "build_judge",
    "build_scorer",
    "build_scorers",
    "calibrate",
    "calibration_table",
    "category_accuracy",
    "check_dataset",
    "citation_precision",
    "citation_recall",
    "claim_attribution",
    "claim_recall",
    "compare_runs",
    "content_terms",
    "cross_turn_stability",
    "dangling_markers",
    "default_output_dir",
    "evaluate_findings",
    "evaluate_gates",
    "first_citation_order",
    "gold_sources",
    "judge_card",
    "judge_names",
    "label_pairs",
    "label_queue",
    "load_dataset",
    "load_label_set",
    "load_labels",
    "load_run",
    "load_suite",
    "no_answer",
    "numbering_stability",
    "pending",
    "plan_run",
    "read_answers",
    "read_label_file",
    "register_judge",
    "register_scorer",
    "render_html",
    "required_searches",
    "rescore",
    "resolve_suite_path",
    "run",
    "run_async",
    "score_answers",
    "score_records",
    "scorer_names",
    "sent_tokenize",
    "source_language",
    "source_leakage",
    "split_statements",
    "split_statements_alce",
    "summary_json",
    "to_answers",
    "turn_record",
    "uncited_dropping",
    "write_comparison",
    "write_outputs",
]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
