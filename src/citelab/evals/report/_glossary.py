"""What a report says about its metrics, beside the numbers.

``metric_glossary(scorers)`` is one row per metric, each in the scorer's own words: its
definition (the scorer's ``description``, else its class docstring's first paragraph, as plain
text), what one unit is (its ``unit``, else its detail level), how units pool into a
variant's value and which way is better. A user's scorer is described as it describes itself.
(What it says about variants, their notes, the run writes into its configuration: see
``citelab.evals.runner``.)
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from citelab._registry import description_of, plain_text
from citelab.evals.scorers import Scorer

__all__ = ["metric_glossary"]

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
            "definition": description_of(scorer) or scorer.name,
            "unit": _unit(scorer),
            "pooled": _POOLING.get(scorer.aggregate, scorer.aggregate),
            "better": "higher" if scorer.higher_is_better else "lower",
        }
        for scorer in scorers
    ]
    return pd.DataFrame(rows, columns=GLOSSARY_COLUMNS)


def _unit(scorer: Scorer) -> str:
    declared = getattr(scorer, "unit", None)
    if isinstance(declared, str) and declared.strip():
        return plain_text(declared)
    return f"{scorer.level}-level detail row"
