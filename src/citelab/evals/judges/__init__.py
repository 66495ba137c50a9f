"""Judges: every support decision ("does this evidence support this statement?") goes
through a :class:`Judge` — :class:`TrainedLexicalJudge` (offline, the default:
:data:`DEFAULT_JUDGE`), :class:`LexicalJudge` (offline, word coverage), :class:`LLMJudge`
(any OpenAI-compatible model), :class:`NLIJudge` (an entailment model run here, ALCE's TRUE
among them; the extra ``nli``), a function, or ``module:attr``.

A judge that asks a model can defer (:class:`DeferringJudge`): scored inside
:func:`score_deferring`, an unknown verdict raises :class:`VerdictPending`, so many answers'
questions are asked at once (``citelab.evals.execution`` drives them). :class:`JudgeModel`
(``citelab serve-model --model judge``) answers judge prompts with an offline judge; it is
imported on first use, since it needs the model adapters. People's labels live in
``citelab.evals.labels``; what a judge is measured to be against them, in ``citelab.evals.cards``.
"""

from typing import TYPE_CHECKING

from citelab._lazy import lazy_attributes
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
from citelab.evals.judges._nli import TRUE_INPUT, NLIJudge
from citelab.evals.judges._prompts import MINICHECK_PROMPT, MINICHECK_SYSTEM
from citelab.evals.judges._support_model import TrainedLexicalJudge
from citelab.evals.judges._training_data import claim_key

if TYPE_CHECKING:
    from citelab.evals.judges._judge_model import JudgeModel, read_judge_prompt

_LAZY: dict[str, str] = dict.fromkeys(
    ("JudgeModel", "read_judge_prompt"), "citelab.evals.judges._judge_model"
)

__all__ = [
    "DEFAULT_JUDGE",
    "DEFAULT_JUDGE_PROMPT",
    "JUDGES",
    "MINICHECK_PROMPT",
    "MINICHECK_SYSTEM",
    "TRUE_INPUT",
    "DeferringJudge",
    "FunctionJudge",
    "Judge",
    "JudgeModel",
    "LLMJudge",
    "LexicalJudge",
    "NLIJudge",
    "TrainedLexicalJudge",
    "VerdictPending",
    "build_judge",
    "claim_key",
    "content_terms",
    "deferring",
    "judge_names",
    "read_judge_prompt",
    "register_judge",
    "score_deferring",
]

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
