"""The stream protocol: deltas, assembling a turn, and how offline models cut pieces."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from citelab import ModelError
from citelab.contract._payloads import SuggestedReply
from citelab.models import (
    FinishDelta,
    ModelDelta,
    ModelTurn,
    SuggestedRepliesDelta,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    collect,
)
from citelab.models.offline._pieces import tool_call_deltas, word_pieces


async def _stream(*deltas: ModelDelta) -> AsyncIterator[ModelDelta]:
    for delta in deltas:
        yield delta


@pytest.mark.anyio
async def test_collect_assembles_text_interleaved_tool_calls_and_replies() -> None:
    replies = [SuggestedReply(label="More?")]
    turn = await collect(
        _stream(
            TextDelta(text="Let me "),
            ToolCallDelta(index=1, id="b", name="rag_search", arguments='{"query": '),
            ToolCallDelta(index=0, id="a", name="list_programs", arguments="{}"),
            TextDelta(text="look."),
            ToolCallDelta(index=1, arguments='"fees"}'),
            SuggestedRepliesDelta(replies=replies),
            FinishDelta(reason="tool_calls"),
        )
    )
    assert turn.text == "Let me look."
    assert turn.tool_calls == [
        ToolCall(id="a", name="list_programs", arguments="{}"),
        ToolCall(id="b", name="rag_search", arguments='{"query": "fees"}'),
    ]
    assert turn.tool_calls[1].parsed_arguments() == {"query": "fees"}
    assert turn.finish_reason == "tool_calls"
    assert turn.suggested_replies == replies


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("deltas", "problem"),
    [
        ([TextDelta(text="cut off")], "without a finish"),
        ([FinishDelta(reason="stop"), TextDelta(text="late")], "text delta after the finish"),
        (
            [ToolCallDelta(index=0, id="x", arguments="{}"), FinishDelta(reason="tool_calls")],
            "tool call 0 has no function name",
        ),
    ],
)
async def test_collect_rejects_a_malformed_stream(deltas: list[ModelDelta], problem: str) -> None:
    with pytest.raises(ModelError, match=problem):
        await collect(_stream(*deltas))


@pytest.mark.anyio
async def test_a_call_without_id_is_named_by_its_index() -> None:
    turn = await collect(
        _stream(ToolCallDelta(index=2, name="rag_search"), FinishDelta(reason="tool_calls"))
    )
    assert turn.tool_calls[0].id == "call_2"
    assert turn.tool_calls[0].parsed_arguments() == {}


@pytest.mark.parametrize(
    ("arguments", "problem"), [("{not json", "not JSON"), ("[1, 2]", "must be a JSON object")]
)
def test_parsed_arguments_says_what_is_wrong(arguments: str, problem: str) -> None:
    call = ToolCall(id="c1", name="rag_search", arguments=arguments)
    with pytest.raises(ModelError, match=f"'rag_search' \\(c1\\).*{problem}"):
        call.parsed_arguments()


def test_turn_to_message_for_an_answer_and_for_tool_calls() -> None:
    answer = ModelTurn(text="Fees are due [1].", finish_reason="stop")
    assert answer.to_message() == {"role": "assistant", "content": "Fees are due [1]."}
    calling = ModelTurn(
        tool_calls=[ToolCall(id="c1", name="rag_search", arguments='{"query": "fees"}')],
        finish_reason="tool_calls",
    )
    assert calling.to_message() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "rag_search", "arguments": '{"query": "fees"}'},
            }
        ],
    }


def test_deltas_round_trip_through_json_for_caching() -> None:
    adapter = TypeAdapter(list[ModelDelta])
    deltas: list[ModelDelta] = [
        TextDelta(text="Hi "),
        ToolCallDelta(index=0, id="c", name="rag_search", arguments="{}"),
        SuggestedRepliesDelta(replies=[SuggestedReply(label="More", message="Tell me more")]),
        FinishDelta(reason="length"),
    ]
    assert adapter.validate_json(adapter.dump_json(deltas)) == deltas


@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from("ab [1].\n\t é"), max_size=60))
def test_word_pieces_join_back_and_hold_one_word_each(text: str) -> None:
    pieces = word_pieces(text)
    assert "".join(pieces) == text
    assert all(len(re.findall(r"\S+", piece)) <= 1 for piece in pieces)
    assert all(piece for piece in pieces)


def test_tool_call_deltas_cut_arguments_into_small_pieces() -> None:
    arguments = '{"query": "admission requirements for the data science programme"}'
    deltas = list(tool_call_deltas(0, "c9", "rag_search", arguments))
    assert len(deltas) > 2
    assert (deltas[0].id, deltas[0].name) == ("c9", "rag_search")
    assert all(d.id is None and d.name is None for d in deltas[1:])
    assert "".join(d.arguments for d in deltas) == arguments
