"""Judges: every support decision ("does this evidence support this statement?") goes
through a :class:`Judge` — :class:`TrainedLexicalJudge` (offline, the default:
:data:`DEFAULT_JUDGE`), :class:`LexicalJudge` (offline, word coverage), :class:`LLMJudge`
(any OpenAI-compatible model), :class:`NLIJudge` (an entailment model run here, ALCE's TRUE
among them; the extra ``nli``), a function, or ``module:attr`` — and a judge card measures a
judge against people's labels.

Labelled sets (:func:`load_label_set`): WiCE's claim and oracle-chunk files, ALCE's human-eval
citation file, JSON Lines or CSV with named columns (:class:`LabelColumns`), citelab's own
set. :func:`judge_card` makes a :class:`JudgeCard` (accuracy, macro-F1, κ, AUC, confusion,
sensitivity and specificity with bootstrap intervals over claims, a threshold sweep,
categories, reference judges' published outputs side by side: :class:`Reference`);
citelab ships cards for its offline judges (:func:`shipped_card`; :func:`card_for` picks a
judge's card among the user's and the shipped ones);
:func:`calibrate` is its table view for several judges.
People's own labels are saved, one line at a time, to a labels file (:class:`LabelFile`),
from pairs ordered for labelling (:func:`label_queue`).

A judge that asks a model can defer (:class:`DeferringJudge`): scored inside
:func:`score_deferring`, an unknown verdict raises :class:`VerdictPending`, so many
answers' questions are asked at once (``citelab.evals.execution`` drives them).
:class:`JudgeModel` (``citelab serve-model --model judge``) answers judge prompts with an
offline judge; it is imported on first use, since it needs the model adapters.
"""

from typing import TYPE_CHECKING

from citelab._lazy import lazy_attributes
from citelab.evals.judges._calibrate import (
    ALCE_PUBLISHED_AGREEMENT,
    DEFAULT_LABELS,
    calibrate,
    calibrate_cards,
    calibration_table,
    category_accuracy,
    load_labels,
    metrics_row,
)
from citelab.evals.judges._card import (
    DEFAULT_CARD_JUDGE,
    JudgeCard,
    Reference,
    judge_card,
    judge_label,
)
from citelab.evals.judges._deferring import (
    DeferringJudge,
    VerdictPending,
    deferring,
    score_deferring,
)
from citelab.evals.judges._judges import (
    DEFAULT_JUDGE,
    DEFAULT_JUDGE_PROMPT,
    JUDGES,
    FunctionJudge,
    Judge,
    LexicalJudge,
    LLMJudge,
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
from citelab.evals.judges._labels import (
    LABEL_FORMATS,
    PARTIAL_AS,
    LabelColumns,
    LabelledPair,
    LabelSet,
    LabelSource,
    load_label_set,
)
from citelab.evals.judges._nli import TRUE_INPUT, NLIJudge
from citelab.evals.judges._prompts import MINICHECK_PROMPT, MINICHECK_SYSTEM
from citelab.evals.judges._shipped import (
    CARDS_DIR,
    card_for,
    load_cards,
    same_judge,
    shipped_card,
    shipped_cards,
)
from citelab.evals.judges._support_model import TrainedLexicalJudge

if TYPE_CHECKING:
    from citelab.evals.judges._judge_model import JudgeModel, read_judge_prompt

_LAZY: dict[str, str] = dict.fromkeys(
    ("JudgeModel", "read_judge_prompt"), "citelab.evals.judges._judge_model"
)

__all__ = [
    "ALCE_PUBLISHED_AGREEMENT",
    "CARDS_DIR",
    "DEFAULT_CARD_JUDGE",
    "DEFAULT_JUDGE",
    "DEFAULT_JUDGE_PROMPT",
    "DEFAULT_LABELS",
    "JUDGES",
    "LABELS",
    "LABEL_FORMATS",
    "MINICHECK_PROMPT",
    "MINICHECK_SYSTEM",
    "PARTIAL_AS",
    "TRUE_INPUT",
    "DeferringJudge",
    "FunctionJudge",
    "Judge",
    "JudgeCard",
    "JudgeModel",
    "JudgeSpec",
    "LLMJudge",
    "Label",
    "LabelColumns",
    "LabelFile",
    "LabelItem",
    "LabelLine",
    "LabelPassage",
    "LabelQueue",
    "LabelSet",
    "LabelSource",
    "LabelledPair",
    "LexicalJudge",
    "NLIJudge",
    "Reference",
    "TrainedLexicalJudge",
    "VerdictPending",
    "build_judge",
    "calibrate",
    "calibrate_cards",
    "calibration_table",
    "card_for",
    "category_accuracy",
    "content_terms",
    "deferring",
    "judge_card",
    "judge_label",
    "judge_names",
    "label_queue",
    "load_cards",
    "load_label_set",
    "load_labels",
    "metrics_row",
    "pending",
    "read_judge_prompt",
    "read_label_file",
    "register_judge",
    "same_judge",
    "score_deferring",
    "shipped_card",
    "shipped_cards",
]

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
