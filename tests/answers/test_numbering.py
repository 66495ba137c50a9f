"""Conversation-wide numbering: a source keeps its number for the whole conversation."""

from __future__ import annotations

from typing import Any

import pytest

from citelab.agent import resolve_corpus_path
from citelab.answers import held_after
from citelab.contract import SOURCE_NUMBER_KEY, validate_message
from citelab.corpus import load_corpus
from citelab.events import Reference
from citelab.models import message_text
from citelab.sources import Source, finalize_citations

from .conftest import ServiceFactory, scripted, scripted_agent

pytestmark = pytest.mark.anyio

QUESTION = "How many ECTS credits is the Data Science BSc?"
BSC = "entity:program/data-science-bsc"


def _link_numbers(message: dict[str, Any]) -> list[int | None]:
    return [
        (block.get("_meta") or {}).get(SOURCE_NUMBER_KEY)
        for block in message["content"]
        if block["type"] == "resource_link"
    ]


async def _three_turns(make_service: ServiceFactory, numbering: str) -> list[Any]:
    model = scripted(
        {"text": "Held two [2] and BSc [1]."},
        {"text": "BSc again [2], and another [4]."},
        {"text": "The first one [1]."},
    )
    service = make_service(scripted_agent(numbering=numbering), models={"scripted": model})
    first = await service.answer("scripted", QUESTION)
    held = (await service.conversation(first.conversation_id)).held_sources
    shown: list[list[Reference]] = []
    second = await service.answer(
        "scripted", "And the other?", first.conversation_id, on_references=shown.append
    )
    third = await service.answer("scripted", "And the first?", first.conversation_id)
    record = await service.conversation(first.conversation_id)
    return [first, second, third, held, shown, record, model]


async def test_a_source_keeps_its_number_in_every_turn(make_service: ServiceFactory) -> None:
    first, second, third, held, _, record, _ = await _three_turns(make_service, "conversation")
    assert first.text == "Held two [1] and BSc [2]."
    assert [(s.number, s.uri) for s in first.sources][1] == (2, BSC)
    # Turn 2 cites the BSc under its conversation number and a held, uncited source (shown
    # as [4]), which continues the count as [3].
    assert second.text == "BSc again [2], and another [3]."
    assert [(r.number, r.uri) for r in second.references] == [(2, BSC), (3, held[3].uri)]
    assert second.mapping == {2: 2, 4: 3}
    assert third.text == "The first one [1]."
    assert [(r.number, r.uri) for r in third.references] == [(1, first.sources[0].uri)]
    assert record.numbered == 3
    assert [t.cited for t in record.turns] == [
        {1: first.sources[0].uri, 2: BSC},
        {2: BSC, 3: held[3].uri},
        {1: first.sources[0].uri},
    ]


async def test_the_model_is_shown_the_conversations_numbers(
    make_service: ServiceFactory,
) -> None:
    first, _, _, _, shown, _, model = await _three_turns(make_service, "conversation")
    prompt = message_text(model.seen[1][0])
    assert f'<source number="2" uri="{BSC}"' in prompt
    assert f'<source number="1" uri="{first.sources[0].uri}"' in prompt
    # The history's answers use the same numbers as the sources block.
    assert message_text(model.seen[1][2]) == first.text
    # The provisional references of turn 2 are the held sources under the numbers shown.
    assert [r.number for r in shown[0]][:2] == [1, 2]
    assert shown[0][1].uri == BSC


async def test_follow_up_messages_carry_their_numbers(make_service: ServiceFactory) -> None:
    first, second, third, *_ = await _three_turns(make_service, "conversation")
    assert _link_numbers(first.message.to_wire()) == [None, None]  # 1..k: nothing to say
    assert _link_numbers(second.message.to_wire()) == [2, 3]
    assert _link_numbers(third.message.to_wire()) == [None]  # [1] is its position
    for answer in (first, second, third):
        assert validate_message(answer.message.to_wire()) == []
    assert [n for n, _ in second.message.numbered_sources] == [2, 3]
    done = second.to_done_event()
    assert [r.number for r in done.references] == [2, 3]
    assert done.text == second.text


