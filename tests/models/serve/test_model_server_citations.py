"""``serve-model`` as a stand-in for the Anthropic Citations API and for OpenAI's usage.

Over real HTTP with the real ``anthropic`` and ``openai`` SDKs: ``/v1/messages`` reads
``document`` blocks (text and content sources) and answers with text blocks carrying
``citations`` in the SDK's own types; every answer of the three APIs carries ``usage``; and a
saved response is scored by ``citelab score --format anthropic`` (the real command, in a
child process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from anthropic.types import (
    CitationCharLocation,
    CitationContentBlockLocation,
    RawMessageStreamEvent,
)
from anthropic.types import Message as AnthropicMessage
from openai.types.chat import ChatCompletion
from openai.types.responses import Response as OpenAIResponse
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from citelab.models import ExtractiveModel, RunningServer, serve_in_thread

NOTES = Path(__file__).parents[2] / "user_notes"
FERRY = " ".join((NOTES / "ferry.md").read_text(encoding="utf-8").split("\n\n", 1)[1].split())
PARKING_BLOCKS = [
    "Parking at the harbour costs 2 euros per hour.",
    "The car park beside the fish market closes at midnight.",
]
QUESTION = "When does the ferry leave, and how much does parking at the harbour cost?"


def _documents(*, citations: bool = True) -> list[dict[str, Any]]:
    enabled = {"enabled": citations}
    return [
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": FERRY},
            "title": "Island ferry",
            "context": "From the user's notes.",
            "citations": enabled,
        },
        {
            "type": "document",
            "source": {
                "type": "content",
                "content": [{"type": "text", "text": text} for text in PARKING_BLOCKS],
            },
            "title": "Parking at the harbour",
            "citations": enabled,
        },
    ]


def _asked(documents: list[dict[str, Any]], question: str = QUESTION) -> Any:
    return [{"role": "user", "content": [*documents, {"type": "text", "text": question}]}]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel()) as running:
        yield running


@pytest.fixture
def client(server: RunningServer) -> Iterator[anthropic.Anthropic]:
    root = server.base_url.removesuffix("/v1")
    with anthropic.Anthropic(base_url=root, api_key="unused", max_retries=0) as sdk:
        yield sdk


def _raw_messages(server: RunningServer, body: dict[str, Any]) -> httpx.Response:
    root = server.base_url.removesuffix("/v1")
    headers = {"x-api-key": "unused", "anthropic-version": "2023-06-01"}
    return httpx.post(f"{root}/v1/messages", json=body, headers=headers, timeout=30)


def _check_cited(message: AnthropicMessage) -> None:
    """Every citation points at exactly the text it quotes, as the API guarantees."""
    cited = 0
    for block in message.content:
        assert block.type == "text"
        assert block.text.strip(), "the Messages API rejects empty text blocks"
        for citation in block.citations or []:
            cited += 1
            if isinstance(citation, CitationCharLocation):
                assert citation.document_index == 0
                assert FERRY[citation.start_char_index : citation.end_char_index] == (
                    citation.cited_text
                )
            else:
                assert isinstance(citation, CitationContentBlockLocation)
                assert citation.document_index == 1
                blocks = PARKING_BLOCKS[citation.start_block_index : citation.end_block_index]
                assert citation.cited_text == "".join(blocks)
            assert citation.cited_text in block.text  # the offline model quotes
    assert cited == 2


def test_documents_are_answered_with_cited_text_blocks(client: anthropic.Anthropic) -> None:
    message = client.messages.create(
        model="extractive", max_tokens=256, messages=_asked(_documents())
    )
    _check_cited(message)
    text = "".join(block.text for block in message.content if block.type == "text")
    assert "[" not in text  # the markers became citations
    kinds = {c.type for b in message.content if b.type == "text" for c in b.citations or []}
    assert kinds == {"char_location", "content_block_location"}
    assert message.usage.input_tokens > 0
    assert message.usage.output_tokens > 0


def test_the_raw_response_validates_against_the_sdk_types(server: RunningServer) -> None:
    body = {"model": "extractive", "max_tokens": 256, "messages": _asked(_documents())}
    response = _raw_messages(server, body)
    assert response.status_code == 200, response.text
    message = AnthropicMessage.model_validate(response.json(), strict=False)
    _check_cited(message)
    streamed = _raw_messages(server, {**body, "stream": True})
    events = TypeAdapter(RawMessageStreamEvent)
    datas = [line[6:] for line in streamed.text.splitlines() if line.startswith("data: ")]
    kinds = [events.validate_json(data).type for data in datas]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    deltas = [
        json.loads(data)["delta"]["type"] for data in datas if '"content_block_delta"' in data
    ]
    assert deltas.count("citations_delta") == 2


def test_a_stream_accumulates_to_the_same_cited_message(client: anthropic.Anthropic) -> None:
    whole = client.messages.create(
        model="extractive", max_tokens=256, messages=_asked(_documents())
    )
    with client.messages.stream(
        model="extractive",
        max_tokens=256,
        messages=_asked(_documents()),
    ) as stream:
        final = stream.get_final_message()
    _check_cited(final)
    assert [b.model_dump() for b in final.content] == [b.model_dump() for b in whole.content]
    assert final.usage.output_tokens > 0


def test_without_citations_the_answer_is_plain_text(client: anthropic.Anthropic) -> None:
    message = client.messages.create(
        model="extractive",
        max_tokens=256,
        messages=_asked(_documents(citations=False)),
    )
    [block] = message.content
    assert block.type == "text"
    assert block.citations is None
    assert "8:15" in block.text
    assert "[" not in block.text


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        (
            [_documents()[0], _documents(citations=False)[1]],
            "citations must be enabled on all or none of the documents",
        ),
        (
            [
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"},
                }
            ],
            "messages.0.content.0.source.type: 'base64' documents cannot be read by this server",
        ),
    ],
    ids=["mixed-citations", "pdf"],
)
def test_documents_the_server_cannot_honour_are_400(
    server: RunningServer, documents: list[dict[str, Any]], message: str
) -> None:
    body = {"model": "extractive", "max_tokens": 256, "messages": _asked(documents)}
    response = _raw_messages(server, body)
    assert response.status_code == 400
    error = response.json()
    assert error["type"] == "error"
    assert error["error"]["type"] == "invalid_request_error"
    assert message in error["error"]["message"]


def test_a_saved_response_is_scored_by_citelab_score(
    client: anthropic.Anthropic, tmp_path: Path
) -> None:
    documents = _documents()
    message = client.messages.create(model="extractive", max_tokens=256, messages=_asked(documents))
    saved = tmp_path / "answers.json"
    envelope = {
        "id": "ferry",
        "question": QUESTION,
        "response": message.model_dump(mode="json"),
        "documents": documents,
    }
    saved.write_text(json.dumps(envelope), encoding="utf-8")
    env = {**os.environ, "CITELAB_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "citelab", "score", str(saved), "--format", "anthropic"]
    done = subprocess.run(
        [*command, "--json"], check=False, capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    assert metrics["citation_recall_span"]["value"] > 0  # Anthropic's: per cited span
    assert metrics["citation_precision_span"]["value"] > 0


# --- usage in OpenAI's answers ----------------------------------------------------------------

SYSTEM = f"[1] Island ferry\n{FERRY}"


def _openai(server: RunningServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)


def test_chat_completions_carry_usage_whole_and_streamed(server: RunningServer) -> None:
    messages: Any = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Ticket prices?"},
    ]
    with _openai(server) as sdk:
        whole = sdk.chat.completions.create(model="extractive", messages=messages)
        chunks = list(
            sdk.chat.completions.create(
                model="extractive",
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        plain = list(
            sdk.chat.completions.create(model="extractive", messages=messages, stream=True)
        )
    assert whole.usage is not None
    assert whole.usage.prompt_tokens > 0 < whole.usage.completion_tokens
    assert whole.usage.total_tokens == whole.usage.prompt_tokens + whole.usage.completion_tokens
    *_, last = chunks
    assert last.choices == []
    assert last.usage is not None
    assert last.usage.model_dump() == whole.usage.model_dump()
    assert all(chunk.usage is None for chunk in plain)  # as the API: only when asked for


def test_the_raw_chat_completion_validates(server: RunningServer) -> None:
    body = {
        "model": "extractive",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Price?"}],
    }
    response = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=30)
    completion = ChatCompletion.model_validate(response.json())
    assert completion.usage is not None


def test_responses_are_served_with_usage_whole_and_streamed(server: RunningServer) -> None:
    with _openai(server) as sdk:
        whole = sdk.responses.create(
            model="extractive", input="Ticket prices?", instructions=SYSTEM
        )
        with sdk.responses.stream(
            model="extractive", input="Ticket prices?", instructions=SYSTEM
        ) as stream:
            kinds = [event.type for event in stream]
            streamed = stream.get_final_response()
    assert whole.output_text.startswith(
        "Tickets cost 9 euros for adults and 4 euros for children [1]."
    )
    assert streamed.output_text == whole.output_text
    for response in (whole, streamed):
        assert response.status == "completed"
        assert response.usage is not None
        assert response.usage.input_tokens > 0 < response.usage.output_tokens
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds


def test_responses_validate_and_round_trip_a_function_call(server: RunningServer) -> None:
    tool = {
        "type": "function",
        "name": "rag_search",
        "description": "Search the notes.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    }
    body: dict[str, Any] = {
        "model": "extractive",
        "input": "Can I bring my dog to the swimming pool?",
        "tools": [tool],
    }
    raw = httpx.post(f"{server.base_url}/responses", json=body, timeout=30)
    response = OpenAIResponse.model_validate(raw.json())
    [call] = response.output
    assert call.type == "function_call"
    assert json.loads(call.arguments)["query"]
    streamed = httpx.post(f"{server.base_url}/responses", json={**body, "stream": True}, timeout=30)
    events = TypeAdapter(ResponseStreamEvent)
    datas = [line[6:] for line in streamed.text.splitlines() if line.startswith("data: ")]
    parsed = [events.validate_json(data) for data in datas]
    assert [e.sequence_number for e in parsed] == list(range(len(parsed)))
    assert "response.function_call_arguments.done" in [e.type for e in parsed]
    follow_up = {
        **body,
        "input": [
            {"role": "user", "content": body["input"]},
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
            {
                "type": "function_call_output",
                "call_id": call.call_id,
                "output": json.dumps(
                    {
                        "results": [
                            {
                                "title": "Pool",
                                "content": "Dogs are not allowed in the swimming pool.",
                            }
                        ]
                    }
                ),
            },
        ],
    }
    answered = OpenAIResponse.model_validate(
        httpx.post(f"{server.base_url}/responses", json=follow_up, timeout=30).json()
    )
    assert answered.output_text == "Dogs are not allowed in the swimming pool [1]."
    assert answered.usage is not None
