"""What a report says about its metrics and variants, beside the numbers.

``metric_glossary(scorers)`` is one row per metric: its definition (the scorer's own
docstring), what one unit is, how units pool into a variant's value and which way is better.
``variant_notes(suite, models)`` says where a variant cannot change what a model does: a
variant that only rewords the system prompt, run on a model that declares it does not read
instructions (``reads_instructions = False``, e.g. the extractive model), must equal the
baseline, and a report that shows the two side by side says why.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from citelab._errors import CitelabError
from citelab.evals._suite import ModelSpec, Variant
from citelab.evals.scorers import Scorer

__all__ = ["PROMPT_WORDING", "metric_glossary", "reads_instructions", "variant_notes"]

PROMPT_WORDING = frozenset({"prompt", "contract_template"})
"""Agent settings that only change the wording of the system prompt."""

_UNITS = {
    "citation_recall": "statement of the answer",
    "citation_precision": "citation (a number in a marker)",
    "claim_recall": "gold claim",
    "claim_attribution": "gold claim",
    "gold_sources": "entity the gold lists (must / must not cite)",
    "anchor_validity": "_meta citation anchor",
    "uncited_dropping": "source the turn held",
    "first_citation_order": "final source",
    "numbering_stability": "citation the model wrote, in its round",
    "dangling_markers": "citation the model wrote",
    "required_searches": "turn that names min_searches",
    "source_language": "final source of a turn that names a language",
    "no_answer": "turn",
    "source_leakage": "turn",
}
_POOLING = {
    "micro": "micro: every unit of every turn pooled (hits over units)",
    "macro": "macro: the mean of the per-turn values (each turn counts once)",
}
GLOSSARY_COLUMNS = ["metric", "definition", "unit", "pooled", "better"]


def metric_glossary(scorers: Iterable[Scorer]) -> pd.DataFrame:
    """One row per metric: ``metric``, ``definition``, ``unit``, ``pooled``, ``better``."""
    rows = [
        {
            "metric": scorer.metric,
            "definition": _definition(scorer),
            "unit": _UNITS.get(scorer.name, f"{scorer.level}-level unit"),
            "pooled": _POOLING.get(scorer.aggregate, scorer.aggregate),
            "better": "higher" if scorer.higher_is_better else "lower",
        }
        for scorer in scorers
    ]
    return pd.DataFrame(rows, columns=GLOSSARY_COLUMNS)


def _definition(scorer: Scorer) -> str:
    doc = inspect.getdoc(type(scorer)) or ""
    first = doc.split("\n\n", 1)[0]
    text = " ".join(first.split())
    config = {k: v for k, v in scorer.config().items() if k not in ("name", "judge")}
    if config:
        text += " (" + ", ".join(f"{k}={v}" for k, v in sorted(config.items())) + ")"
    return text or scorer.name


def reads_instructions(spec: ModelSpec) -> bool:
    """Whether the model ``spec`` builds reads its instructions (True unless it says not,
    directly or through the model it wraps; True too when it cannot be built here)."""
    from citelab.models import get_model

    try:
        model: Any = get_model(spec.spec, **spec.options)
    except CitelabError:
        return True
    while model is not None:
        flag = getattr(model, "reads_instructions", None)
        if flag is not None:
            return bool(flag)
        model = getattr(model, "inner", None)
    return True


def variant_notes(variants: Sequence[Variant], models: Sequence[ModelSpec]) -> dict[str, str]:
    """Variant name → a sentence, for variants that cannot change what some model writes."""
    deaf = [spec.name for spec in models if not reads_instructions(spec)]
    notes: dict[str, str] = {}
    for variant in variants:
        changed = set(variant.set)
        if not deaf or not changed or not changed <= PROMPT_WORDING:
            continue
        names = ", ".join(deaf)
        settings = ", ".join(sorted(changed))
        notes[variant.name] = (
            f"It only changes the prompt's wording ({settings}), which {names} does not read: "
            "for that model it cannot differ from the baseline."
        )
    return notes
