"""The offline model answers only what its sources hold, and its reply chips lead on.

The sources are a user's notes (``tests/user_notes``, our own text): a ferry page with
prices and a harbour car park, but no semester fee and no museum.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from citelab import InvalidInput
from citelab.models import ExtractiveModel, Message, ModelTurn, ToolSpec, collect
from citelab.sources._block import BlockSource

from .._builders import RAG_SEARCH, numbered_results, search_call, system, user

NOTES = Path(__file__).parents[2] / "user_notes"


def _note(number: int, name: str, title: str) -> BlockSource:
    text = (NOTES / name).read_text(encoding="utf-8")
    body = text.split("\n\n", 1)[1]  # below the heading line
    return BlockSource(number, f"entity:document/{name}", title, " ".join(body.split()))


FERRY = _note(1, "ferry.md", "Island ferry")
PARKING = _note(2, "harbour-parking.md", "Parking at the harbour")
CHOIR = _note(3, "choir.md", "Choir rehearsals")
NOTES_SHOWN = (FERRY, PARKING, CHOIR)


async def _turn(messages: list[Message], tools: tuple[ToolSpec, ...] = ()) -> ModelTurn:
    return await collect(ExtractiveModel().stream(messages, tools))


@pytest.mark.anyio
@pytest.mark.parametrize(
    "question",
    [
        "How much is the semester fee?",  # the ferry's prices are prices of something else
        "When is the harbour museum open?",  # the car park shares one word of three
    ],
)
async def test_a_question_no_source_answers_gets_the_no_answer_text(question: str) -> None:
    model = ExtractiveModel()
    turn = await collect(model.stream([system(*NOTES_SHOWN), user(question)]))
    assert turn.text == model.no_answer_text
    assert "[" not in turn.text


@pytest.mark.anyio
async def test_without_an_answer_in_view_it_searches_once_then_says_so() -> None:
    question = "When is the harbour museum open?"
    first = await _turn([system(*NOTES_SHOWN), user(question)], (RAG_SEARCH,))
    assert first.finish_reason == "tool_calls"  # the sources in view do not answer: search
    searched: list[Message] = [
        system(*NOTES_SHOWN),
        user(question),
        search_call("call_1", first.tool_calls[0].parsed_arguments()["query"]),
        numbered_results("call_1", PARKING),
    ]
    second = await _turn(searched, (RAG_SEARCH,))
    assert second.finish_reason == "stop"
    assert second.text == ExtractiveModel().no_answer_text


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (
            "When does the ferry to Skarvøy leave?",
            "The ferry to Skarvøy leaves the north pier at 8:15 and at 16:40 [1].",
        ),
        (
            "How much does parking at the harbour cost?",
            "Parking at the harbour costs 2 euros per hour [2].",
        ),
        (
            "What does a ferry ticket cost for children?",
            "Tickets cost 9 euros for adults and 4 euros for children [1].",
        ),
    ],
)
async def test_what_the_notes_hold_is_still_answered(question: str, answer: str) -> None:
    turn = await _turn([system(*NOTES_SHOWN), user(question)])
    assert turn.text.startswith(answer)


def test_the_answer_share_is_checked() -> None:
    with pytest.raises(InvalidInput, match="min_answer_share"):
        ExtractiveModel(min_answer_share=1.5)


# --- suggested replies lead somewhere new -----------------------------------------------------


async def _conversation(first: str, follow_ups: int) -> list[tuple[str, ModelTurn]]:
    """Ask ``first``, then each time the first chip offered, as a user clicking chips does."""
    messages: list[Message] = [system(*NOTES_SHOWN), user(first)]
    asked = [(first, await _turn(messages))]
    for _ in range(follow_ups):
        replies = asked[-1][1].suggested_replies
        if not replies:
            break
        label = replies[0].label
        messages += [{"role": "assistant", "content": asked[-1][1].text}, user(label)]
        asked.append((label, await _turn(messages)))
    return asked


@pytest.mark.anyio
async def test_tell_me_more_says_something_new_and_is_not_offered_again() -> None:
    asked = await _conversation("When does the choir rehearse?", follow_ups=3)
    (_, first), (more, second) = asked[:2]
    assert first.text == (
        "The choir rehearses on Wednesday evenings at 19:30 in the parish hall [3]."
    )
    assert more == "Tell me more about Choir rehearsals"
    assert second.text  # a new sentence, not the same answer again
    assert "parish hall" not in second.text
    assert second.text.startswith("Sheet music is handed out at the first rehearsal")
    labels = [reply.label for reply in second.suggested_replies]
    assert more not in labels


@pytest.mark.anyio
async def test_every_chip_leads_to_a_sentence_not_said_before() -> None:
    for question in ("When does the choir rehearse?", "How much does parking at the harbour cost?"):
        asked = await _conversation(question, follow_ups=6)
        said: list[str] = []
        for label, turn in asked:
            sentences = [s for s in turn.text.split("]. ") if s]
            if label != question:
                assert any(s not in said for s in sentences), (label, turn.text, said)
            said += sentences
        labels = [label for label, _ in asked]
        assert len(labels) == len(set(labels)), labels  # no chip offered twice


@pytest.mark.anyio
async def test_when_nothing_new_is_left_there_is_no_tell_me_more() -> None:
    messages: list[Message] = [
        system(PARKING),
        user("How much does parking at the harbour cost?"),
        {"role": "assistant", "content": "Parking at the harbour costs 2 euros per hour [2]."},
        user("When does the car park beside the fish market close?"),
    ]
    turn = await _turn(messages)
    assert turn.text == "The car park beside the fish market closes at midnight [2]."
    assert not [r for r in turn.suggested_replies if r.label.startswith("Tell me more")]
    # Asked anyway, "more" finds nothing the conversation has not said: no answer, no repeat.
    messages += [
        {"role": "assistant", "content": turn.text},
        user("Tell me more about Parking at the harbour"),
    ]
    again = await _turn(messages)
    assert again.text == ExtractiveModel().no_answer_text


# A second user's two notes (our own text): a ferry and a car park that says "open".
ISLAND_FERRY = BlockSource(
    1,
    "entity:document/ferry.md",
    "Ferry to the island",
    "The ferry to the island leaves the harbour at 7:30 and returns at 18:00. A return "
    "ticket costs 12 euros.",
)
CAR_PARK = BlockSource(
    2,
    "entity:document/car-park.md",
    "Car park",
    "The harbour car park is open from 6:00 to 23:00. Parking costs 1.50 euros per hour.",
)


@pytest.mark.anyio
async def test_a_question_about_a_thing_no_source_names_gets_no_answer() -> None:
    """The car park holds "harbour" and "open", two words of three: the museum itself is in
    no source, so the car park's hours are no answer."""
    model = ExtractiveModel()
    question = "When is the harbour museum open?"
    turn = await collect(model.stream([system(ISLAND_FERRY, CAR_PARK), user(question)]))
    assert turn.text == model.no_answer_text


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (
            "When is the harbour car park open?",
            "The harbour car park is open from 6:00 to 23:00 [2].",
        ),
        ("When exactly does the island ferry leave?", "The ferry to the island leaves the harbour"),
    ],
)
async def test_the_same_notes_still_answer_what_they_hold(question: str, answer: str) -> None:
    turn = await collect(ExtractiveModel().stream([system(ISLAND_FERRY, CAR_PARK), user(question)]))
    assert turn.text.startswith(answer)
