"""OpenAIModel against the real serve-model app, over real HTTP on loopback, with the SDK."""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from citelab import ConfigError, ModelError
from citelab.models import (
    ExtractiveModel,
    Message,
    ModelDelta,
    ModelTurn,
    OpenAIModel,
    RunningServer,
    ScriptedModel,
    TextDelta,
    collect,
    serve_in_thread,
)

from .._builders import DATA_SCIENCE, FEES, HISTORY, RAG_SEARCH, system, user

ANSWERABLE: list[Message] = [
    system(DATA_SCIENCE, HISTORY, FEES),
    user("How long does the Data Science master take, and what are the tuition fees?"),
]
NEEDS_SEARCH: list[Message] = [system(DATA_SCIENCE), user("Can dogs enter the swimming pool?")]


@pytest.fixture(scope="module")
def extractive_server() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel()) as server:
        yield server


@pytest.fixture(scope="module")
def slow_server() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel(), latency_ms=1000) as server:
        yield server


def _client(server: RunningServer, **options: object) -> OpenAIModel:
    return OpenAIModel("extractive", base_url=server.base_url, max_retries=0, **options)  # type: ignore[arg-type]


async def _direct(messages: list[Message]) -> ModelTurn:
    return await collect(ExtractiveModel().stream(messages, [RAG_SEARCH]))


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "non-stream"])
async def test_text_arrives_as_the_model_wrote_it(
    extractive_server: RunningServer, streaming: bool
) -> None:
    async with _client(extractive_server, stream=streaming) as model:
        turn = await collect(model.stream(ANSWERABLE, [RAG_SEARCH]))
    expected = await _direct(ANSWERABLE)
    assert turn.text == expected.text
    assert "[1]" in turn.text
    assert "[3]" in turn.text
    assert turn.finish_reason == "stop"
    assert turn.suggested_replies == []  # not part of the OpenAI API


@pytest.mark.anyio
async def test_a_streamed_answer_comes_in_many_pieces(extractive_server: RunningServer) -> None:
    async with _client(extractive_server) as model:
        pieces = [d async for d in model.stream(ANSWERABLE, [RAG_SEARCH]) if d.type == "text"]
    assert len(pieces) > 10


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "non-stream"])
async def test_tool_calls_are_assembled(extractive_server: RunningServer, streaming: bool) -> None:
    async with _client(extractive_server, stream=streaming) as model:
        turn = await collect(model.stream(NEEDS_SEARCH, [RAG_SEARCH]))
    expected = await _direct(NEEDS_SEARCH)
    assert turn.finish_reason == "tool_calls"
    assert turn.tool_calls == expected.tool_calls
    assert turn.tool_calls[0].parsed_arguments()["query"].startswith("dogs enter swimming pool")


@pytest.mark.anyio
async def test_several_tool_calls_in_one_turn_are_assembled() -> None:
    long_arguments = {"query": "admission requirements and deadlines for every master programme"}
    scripted = ScriptedModel(
        [
            {
                "text": "Looking.",
                "tool_calls": [
                    {"name": "rag_search", "arguments": long_arguments},
                    {"name": "list_programs", "arguments": {"faculty": "Science"}},
                ],
            }
        ]
    )
    with serve_in_thread(scripted) as server:
        async with OpenAIModel("scripted", base_url=server.base_url, max_retries=0) as model:
            turn = await collect(model.stream([user("q")], [RAG_SEARCH]))
    assert turn.text == "Looking."
    assert [(c.id, c.name, c.parsed_arguments()) for c in turn.tool_calls] == [
        ("call_1_0", "rag_search", long_arguments),
        ("call_1_1", "list_programs", {"faculty": "Science"}),
    ]


@pytest.mark.anyio
async def test_the_seed_and_tool_choice_reach_the_model() -> None:
    scripted = ScriptedModel([{"text": "ok"}])
    with serve_in_thread(scripted) as server:
        async with OpenAIModel("scripted", base_url=server.base_url, max_retries=0) as model:
            await collect(model.stream(ANSWERABLE, [RAG_SEARCH], tool_choice="none", seed=4))
    assert scripted.seen == [ANSWERABLE]
    assert scripted.seen_tools == [[RAG_SEARCH]]


@pytest.mark.anyio
async def test_an_http_error_becomes_a_model_error(extractive_server: RunningServer) -> None:
    async with OpenAIModel("no-such-model", base_url=extractive_server.base_url) as model:
        with pytest.raises(ModelError, match=r"HTTP 404: The model 'no-such-model' does not exist"):
            await collect(model.stream(ANSWERABLE))
    async with _client(extractive_server) as model:
        with pytest.raises(ModelError, match=r"HTTP 400: .*no user message"):
            await collect(model.stream([system(FEES)]))


@pytest.mark.anyio
async def test_an_error_in_the_middle_of_a_stream_becomes_a_model_error() -> None:
    scripted = ScriptedModel(
        [{"text": ["one ", "two ", "three"], "error_after": 2, "error": "GPU fell over"}]
    )
    with serve_in_thread(scripted) as server:
        async with OpenAIModel("scripted", base_url=server.base_url, max_retries=0) as model:
            received: list[ModelDelta] = []
            with pytest.raises(ModelError, match="GPU fell over"):
                await _drain(model.stream([user("q")]), received)
    assert [d.text for d in received if isinstance(d, TextDelta)] == ["one ", "two "]


async def _drain(stream: AsyncIterator[ModelDelta], into: list[ModelDelta]) -> None:
    async for delta in stream:
        into.append(delta)


@pytest.mark.anyio
async def test_a_refused_connection_becomes_a_model_error() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and is closed now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with OpenAIModel(
        "extractive", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0
    ) as model:
        with pytest.raises(ModelError, match=f"cannot reach http://127.0.0.1:{port}/v1"):
            await collect(model.stream(ANSWERABLE))


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "non-stream"])
async def test_the_timeout_is_honoured(slow_server: RunningServer, streaming: bool) -> None:
    async with _client(slow_server, timeout=0.3, stream=streaming) as model:
        started = time.monotonic()
        with pytest.raises(ModelError, match=r"no answer from .* within 0\.3 s"):
            await collect(model.stream(ANSWERABLE))
        assert time.monotonic() - started < 0.9


@pytest.mark.anyio
async def test_a_slow_server_within_the_timeout_still_answers(slow_server: RunningServer) -> None:
    async with _client(slow_server, timeout=10) as model:
        started = time.monotonic()
        turn = await collect(model.stream(ANSWERABLE))
    assert time.monotonic() - started >= 1.0
    assert turn.finish_reason == "stop"


@pytest.mark.anyio
async def test_the_environment_configures_the_endpoint(
    extractive_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", extractive_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    async with OpenAIModel("extractive", max_retries=0) as model:
        assert model.endpoint == extractive_server.base_url
        assert model.name == "openai:extractive"
        turn = await collect(model.stream(ANSWERABLE))
    assert turn.finish_reason == "stop"


def test_without_a_key_or_a_base_url_the_configuration_is_wrong(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="no API key"):
        OpenAIModel("gpt-4o-mini")
    with pytest.raises(ConfigError, match="model name is empty"):
        OpenAIModel("", api_key="k")
