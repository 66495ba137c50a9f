"""Numbering across tool-call rounds: merge keeps numbers; replace is the seed's bug."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sources_builders import entity, numbered

from citelab import InvalidInput
from citelab.sources import (
    MERGE_STRATEGIES,
    Source,
    finalize_citations,
    merge_round,
    numbered_round,
    replace_round,
)


def numbers_by_id(sources: list[Source]) -> dict[str | None, int | None]:
    return {source.entity_id: source.number for source in sources}


def test_held_numbers_stay_and_new_entities_take_the_next_ones() -> None:
    held = merge_round([], [entity("a"), entity("b")])
    assert numbers_by_id(held) == {"a": 1, "b": 2}
    merged = merge_round(held, [entity("c"), entity("b"), entity("d")])
    assert numbers_by_id(merged) == {"a": 1, "b": 2, "c": 3, "d": 4}
    assert [s.entity_id for s in merged] == ["a", "b", "c", "d"]


def test_numbers_on_new_sources_are_ignored_and_repeats_collapse() -> None:
    new = [entity("x").model_copy(update={"number": 9}), entity("x"), entity("y")]
    merged = merge_round(numbered(1), new)
    assert numbers_by_id(merged) == {"1": 1, "x": 2, "y": 3}


def test_held_entity_keeps_its_content_whatever_later_rounds_return() -> None:
    held = merge_round([], [Source(entity_type="node", entity_id="a", title="A", content="v1")])
    later = [Source(entity_type="node", entity_id="a", title="A2", content="v2")]
    [kept] = merge_round(held, later)
    assert (kept.number, kept.title, kept.content) == (1, "A", "v1")


def test_merge_is_pure() -> None:
    held = merge_round([], [entity("a")])
    new = [entity("b")]
    merged = merge_round(held, new)
    assert held == merge_round([], [entity("a")])
    assert new == [entity("b")]
    assert merged[0] is not held[0]
    assert new[0].number is None


def test_numbering_continues_after_a_gap() -> None:
    merged = merge_round(numbered(1, 5), [entity("new")])
    assert numbers_by_id(merged)["new"] == 6


def test_non_entity_sources_merge_by_url_then_title() -> None:
    held = merge_round([], [Source(url="https://x.example/a", title="A")])
    merged = merge_round(
        held, [Source(url="https://x.example/a", title="A again"), Source(title="Note")]
    )
    assert [(s.uri, s.number) for s in merged] == [
        ("https://x.example/a", 1),
        ("urn:citelab:title:Note", 2),
    ]


@pytest.mark.parametrize(
    ("held", "message"),
    [
        ([entity("a")], r"held\[0\] \(entity:node/a\) has no number"),
        (numbered(1) + numbered(1, entity_type="doc"), r"held\[1\] .* repeats number 1"),
        (
            [*numbered(1), entity("1").model_copy(update={"number": 2})],
            r"held\[1\] .* repeats an entity",
        ),
    ],
)
def test_bad_held_lists_are_rejected(held: list[Source], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        merge_round(held, [])
    with pytest.raises(InvalidInput, match=message):
        replace_round(held, [])


def test_replace_round_reproduces_the_stale_number_bug_that_merge_round_prevents() -> None:
    # Round 1: the model sees [1] = admissions, [2] = fees, and writes "[2]" about fees.
    round_one = [entity("admissions"), entity("fees")]
    # Round 2: it searches again; the tool returns housing and admissions.
    round_two = [entity("housing"), entity("admissions")]
    answer = "Tuition is 300 euros [2]. Rooms are scarce [3]."

    merged = MERGE_STRATEGIES["merge"](MERGE_STRATEGIES["merge"]([], round_one), round_two)
    replaced = MERGE_STRATEGIES["replace"](MERGE_STRATEGIES["replace"]([], round_one), round_two)

    good = finalize_citations(answer, merged)
    assert [s.entity_id for s in good.sources] == ["fees", "housing"]
    assert good.text == "Tuition is 300 euros [1]. Rooms are scarce [2]."

    stale = finalize_citations(answer, replaced)
    # With the held list replaced, [2] now means admissions and [3] names nothing at all.
    assert [s.entity_id for s in stale.sources] == ["admissions"]
    assert [d.number for d in stale.dangling] == [3]


def test_numbered_round_shows_this_rounds_sources_with_their_final_numbers() -> None:
    held = merge_round([], [entity("a"), entity("b")])
    new = [
        Source(entity_type="node", entity_id="c", title="C", content="fresh"),
        Source(entity_type="node", entity_id="a", title="A", content="new chunk"),
    ]
    merged = merge_round(held, new)
    shown = numbered_round(merged, new)
    assert [(s.entity_id, s.number, s.content) for s in shown] == [
        ("c", 3, "fresh"),
        ("a", 1, "new chunk"),
    ]
    with pytest.raises(InvalidInput, match="entity:node/z is not in the merged list"):
        numbered_round(merged, [entity("z")])


ROUNDS = st.lists(
    st.lists(st.sampled_from("abcdefghij"), max_size=6).map(lambda ids: [entity(i) for i in ids]),
    min_size=1,
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(rounds=ROUNDS)
def test_no_entity_number_ever_changes_across_rounds(rounds: list[list[Source]]) -> None:
    held: list[Source] = []
    assigned: dict[tuple[str, str], int] = {}
    for new in rounds:
        held = merge_round(held, new)
        numbers = [s.number for s in held]
        assert numbers == list(range(1, len(held) + 1))
        assert len({s.key for s in held}) == len(held)
        for source in held:
            assert source.number is not None
            assert assigned.setdefault(source.key, source.number) == source.number
        assert {s.key for s in new} <= {s.key for s in held}
