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
  only; the report draws it) and :func:`calibration_table` tabulates several cards.
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
    JudgeCard,
    Reference,
    calibration_table,
    category_accuracy,
    judge_card,
)
from citelab.evals.dataset import (
    AlcePromptSettings,
    Case,
    Dataset,
    GoldClaim,
    GoldTurn,
    alce_prompts,
    check_dataset,
    load_dataset,
)
from citelab.evals.external import (
    ANSWER_FORMATS,
    AnswerReader,
    ExternalAnswer,
    MessageReader,
    read_answers,
    score_answers,
)
from citelab.evals.judges import (
    DEFAULT_JUDGE,
    JUDGES,
    FunctionJudge,
    Judge,
    LexicalJudge,
    LLMJudge,
    NLIJudge,
    TrainedLexicalJudge,
    build_judge,
    judge_names,
    register_judge,
)
from citelab.evals.labels import (
    LABELS,
    LabelColumns,
    LabelFile,
    LabelledPair,
    LabelSet,
    label_pairs,
    label_queue,
    load_label_set,
    read_label_file,
)
from citelab.evals.records import (
    CaseRecord,
)
from citelab.evals.report import (
    Comparison,
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
    evaluate_findings,
    evaluate_gates,
    score_records,
)
from citelab.evals.runner import (
    ModelSpec,
    Suite,
    Variant,
    load_suite,
)
from citelab.evals.scorers import (
    SCORERS,
    Score,
    Scorer,
    Statement,
    build_scorer,
    build_scorers,
    register_scorer,
    scorer_names,
)

if TYPE_CHECKING:
    from citelab.evals.runner import (
        AlceDecoding,
        RunOptions,
        plan_run,
        rescore,
        run,
        run_alce,
        run_async,
    )

# Imported on first use (from citelab.evals.runner, which imports them on first use too): the
# runner and the model-call cache pull in the agents, the answer service and the model
# adapters, which scoring other people's answers (``citelab score``) does not need.
_LAZY: dict[str, str] = dict.fromkeys(
    (
        "AlceDecoding",
        "RunOptions",
        "plan_run",
        "rescore",
        "run",
        "run_alce",
        "run_async",
    ),
    "citelab.evals.runner",
)


__all__ = [
    "ANSWER_FORMATS",
    "DEFAULT_JUDGE",
    "JUDGES",
    "LABELS",
    "SCORERS",
    "AlceDecoding",
    "AlcePromptSettings",
    "AnswerReader",
    "Case",
    "CaseRecord",
    "Comparison",
    "Dataset",
    "EvalResult",
    "ExternalAnswer",
    "Finding",
    "FindingResult",
    "FunctionJudge",
    "Gate",
    "GateResult",
    "GoldClaim",
    "GoldTurn",
    "Judge",
    "JudgeCard",
    "LLMJudge",
    "LabelColumns",
    "LabelFile",
    "LabelSet",
    "LabelledPair",
    "LexicalJudge",
    "MessageReader",
    "ModelSpec",
    "NLIJudge",
    "Reference",
    "RunOptions",
    "Score",
    "Scorer",
    "Statement",
    "Suite",
    "TrainedLexicalJudge",
    "Variant",
    "alce_prompts",
    "build_judge",
    "build_scorer",
    "build_scorers",
    "calibration_table",
    "category_accuracy",
    "check_dataset",
    "compare_runs",
    "evaluate_findings",
    "evaluate_gates",
    "judge_card",
    "judge_names",
    "label_pairs",
    "label_queue",
    "load_dataset",
    "load_label_set",
    "load_run",
    "load_suite",
    "plan_run",
    "read_answers",
    "read_label_file",
    "register_judge",
    "register_scorer",
    "render_html",
    "rescore",
    "run",
    "run_alce",
    "run_async",
    "score_answers",
    "score_records",
    "scorer_names",
    "write_comparison",
    "write_outputs",
]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
