"""Models built without validation are the models pydantic itself builds."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from citelab.contract import Anchor
from citelab.sources import _trusted as trusted

ROWS = [
    {"source_uri": "entity:node/1", "cited_text": "Fees rise", "start_index": 0, "end_index": 9},
    {"source_uri": "entity:node/2", "cited_text": "😀 é", "start_index": 12, "end_index": 15},
]


def state(model: Anchor) -> tuple[object, ...]:
    return (
        type(model),
        model.__dict__,
        model.model_fields_set,
        model.__pydantic_extra__,
        model.__pydantic_private__,
        model.model_dump_json(by_alias=True),
    )


def test_the_direct_way_is_in_use_with_this_pydantic() -> None:
    assert trusted.self_check()
    assert trusted._DIRECT


def test_anchors_are_the_validated_anchors() -> None:
    made = trusted.anchors([dict(row) for row in ROWS])
    validated = [Anchor.model_validate(row) for row in ROWS]
    assert made == validated
    assert [state(anchor) for anchor in made] == [state(anchor) for anchor in validated]


def test_each_anchor_has_its_own_fields_set() -> None:
    first, second = trusted.anchors([dict(row) for row in ROWS])
    assert first.model_fields_set is not second.model_fields_set
    first.cited_text = "changed"
    assert second.cited_text == "😀 é"


def test_without_the_direct_way_anchors_are_validated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trusted, "_DIRECT", False)
    validated = [Anchor.model_validate(row) for row in ROWS]
    assert trusted.anchors([dict(row) for row in ROWS]) == validated
    with pytest.raises(ValidationError, match=r"1 validation error"):
        trusted.anchors([{**ROWS[0], "source_uri": ""}])  # validated: an empty uri is refused


def test_the_self_check_fails_when_pydantic_stores_a_model_differently(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Stand-ins for a pydantic that keeps other state: a wrong set of fields, a failing slot.
    monkeypatch.setattr(trusted, "_FIELDS", frozenset({"source_uri"}))
    assert not trusted.self_check()
    monkeypatch.undo()
    assert trusted.self_check()

    def no_slot(model: object, name: str, value: object) -> None:
        raise AttributeError(f"pydantic no longer holds {name} in a slot")

    monkeypatch.setattr(trusted, "_set", no_slot)
    assert not trusted.self_check()
