"""Number sources across the tool-call rounds of one turn.

The model cites the numbers it was shown. When it searches again, a round's new candidates
must not renumber what it already saw: :func:`merge_round` keeps every held number and gives
new entities the next ones. :func:`replace_round` is the seed's bug, kept as an ablation: a
later round replaces the held list and numbers it 1..n afresh, so earlier citations resolve
to different sources.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from citelab._errors import InvalidInput
from citelab.sources._source import ReferenceKey, Source

__all__ = ["MERGE_STRATEGIES", "MergeStrategy", "merge_round", "numbered_round", "replace_round"]

MergeStrategy = Callable[[Sequence[Source], Sequence[Source]], list[Source]]
"""``(held, new) -> numbered``: how one round's sources join what the turn holds."""


def merge_round(held: Sequence[Source], new: Sequence[Source]) -> list[Source]:
    """``held`` unchanged, then each new entity with the next number, in the order given.

    The ``number`` of ``new`` items is ignored; an entity already held keeps its number and
    its held content, whatever later rounds return. Returns new objects.
    """
    numbers = _check_held(held)
    seen = {source.key for source in held}
    merged = [source.model_copy() for source in held]
    next_number = max(numbers, default=0) + 1
    for source in new:
        if source.key in seen:
            continue
        seen.add(source.key)
        merged.append(source.model_copy(update={"number": next_number}))
        next_number += 1
    return merged


def replace_round(held: Sequence[Source], new: Sequence[Source]) -> list[Source]:
    """Ablation (the seed's bug): forget ``held``, number this round's entities 1..n afresh."""
    _check_held(held)
    return merge_round([], new)


def numbered_round(merged: Sequence[Source], new: Sequence[Source]) -> list[Source]:
    """This round's sources as the model must see them in the tool message: with the numbers
    they carry in ``merged`` (the result of the merge), one per entity, in the round's order."""
    number_of = {source.key: source.number for source in merged}
    shown: list[Source] = []
    seen: set[ReferenceKey] = set()
    for source in new:
        if source.key in seen:
            continue
        if source.key not in number_of:
            raise InvalidInput(f"source {source.uri} is not in the merged list: merge it first")
        seen.add(source.key)
        shown.append(source.model_copy(update={"number": number_of[source.key]}))
    return shown


def _check_held(held: Sequence[Source]) -> set[int]:
    """Held sources must be numbered, with distinct numbers and distinct entities."""
    numbers: set[int] = set()
    keys: set[ReferenceKey] = set()
    for index, source in enumerate(held):
        if source.number is None:
            raise InvalidInput(f"held[{index}] ({source.uri}) has no number")
        if source.number in numbers:
            raise InvalidInput(f"held[{index}] ({source.uri}) repeats number {source.number}")
        if source.key in keys:
            raise InvalidInput(f"held[{index}] ({source.uri}) repeats an entity already held")
        numbers.add(source.number)
        keys.add(source.key)
    return numbers


MERGE_STRATEGIES: Mapping[str, MergeStrategy] = MappingProxyType(
    {"merge": merge_round, "replace": replace_round}
)
"""Merge strategies by name, for ablations described as configuration."""
