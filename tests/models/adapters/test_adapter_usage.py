"""The adapters read the tokens a call used from the API's ``usage`` (OpenAI's chat
completions, streamed with ``include_usage`` or whole; Anthropic's Messages), against the real
serve-model app over real HTTP with the vendors' SDKs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from citelab.models import (
    AnthropicModel,
    ExtractiveModel,
    Message,
    OpenAIModel,
    RunningServer,
    TokenUsage,
    collect,
    estimate_usage,
    serve_in_thread,
)

from .._builders import DATA_SCIENCE, FEES, RAG_SEARCH, system, user

ANSWERABLE: list[Message] = [
    system(DATA_SCIENCE, FEES),
    user("How long does the Data Science master take?"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel()) as running:
        yield running


async def _served_usage() -> TokenUsage:
    """What serve-model counts for the call (its ``usage`` is this estimate)."""
    direct = await collect(ExtractiveModel().stream(ANSWERABLE, [RAG_SEARCH]))
    return estimate_usage(ANSWERABLE, [RAG_SEARCH], direct)


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
async def test_openai_reports_the_usage_the_endpoint_sent(
    server: RunningServer, streaming: bool
) -> None:
    model = OpenAIModel("extractive", base_url=server.base_url, max_retries=0, stream=streaming)
    async with model:
        turn = await collect(model.stream(ANSWERABLE, [RAG_SEARCH]))
    expected = await _served_usage()
    assert turn.usage == TokenUsage(
        input_tokens=expected.input_tokens, output_tokens=expected.output_tokens
    )
    assert turn.usage is not None
    assert turn.usage.input_tokens > 50
    assert turn.usage.estimated is False  # the API said so; citelab counted nothing


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
async def test_anthropic_reports_the_usage_the_endpoint_sent(
    server: RunningServer, streaming: bool
) -> None:
    root = server.base_url.removesuffix("/v1")
    model = AnthropicModel("extractive", base_url=root, max_retries=0, stream=streaming)
    async with model:
        turn = await collect(model.stream(ANSWERABLE, [RAG_SEARCH]))
    assert turn.usage is not None
    assert turn.usage.output_tokens == (await _served_usage()).output_tokens
    assert turn.usage.input_tokens > 50
    assert turn.usage.estimated is False


@pytest.mark.anyio
async def test_an_offline_model_reports_none() -> None:
    turn = await collect(ExtractiveModel().stream(ANSWERABLE, [RAG_SEARCH]))
    assert turn.usage is None  # the agent loop estimates it, and says so
