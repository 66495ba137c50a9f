"""Models built without validation are the models pydantic itself builds."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from citelab.contract import Anchor
from citelab.sources import Source
from citelab.sources import _trusted as trusted

ROWS = [
    {"source_uri": "entity:node/1", "cited_text": "Fees rise", "start_index": 0, "end_index": 9},
    {"source_uri": "entity:node/2", "cited_text": "😀 é", "start_index": 12, "end_index": 15},
]


def state(model: Anchor | Source) -> tuple[object, ...]:
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


def test_renumbered_sources_are_model_copies() -> None:
    sources = [
        Source(number=4, entity_type="node", entity_id="4", title="Four", fields={"a": 1}),
        Source(number=9, url="https://uni.example/9", content="Nine"),
    ]
    made = trusted.renumbered(sources, [1, 2])
    copies = [s.model_copy(update={"number": n}) for s, n in zip(sources, [1, 2], strict=True)]
    assert [state(source) for source in made] == [state(source) for source in copies]
    assert [source.number for source in sources] == [4, 9]  # the originals are untouched
    with pytest.raises(ValidationError, match="frozen"):
        made[0].number = 3  # type: ignore[misc]


def test_without_the_direct_way_anchors_are_validated_and_sources_copied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trusted, "_DIRECT", False)
    validated = [Anchor.model_validate(row) for row in ROWS]
    assert trusted.anchors([dict(row) for row in ROWS]) == validated
    with pytest.raises(ValidationError, match=r"1 validation error"):
        trusted.anchors([{**ROWS[0], "source_uri": ""}])  # validated: an empty uri is refused
    source = Source(number=5, title="Five")
    [copy] = trusted.renumbered([source], [1])
    assert state(copy) == state(source.model_copy(update={"number": 1}))


def test_the_self_check_fails_when_pydantic_stores_a_model_differently(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trusted, "_SET_EXTRA", trusted._missing_slot)
    assert not trusted.self_check()
