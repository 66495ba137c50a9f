"""The scripted model: replays rounds, records what it saw, fails on cue."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from citelab import InvalidInput, ModelError
from citelab.contract._payloads import SuggestedReply
from citelab.models import (
    Message,
    ModelDelta,
    ScriptedModel,
    ScriptedRound,
    ScriptedToolCall,
    TextDelta,
    collect,
)

from .._builders import FEES, RAG_SEARCH, system, user


@pytest.mark.anyio
async def test_it_replays_rounds_in_order() -> None:
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "rag_search", "arguments": {"query": "tuition fees"}}]},
            ScriptedRound(
                text=["Fees are ", "2,400 euros [1]."],
                suggested_replies=[SuggestedReply(label="When are they due?")],
            ),
            {"text": "Cut short.", "finish_reason": "length"},
        ]
    )
    messages: list[Message] = [system(FEES), user("fees?")]
    first = await collect(model.stream(messages, [RAG_SEARCH]))
    assert first.finish_reason == "tool_calls"
    assert first.tool_calls[0].id == "call_1_0"
    assert first.tool_calls[0].parsed_arguments() == {"query": "tuition fees"}
    second = await collect(model.stream(messages))
    assert (second.text, second.finish_reason) == ("Fees are 2,400 euros [1].", "stop")
    assert [r.label for r in second.suggested_replies] == ["When are they due?"]
    third = await collect(model.stream(messages))
    assert (third.text, third.finish_reason) == ("Cut short.", "length")
    assert model.calls == 3


@pytest.mark.anyio
async def test_it_streams_each_chunk_and_tool_arguments_in_pieces() -> None:
    arguments = '{"query": "a long query about tuition fees and deadlines"}'
    model = ScriptedModel(
        [
            {
                "text": ["One ", "two."],
                "tool_calls": [
                    ScriptedToolCall(name="rag_search", arguments=arguments, id="mine"),
                    ScriptedToolCall(name="list_programs"),
                ],
            }
        ]
    )
    deltas = [d async for d in model.stream([user("q")])]
    assert [d.text for d in deltas if isinstance(d, TextDelta)] == ["One ", "two."]
    turn = await collect(_replay(deltas))
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("mine", "rag_search", arguments),
        ("call_1_1", "list_programs", "{}"),
    ]
    assert sum(1 for d in deltas if d.type == "tool_call") > 3


async def _replay(deltas: list[ModelDelta]) -> AsyncIterator[ModelDelta]:
    for delta in deltas:
        yield delta


async def _drain(stream: AsyncIterator[ModelDelta], into: list[ModelDelta]) -> None:
    async for delta in stream:
        into.append(delta)


@pytest.mark.anyio
async def test_it_records_what_each_round_was_shown() -> None:
    model = ScriptedModel([{"text": "a"}, {"text": "b"}])
    messages: list[Message] = [system(FEES), user("first")]
    await collect(model.stream(messages, [RAG_SEARCH]))
    messages.append({"role": "assistant", "content": "a"})
    messages.append(user("second"))
    await collect(model.stream(messages))
    messages.clear()  # the record is a copy, not a view of the caller's list
    assert [[m["role"] for m in seen] for seen in model.seen] == [
        ["system", "user"],
        ["system", "user", "assistant", "user"],
    ]
    assert model.seen[1][-1] == {"role": "user", "content": "second"}
    assert model.seen_tools == [[RAG_SEARCH], []]


@pytest.mark.anyio
async def test_it_raises_mid_stream_after_the_given_number_of_chunks() -> None:
    model = ScriptedModel([{"text": ["one ", "two ", "three"], "error_after": 2, "error": "boom"}])
    received: list[ModelDelta] = []
    with pytest.raises(ModelError, match="boom"):
        await _drain(model.stream([user("q")]), received)
    assert [d.text for d in received if isinstance(d, TextDelta)] == ["one ", "two "]


@pytest.mark.anyio
async def test_an_error_after_every_chunk_never_finishes() -> None:
    model = ScriptedModel([{"text": ["all of it"], "error_after": 5}])
    with pytest.raises(ModelError, match="scripted model error"):
        await collect(model.stream([user("q")]))


@pytest.mark.anyio
async def test_a_call_past_the_last_round_is_an_error() -> None:
    model = ScriptedModel([{"text": "only"}])
    await collect(model.stream([user("q")]))
    with pytest.raises(ModelError, match="no round 2 \\(it was given 1\\)"):
        await collect(model.stream([user("q")]))


def test_an_invalid_round_is_named() -> None:
    with pytest.raises(InvalidInput, match="scripted round 2 is not valid") as caught:
        ScriptedModel([{"text": "fine"}, {"txt": "typo"}])
    assert "txt" in str(caught.value)
