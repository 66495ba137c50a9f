"""The offline extractive model: what it answers, what it cites, when it searches."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import pytest

from citelab import InvalidInput
from citelab.models import (
    ExtractiveModel,
    FinishDelta,
    Message,
    ModelDelta,
    ModelTurn,
    SuggestedRepliesDelta,
    TextDelta,
    ToolChoice,
    ToolSpec,
    collect,
)
from citelab.sources._block import BlockSource

from .._builders import (
    DATA_SCIENCE,
    FEES,
    HISTORY,
    LIBRARY_ROW,
    POOL_ROW,
    RAG_SEARCH,
    dumped,
    numbered_results,
    raw_results,
    search_call,
    source,
    system,
    user,
)

_MARKER = re.compile(r"\[(\d+)\]")


async def _deltas(
    model: ExtractiveModel,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] | None = (RAG_SEARCH,),
    tool_choice: ToolChoice | None = None,
) -> list[ModelDelta]:
    return [d async for d in model.stream(messages, tools, tool_choice=tool_choice)]


async def _turn(
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] | None = (RAG_SEARCH,),
    model: ExtractiveModel | None = None,
    tool_choice: ToolChoice | None = None,
) -> ModelTurn:
    stream = (model or ExtractiveModel()).stream(messages, tools, tool_choice=tool_choice)
    return await collect(stream)


def _cited_sentences(text: str) -> list[tuple[str, list[int]]]:
    """Each answer sentence without its markers, with the numbers it cites."""
    parts = re.findall(r"(.+?)((?:\s*\[\d+\])+)([.!?])(?:\s|$)", text)
    return [
        (body.strip() + end, [int(n) for n in _MARKER.findall(marks)]) for body, marks, end in parts
    ]


@pytest.mark.anyio
async def test_same_input_gives_the_same_stream() -> None:
    messages: list[Message] = [
        system(DATA_SCIENCE, HISTORY, FEES),
        user("How much are tuition fees?"),
    ]
    first = await _deltas(ExtractiveModel(), messages)
    second = await _deltas(ExtractiveModel(), list(messages))
    assert dumped(first) == dumped(second)


@pytest.mark.anyio
async def test_each_sentence_is_quoted_from_the_source_whose_number_it_cites() -> None:
    sources = (DATA_SCIENCE, HISTORY, FEES)
    messages: list[Message] = [
        system(*sources),
        user("How long does the Data Science master take, and what are the tuition fees?"),
    ]
    turn = await _turn(messages)
    assert turn.finish_reason == "stop"
    cited = _cited_sentences(turn.text)
    assert {n for _, ns in cited for n in ns} == {1, 3}
    by_number = {s.number: s for s in sources}
    for sentence, numbers in cited:
        for number in numbers:
            assert sentence in by_number[number].content


@pytest.mark.anyio
async def test_the_freshest_view_of_a_number_wins() -> None:
    messages: list[Message] = [
        system(DATA_SCIENCE),
        user("Can I bring my dog to the swimming pool?"),
        search_call("c1", "dog swimming pool"),
        numbered_results(
            "c1",
            BlockSource(1, "entity:page/pool", "Sports centre", str(POOL_ROW["content"])),
        ),
    ]
    turn = await _turn(messages)
    assert turn.text == "Dogs are not allowed in the swimming pool [1]."


@pytest.mark.anyio
async def test_raw_json_results_are_numbered_by_position_even_when_numbers_go_stale() -> None:
    # The system prompt says [1] is Data Science; the raw tool output's first row is the pool.
    # A naive model cites the pool as [1]: the stale-number hazard the evaluations measure.
    messages: list[Message] = [
        system(DATA_SCIENCE, HISTORY),
        user("Can I bring my dog to the swimming pool?"),
        search_call("c1", "dog swimming pool"),
        raw_results("c1", LIBRARY_ROW, POOL_ROW),
    ]
    turn = await _turn(messages)
    assert turn.text == "Dogs are not allowed in the swimming pool [2]."


@pytest.mark.anyio
async def test_low_coverage_calls_rag_search_with_the_uncovered_terms() -> None:
    messages: list[Message] = [
        system(DATA_SCIENCE, FEES),
        user("Can I bring my dog to the swimming pool?"),
    ]
    deltas = await _deltas(ExtractiveModel(), messages)
    assert isinstance(deltas[-1], FinishDelta)
    assert deltas[-1].reason == "tool_calls"
    assert not any(isinstance(d, TextDelta) for d in deltas)
    turn = await _turn(messages)
    (call,) = turn.tool_calls
    assert call.name == "rag_search"
    query = call.parsed_arguments()["query"]
    assert {"dog", "swimming", "pool"} <= set(query.split())


@pytest.mark.anyio
async def test_the_reformulated_query_keeps_a_few_covered_key_terms() -> None:
    messages: list[Message] = [
        system(DATA_SCIENCE),
        user("Data Science scholarships deadlines stipends?"),
    ]
    turn = await _turn(messages, model=ExtractiveModel(key_terms=1))
    query = turn.tool_calls[0].parsed_arguments()["query"]
    assert query == "scholarships deadlines stipends close due Data"  # related words of deadline


@pytest.mark.anyio
async def test_it_searches_no_more_than_the_limit_since_the_last_question() -> None:
    question = "Can I bring my dog to the swimming pool?"
    after_one_search: list[Message] = [
        system(DATA_SCIENCE),
        user(question),
        search_call("c1", "dog swimming pool"),
        raw_results("c1", LIBRARY_ROW),
    ]
    assert (await _turn(after_one_search)).finish_reason == "stop"
    twice = await _turn(after_one_search, model=ExtractiveModel(max_searches=2))
    assert twice.finish_reason == "tool_calls"
    assert twice.tool_calls[0].id == "call_2"
    # A new question starts a new count.
    new_question: list[Message] = [
        *after_one_search,
        {"role": "assistant", "content": "No idea."},
        user(question),
    ]
    assert (await _turn(new_question)).finish_reason == "tool_calls"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tools", "tool_choice"),
    [(None, None), ((RAG_SEARCH,), "none")],
    ids=["tool-not-offered", "tool-choice-none"],
)
async def test_it_answers_instead_of_searching_when_it_may_not_search(
    tools: Sequence[ToolSpec] | None, tool_choice: ToolChoice | None
) -> None:
    messages: list[Message] = [
        system(DATA_SCIENCE),
        user("Can I bring my dog to the swimming pool?"),
    ]
    turn = await _turn(messages, tools=tools, tool_choice=tool_choice)
    assert turn.finish_reason == "stop"
    assert turn.tool_calls == []


@pytest.mark.anyio
async def test_required_tool_choice_forces_a_search_even_when_covered() -> None:
    messages: list[Message] = [system(FEES), user("tuition fees")]
    turn = await _turn(messages, tool_choice="required")
    assert turn.tool_calls[0].parsed_arguments() == {"query": "tuition fees"}
    named: ToolChoice = {"type": "function", "function": {"name": "rag_search"}}
    assert (await _turn(messages, tool_choice=named)).finish_reason == "tool_calls"


@pytest.mark.anyio
async def test_nothing_relevant_gives_the_no_answer_sentence_without_markers() -> None:
    model = ExtractiveModel()
    messages: list[Message] = [
        system(DATA_SCIENCE, HISTORY),
        user("Is the swimming pool open for dogs?"),
        search_call("c1", "swimming pool dogs"),
        raw_results("c1", LIBRARY_ROW),
    ]
    turn = await _turn(messages, model=model)
    assert turn.text == model.no_answer_text
    assert not _MARKER.search(turn.text)
    assert turn.finish_reason == "stop"
    assert 2 <= len(turn.suggested_replies) <= 3


@pytest.mark.anyio
async def test_it_streams_word_pieces_then_replies_then_the_finish() -> None:
    messages: list[Message] = [
        system(DATA_SCIENCE, HISTORY, FEES),
        user("How much are tuition fees?"),
    ]
    deltas = await _deltas(ExtractiveModel(), messages)
    texts = [d for d in deltas if isinstance(d, TextDelta)]
    assert len(texts) > 5
    assert all(len(d.text.split()) == 1 for d in texts)
    assert isinstance(deltas[-2], SuggestedRepliesDelta)
    assert isinstance(deltas[-1], FinishDelta)
    labels = [r.label for r in deltas[-2].replies]
    assert 1 <= len(labels) <= 3  # only follow-ups a source in view answers
    assert labels[0] == "Tell me more about Tuition fees"


@pytest.mark.anyio
async def test_a_sentence_found_in_two_sources_cites_both() -> None:
    shared = "Fees are due before enrolment."
    other = BlockSource(4, "entity:page/enrolment", "Enrolment", f"{shared} Bring your passport.")
    turn = await _turn([system(FEES, other), user("When are fees due?")])
    assert turn.text.startswith("Fees are due before enrolment [3][4].")


@pytest.mark.anyio
async def test_markers_already_in_source_text_are_not_copied() -> None:
    noisy = BlockSource(
        1, "entity:page/gym", "Gym", "The gym opens at six [12]. Towels cost extra."
    )
    turn = await _turn([system(noisy), user("When does the gym open?")])
    assert turn.text.startswith("The gym opens at six [1].")


@pytest.mark.anyio
async def test_accents_and_case_do_not_hide_a_match() -> None:
    page = BlockSource(
        1, "entity:faq/fr-1", "Université", "La carte étudiante coûte dix euros au guichet."
    )
    turn = await _turn([system(page), user("Combien coute la CARTE etudiante ?")])
    assert turn.text == "La carte étudiante coûte dix euros au guichet [1]."


@pytest.mark.anyio
async def test_without_a_user_message_the_input_is_invalid() -> None:
    with pytest.raises(InvalidInput, match="no user message"):
        await _turn([system(FEES)])


@pytest.mark.parametrize(
    "options",
    [{"max_searches": -1}, {"max_sentences": 0}, {"min_coverage": 1.5}, {"min_relevance": -0.1}],
)
def test_bad_settings_are_rejected(options: dict[str, float]) -> None:
    with pytest.raises(InvalidInput, match="ExtractiveModel"):
        ExtractiveModel(**options)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_rewritten_multi_round_turn_cites_both_rounds() -> None:
    messages: list[Message] = [
        system(DATA_SCIENCE, prompt="Catalogue assistant."),
        user("How long is the Data Science master, and can dogs enter the swimming pool?"),
        search_call("c1", "dogs swimming pool"),
        numbered_results(
            "c1", BlockSource(2, "entity:page/pool", "Sports centre", str(POOL_ROW["content"]))
        ),
    ]
    turn = await _turn(messages)
    numbers = {n for _, ns in _cited_sentences(turn.text) for n in ns}
    assert numbers == {1, 2}
    assert json.loads(json.dumps(turn.model_dump()))["finish_reason"] == "stop"
    assert source(2, HISTORY).number == 2
