"""Gold data: evaluation datasets of JSONL cases (readers, turns, gold claims and the
entities that support them, expected no-answers, multi-round scenarios), loaded and checked."""

from citelab.evals.dataset._dataset import (
    Case,
    Dataset,
    GoldClaim,
    GoldTurn,
    ReaderSpec,
    check_dataset,
    load_dataset,
)

__all__ = [
    "Case",
    "Dataset",
    "GoldClaim",
    "GoldTurn",
    "ReaderSpec",
    "check_dataset",
    "load_dataset",
]
