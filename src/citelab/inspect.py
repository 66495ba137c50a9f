"""citelab's citation recall and precision as Inspect AI scorers (``pip install
'citelab[inspect]'``), written in a task as Inspect users write scorers::

    from citelab.inspect import citation_precision, citation_recall

    Task(dataset=..., solver=generate(), scorer=[citation_recall(), citation_precision()])

The passages an answer cites come from the sample's ``metadata["docs"]`` in ALCE's shape
(``[{title, text}]``, cited as ``[1]``, ``[2]``…), else from the text Inspect's own citations
quote (``ContentText.citations``); see :mod:`citelab.evals.external._inspect`. Each scorer
takes citelab's arguments (``judge``, ``alce_compat``, ``max_citations``, ``qampari``) and
every score carries in its metadata the metric, its units (``numerator``, ``denominator``),
the judge's configuration, the judge's card (where it came from, its label set and κ, as
``citelab score`` names them) and the sources without a passage. A sample with nothing to
score (no statements; for precision no citation) scores NaN, which Inspect's ``mean`` then
reports as NaN rather than counting it 0.
"""

from __future__ import annotations

import math
from typing import Any

from citelab._errors import MissingDependency
from citelab.evals.cards import card_for
from citelab.evals.dataset import GoldTurn
from citelab.evals.external import ExternalAnswer, inspect_answer
from citelab.evals.judges import DEFAULT_JUDGE, Judge, build_judge
from citelab.evals.labels import JudgeSpec
from citelab.evals.records import TurnRecord
from citelab.evals.scorers import Score as CitelabScore
from citelab.evals.scorers import Scorer as CitelabScorer
from citelab.evals.scorers import citation_precision as _precision
from citelab.evals.scorers import citation_recall as _recall

try:
    from inspect_ai.scorer import Score, Target, mean, scorer, stderr
    from inspect_ai.solver import TaskState
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise MissingDependency("inspect_ai", "citelab's Inspect scorers", extra="inspect") from exc

__all__ = ["citation_precision", "citation_recall", "judge_metadata"]


@scorer(metrics=[mean(), stderr()])
def citation_recall(
    judge: JudgeSpec = DEFAULT_JUDGE,
    alce_compat: bool = False,
    max_citations: int | None = None,
    qampari: bool = False,
) -> Any:
    """Share of the answer's statements whose citations together support them (ALCE's
    citation recall; ``alce_compat`` scores exactly as ALCE's eval.py)."""
    built = build_judge(judge if isinstance(judge, str | Judge) else dict(judge))
    return _inspect_scorer(_recall(built, alce_compat, max_citations, qampari), built)


@scorer(metrics=[mean(), stderr()])
def citation_precision(
    judge: JudgeSpec = DEFAULT_JUDGE,
    alce_compat: bool = False,
    max_citations: int | None = None,
    qampari: bool = False,
) -> Any:
    """Share of the answer's citations that are needed: supported and relevant (ALCE's
    citation precision; ``alce_compat`` scores exactly as ALCE's eval.py)."""
    built = build_judge(judge if isinstance(judge, str | Judge) else dict(judge))
    return _inspect_scorer(_precision(built, alce_compat, max_citations, qampari), built)


def judge_metadata(judge: Judge) -> dict[str, Any]:
    """The judge, its card and κ, as every score's metadata names them."""
    card, origin = card_for(judge)
    kappa = None if card is None else card.metrics.kappa.value
    return {
        "judge": judge.config(),
        "judge_card": origin,
        "judge_card_labels": None if card is None else card.labels.name,
        "judge_kappa": kappa,
        "judge_card_summary": None if card is None else card.summary(),
    }


def _inspect_scorer(citelab_scorer: CitelabScorer, judge: Judge) -> Any:
    described = judge_metadata(judge)

    async def score(state: TaskState, target: Target) -> Score:
        answer = _answer(state)
        record = TurnRecord(question=answer.question, text=answer.text, sources=answer.sources)
        result = citelab_scorer(record, GoldTurn(question=answer.question or "?"))
        return _score(result, answer, described)

    return score


def _answer(state: TaskState) -> ExternalAnswer:
    message = state.output.message if state.output.choices else None
    content: Any = message.content if message is not None else state.output.completion
    where = f"sample {state.sample_id}"
    return inspect_answer(str(state.sample_id), state.input_text, content, state.metadata, where)


def _score(result: CitelabScore, answer: ExternalAnswer, described: dict[str, Any]) -> Score:
    value = math.nan if result.value is None else float(result.value)
    without = [s.number for s in answer.sources if not s.content.strip()]
    if result.value is None:
        explanation = f"{result.metric}: nothing to score"
    else:
        explanation = (
            f"{result.metric}: {result.numerator:g} of {result.denominator:g} units "
            f"(judge {described['judge'].get('name')}, κ {_kappa(described['judge_kappa'])})"
        )
    return Score(
        value=value,
        answer=answer.text,
        explanation=explanation,
        metadata={
            "metric": result.metric,
            "numerator": result.numerator,
            "denominator": result.denominator,
            **described,
            "without_passage": without,
        },
    )


def _kappa(value: float | None) -> str:
    return "unknown (no card)" if value is None else f"{value:.3f}"
