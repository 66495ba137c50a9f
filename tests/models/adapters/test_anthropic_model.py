"""AnthropicModel and serve-model's /v1/messages route, over real HTTP with the anthropic SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anthropic
import pytest

from citelab import ConfigError, ModelError
from citelab.models import (
    AnthropicModel,
    ExtractiveModel,
    Message,
    RunningServer,
    ScriptedModel,
    TextDelta,
    ToolCallDelta,
    collect,
    get_model,
    serve_in_thread,
)

from .._builders import DATA_SCIENCE, FEES, RAG_SEARCH, system, user
from ..test_prompt_sources import DOCUMENTS, PLAIN, QUESTION

ANSWERABLE: list[Message] = [
    system(DATA_SCIENCE, FEES),
    user("How long does the Data Science master take?"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel()) as running:
        yield running


def _root(server: RunningServer) -> str:
    return server.base_url.removesuffix("/v1")


def _model(server: RunningServer, **options: object) -> AnthropicModel:
    return AnthropicModel("extractive", base_url=_root(server), max_retries=0, **options)  # type: ignore[arg-type]


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
async def test_the_adapter_answers_with_the_models_citations(
    server: RunningServer, streaming: bool
) -> None:
    async with _model(server, stream=streaming) as model:
        turn = await collect(model.stream(ANSWERABLE, [RAG_SEARCH]))
    direct = await collect(ExtractiveModel().stream(ANSWERABLE, [RAG_SEARCH]))
    assert turn.text == direct.text
    assert "[1]" in turn.text
    assert turn.finish_reason == "stop"


@pytest.mark.anyio
async def test_streamed_text_comes_in_several_pieces(server: RunningServer) -> None:
    async with _model(server) as model:
        pieces = [d async for d in model.stream(ANSWERABLE) if isinstance(d, TextDelta)]
    assert len(pieces) > 3


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
async def test_tool_calls_and_results_round_trip(server: RunningServer, streaming: bool) -> None:
    messages: list[Message] = [system(), user("Can dogs enter the swimming pool?")]
    async with _model(server, stream=streaming) as model:
        turn = await collect(model.stream(messages, [RAG_SEARCH], tool_choice="required"))
        assert turn.finish_reason == "tool_calls"
        [call] = turn.tool_calls
        assert call.name == "rag_search"
        assert "pool" in call.parsed_arguments()["query"]
        result = json.dumps(
            {"results": [{"title": "Sports centre", "content": "Dogs may not enter the pool."}]}
        )
        follow = [
            *messages,
            turn.to_message(),
            {"role": "tool", "tool_call_id": call.id, "content": result},
        ]
        answer = await collect(model.stream(follow, [RAG_SEARCH]))
    assert "Dogs may not enter the pool [1]." in answer.text


@pytest.mark.anyio
async def test_named_tool_choice_and_none_are_honoured(server: RunningServer) -> None:
    named = {"type": "function", "function": {"name": "rag_search"}}
    async with _model(server) as model:
        forced = await collect(model.stream(ANSWERABLE, [RAG_SEARCH], tool_choice=named))  # type: ignore[arg-type]
        refused = await collect(
            model.stream([system(), user("pool dogs?")], [RAG_SEARCH], tool_choice="none")
        )
    assert [call.name for call in forced.tool_calls] == ["rag_search"]
    assert not refused.tool_calls


def test_the_raw_sdk_reads_document_index_sources(server: RunningServer) -> None:
    with anthropic.Anthropic(base_url=_root(server), api_key="unused", max_retries=0) as client:
        message = client.messages.create(
            model="extractive",
            max_tokens=256,
            system=DOCUMENTS,
            messages=[{"role": "user", "content": QUESTION}],
        )
    assert message.stop_reason == "end_turn"
    text = "".join(block.text for block in message.content if block.type == "text")
    assert "406 metres below the surface [2]." in text


def test_the_raw_sdk_streams_plain_prompt_sources(server: RunningServer) -> None:
    prompt = f"{PLAIN}\n\nQuestion: {QUESTION}"
    with (
        anthropic.Anthropic(base_url=_root(server), api_key="unused", max_retries=0) as client,
        client.messages.stream(
            model="extractive", max_tokens=256, messages=[{"role": "user", "content": prompt}]
        ) as stream,
    ):
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert "406 metres below the surface [2]." in text
    assert final.stop_reason == "end_turn"


@pytest.mark.anyio
async def test_an_unknown_model_is_a_model_error_naming_the_served_one(
    server: RunningServer,
) -> None:
    model = AnthropicModel("claude-x", base_url=_root(server), max_retries=0)
    async with model:
        with pytest.raises(ModelError, match=r"HTTP 404.*'extractive'"):
            await collect(model.stream(ANSWERABLE))


def test_a_bad_request_gets_anthropics_error_shape(server: RunningServer) -> None:
    with (
        anthropic.Anthropic(base_url=_root(server), api_key="unused", max_retries=0) as client,
        pytest.raises(anthropic.BadRequestError, match="messages"),
    ):
        client.messages.create(model="extractive", max_tokens=10, messages=[])


@pytest.mark.anyio
async def test_a_model_failing_mid_stream_is_a_model_error() -> None:
    class Failing(ScriptedModel):
        async def stream(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def,override]
            yield TextDelta(text="Half an answer")
            raise ModelError("the scripted model broke")

    with serve_in_thread(Failing([{"text": "x"}], name="failing")) as failing:
        async with AnthropicModel("failing", base_url=_root(failing), max_retries=0) as model:
            with pytest.raises(ModelError, match="broke"):
                await collect(model.stream(ANSWERABLE))


@pytest.mark.anyio
async def test_an_unreachable_endpoint_names_it() -> None:
    model = AnthropicModel("x", base_url="http://127.0.0.1:9", max_retries=0, timeout=5)
    async with model:
        with pytest.raises(ModelError, match=r"cannot reach http://127\.0\.0\.1:9"):
            await collect(model.stream(ANSWERABLE))


def test_the_registry_builds_it_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    model = get_model("anthropic:claude-test", base_url="http://127.0.0.1:1")
    assert isinstance(model, AnthropicModel)
    assert model.name == "anthropic:claude-test"
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        get_model("anthropic:claude-test")


def test_tool_call_deltas_are_indexed_from_zero() -> None:
    from citelab.models.adapters._anthropic_wire import EventReader

    reader = EventReader()
    events = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
    ]
    deltas = [d for event in events for d in reader.read(event)]
    assert deltas == [
        TextDelta(text="Hi"),
        ToolCallDelta(index=0, id="t1", name="f"),
        ToolCallDelta(index=0, arguments="{}"),
    ]
    assert reader.finish == "tool_calls"


@pytest.mark.anyio
async def test_check_available_names_a_missing_model_and_a_dead_endpoint(
    server: RunningServer,
) -> None:
    await _model(server).check_available()
    with pytest.raises(ModelError, match=r"model 'claude-x' does not exist at .*'extractive'"):
        await AnthropicModel("claude-x", base_url=_root(server)).check_available()
    with pytest.raises(ModelError, match="cannot reach"):
        await AnthropicModel("x", base_url="http://127.0.0.1:9").check_available()
