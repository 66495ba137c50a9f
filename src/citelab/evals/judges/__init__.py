"""Judges: every support decision ("does this evidence support this statement?") goes
through a :class:`Judge` — :class:`LexicalJudge` (offline, the default), :class:`LLMJudge`
(any OpenAI-compatible model), a function, or ``module:attr`` — and calibration measures a
judge against human labels. People's own labels are saved, one line at a time, to a labels
file (:class:`LabelFile`), from pairs ordered for labelling (:func:`label_queue`).

A judge that asks a model can defer (:class:`DeferringJudge`): scored inside
:func:`score_concurrently`, an unknown verdict raises :class:`VerdictPending`, and many
answers' questions are asked at once. :class:`JudgeModel` (``citelab serve-model --model
judge``) answers judge prompts with an offline judge; it is imported on first use, since it
needs the model adapters.
"""

from typing import TYPE_CHECKING

from citelab._lazy import lazy_attributes
from citelab.evals.judges._calibrate import (
    ALCE_PUBLISHED_AGREEMENT,
    DEFAULT_LABELS,
    LabelledPair,
    calibrate,
    calibration_table,
    category_accuracy,
    load_labels,
)
from citelab.evals.judges._deferring import (
    DeferringJudge,
    VerdictPending,
    deferring,
    run_blocking,
    score_concurrently,
    score_deferring,
)
from citelab.evals.judges._judges import (
    DEFAULT_JUDGE_PROMPT,
    FunctionJudge,
    Judge,
    LexicalJudge,
    LLMJudge,
    PairLexicalJudge,
    build_judge,
    content_terms,
    judge_names,
    register_judge,
)
from citelab.evals.judges._label_file import (
    LABELS,
    Label,
    LabelFile,
    LabelLine,
    read_label_file,
)
from citelab.evals.judges._label_queue import (
    JudgeSpec,
    LabelItem,
    LabelPassage,
    LabelQueue,
    label_queue,
    pending,
)

if TYPE_CHECKING:
    from citelab.evals.judges._judge_model import JudgeModel, read_judge_prompt

_LAZY: dict[str, str] = dict.fromkeys(
    ("JudgeModel", "read_judge_prompt"), "citelab.evals.judges._judge_model"
)

__all__ = [
    "ALCE_PUBLISHED_AGREEMENT",
    "DEFAULT_JUDGE_PROMPT",
    "DEFAULT_LABELS",
    "LABELS",
    "DeferringJudge",
    "FunctionJudge",
    "Judge",
    "JudgeModel",
    "JudgeSpec",
    "LLMJudge",
    "Label",
    "LabelFile",
    "LabelItem",
    "LabelLine",
    "LabelPassage",
    "LabelQueue",
    "LabelledPair",
    "LexicalJudge",
    "PairLexicalJudge",
    "VerdictPending",
    "build_judge",
    "calibrate",
    "calibration_table",
    "category_accuracy",
    "content_terms",
    "deferring",
    "judge_names",
    "label_queue",
    "load_labels",
    "pending",
    "read_judge_prompt",
    "read_label_file",
    "register_judge",
    "run_blocking",
    "score_concurrently",
    "score_deferring",
]

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
