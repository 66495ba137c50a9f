"""What a report says about its metrics, beside the numbers.

``metric_glossary(scorers)`` is one row per metric: its definition (the scorer's own
docstring), what one unit is, how units pool into a variant's value and which way is better.
(What it says about variants, their notes, the run writes into its configuration: see
``citelab.evals.runner``.)
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable

import pandas as pd

from citelab.evals.scorers import Scorer

__all__ = ["metric_glossary"]

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