async def test_turn_numbering_renumbers_every_turn(make_service: ServiceFactory) -> None:
    first, second, third, _, _, record, _ = await _three_turns(make_service, "turn")
    assert first.text == "Held two [1] and BSc [2]."
    assert second.text == "BSc again [1], and another [2]."
    assert second.references[0].uri == BSC
    assert third.text == "The first one [1]."
    # Under per-turn numbering [1] of turn 3 is turn 2's first source, not turn 1's.
    assert third.references[0].uri == BSC
    assert record.numbered == 0
    assert _link_numbers(second.message.to_wire()) == [None, None]


async def test_an_uncited_number_of_the_conversation_stays_reserved(
    make_service: ServiceFactory,
) -> None:
    model = scripted(
        {"text": "One [1] and two [2]."}, {"text": "Only two [2]."}, {"text": "X [3]."}
    )
    service = make_service(scripted_agent(), models={"scripted": model})
    first = await service.answer("scripted", QUESTION)
    second = await service.answer("scripted", "Two?", first.conversation_id)
    record = await service.conversation(first.conversation_id)
    # Number 1 is not cited in turn 2 but stays the conversation's: the next new source is 3.
    assert [(s.number, s.uri) for s in record.held_sources[:2]] == [
        (s.number, s.uri) for s in first.sources
    ]
    third = await service.answer("scripted", "Three?", first.conversation_id)
    assert second.text == "Only two [2]."
    assert third.text == "X [3]."
    assert third.sources[0].uri == record.held_sources[2].uri


async def test_anchors_carry_the_source_side_passage(make_service: ServiceFactory) -> None:
    model = scripted({"text": "It is worth 180 ECTS credits [1]."})
    service = make_service(scripted_agent(), models={"scripted": model})
    answer = await service.answer("scripted", QUESTION)
    [quote] = answer.message.source_quotes
    [source] = answer.sources
    assert (quote.anchor_index, quote.source_uri) == (0, source.uri)
    assert quote.text == source.passage
    corpus = load_corpus(resolve_corpus_path("university"))
    assert source.entity_type is not None
    assert source.entity_id is not None
    document = corpus.get(source.entity_type, source.entity_id)
    assert document is not None
    body = document.translations["en"].content
    assert body[quote.start_index : quote.end_index] == quote.text
    card = answer.references[0]
    assert card.passage == source.passage
    assert card.detail is not None
    assert validate_message(answer.message.to_wire()) == []


def test_the_documented_example() -> None:
    """docs/numbering.md's worked example, step by step."""

    def program(name: str, number: int) -> Source:
        return Source(number=number, entity_type="page", entity_id=name, title=name)

    shown = [program("bsc", 1), program("msc", 2), program("library", 3), program("fee", 4)]
    keep, texts = 0, []
    for written in (
        "120 ECTS [2], fee [4].",
        "The fee [2], the BSc [3].",
        "The library [4], the MSc [1].",
    ):
        finalized = finalize_citations(written, shown, keep=keep)
        texts.append((finalized.text, [(s.number, s.entity_id) for s in finalized.sources]))
        shown = held_after(finalized, shown, keep=keep)
        keep = max([keep, *(s.number or 0 for s in finalized.sources)])
        if len(texts) == 1:
            assert [(s.number, s.entity_id) for s in shown] == [
                (1, "msc"),
                (2, "fee"),
                (3, "bsc"),
                (4, "library"),
            ]
    assert texts == [
        ("120 ECTS [1], fee [2].", [(1, "msc"), (2, "fee")]),
        ("The fee [2], the BSc [3].", [(2, "fee"), (3, "bsc")]),
        ("The library [4], the MSc [1].", [(4, "library"), (1, "msc")]),
    ]
    assert keep == 4
