"""The MCP server's tools through the SDK's own client, in process."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from mcp_types import CallToolResult, ResourceLink, TextContent

from citelab import ConfigError
from citelab.agent import AgentConfig, default_agents
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.contract import CITATIONS_KEY, validate_message
from citelab.corpus import Reader
from citelab.events import DoneEvent
from citelab.mcp_server import SearchResults, create_server
from citelab.mcp_server._server import AgentList
from citelab.models import Message, ModelDelta, ToolChoice, ToolSpec
from mcp import Client

pytestmark = pytest.mark.anyio

SECRET = "api-key=sk-do-not-show"


class BrokenModel:
    """A model whose backend is down."""

    name = "broken"

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        raise RuntimeError(f"backend down ({SECRET})")
        yield  # pragma: no cover - makes this an async generator


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-indexes")


def service(index_dir: Path) -> AnswerService:
    agents = {
        **default_agents(),
        "broken": AgentConfig(name="broken", model="broken", corpus="university"),
    }
    return AnswerService(
        agents,
        store=MemoryConversationStore(),
        logs=MemoryLogStore(),
        models={"broken": BrokenModel()},
        index_dir=index_dir,
    )


def wire(result: CallToolResult) -> dict[str, Any]:
    """The tool result as an answer message on the wire (the content blocks, role assistant),
    without the last block, the note naming the conversation."""
    blocks = [
        block.model_dump(mode="json", by_alias=True, exclude_none=True)
        for block in result.content[:-1]
    ]
    return {"role": "assistant", "content": blocks}


async def test_tools_are_listed_with_their_schemas(index_dir: Path) -> None:
    async with Client(create_server(service(index_dir))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"agents", "ask", "search"}
    ask = tools["ask"]
    assert ask.input_schema["required"] == ["question"]
    assert set(ask.input_schema["properties"]) == {"question", "conversation_id", "agent"}
    assert ask.output_schema is not None
    assert "conversation_id" in ask.output_schema["properties"]
    assert tools["search"].annotations is not None
    assert tools["search"].annotations.read_only_hint is True


async def test_ask_returns_the_contract_blocks_and_the_done_payload(index_dir: Path) -> None:
    async with Client(create_server(service(index_dir))) as client:
        result = await client.call_tool("ask", {"question": "How much is the semester fee?"})
    assert result.is_error is False
    text, *sources, note = result.content
    assert isinstance(text, TextContent)
    assert isinstance(note, TextContent)
    assert "312 euros [1]" in text.text
    assert text.meta is not None
    anchors = text.meta[CITATIONS_KEY]
    assert anchors[0]["sourceUri"] == "entity:page/semester-fee"
    assert all(isinstance(source, ResourceLink) for source in sources)
    assert [s.uri for s in sources if isinstance(s, ResourceLink)] == ["entity:page/semester-fee"]
    assert validate_message(wire(result)) == []
    done = DoneEvent.model_validate(result.structured_content)
    assert done.text == text.text
    # The contract's blocks, but each link titled with its [n] for clients that skip _meta.
    titled = [
        {**block, "title": f"[1] {block['name']}"} if block["type"] == "resource_link" else block
        for block in done.message["content"]
    ]
    assert titled == wire(result)["content"]
    assert note.text.startswith(f"conversation_id: {done.conversation_id} ")
    assert result.meta is not None
    assert "drupal.org/ai.suggested_replies" in result.meta


async def test_a_follow_up_keeps_the_conversation(index_dir: Path) -> None:
    async with Client(create_server(service(index_dir))) as client:
        first = await client.call_tool("ask", {"question": "How much is the semester fee?"})
        conversation = DoneEvent.model_validate(first.structured_content).conversation_id
        follow = {"question": "What does the fee include?", "conversation_id": conversation}
        second = await client.call_tool("ask", follow)
    done = DoneEvent.model_validate(second.structured_content)
    assert (done.conversation_id, done.turn) == (conversation, 2)


def error_text(result: CallToolResult) -> str:
    assert result.is_error is True
    assert result.structured_content is None
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"question": "   "}, "invalid_input: question: must not be empty"),
        ({"question": "Hi", "agent": "nobody"}, "not_found: agent 'nobody' not found"),
        ({"question": "Hi", "conversation_id": "gone"}, "not_found: conversation 'gone' not found"),
        ({"question": 5}, "Input should be a valid string"),
        ({}, "question"),
    ],
)
async def test_ask_errors_are_tool_errors(
    index_dir: Path, arguments: dict[str, Any], says: str
) -> None:
    async with Client(create_server(service(index_dir))) as client:
        result = await client.call_tool("ask", arguments)
    assert says in error_text(result)


async def test_a_crash_is_a_generic_tool_error_and_is_logged(
    index_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="citelab.server"):
        async with Client(create_server(service(index_dir))) as client:
            result = await client.call_tool("ask", {"question": "Hi?", "agent": "broken"})
    text = error_text(result)
    assert text.startswith("model_error: The model failed to answer (error id ")  # as HTTP's 502
    assert SECRET not in text
    found = re.search(r"error id (\w+)", text)
    assert found is not None
    logged = [r for r in caplog.records if found.group(1) in r.message]
    assert len(logged) == 1
    assert logged[0].exc_info is not None


async def test_search_is_filtered_for_the_servers_reader(index_dir: Path) -> None:
    arguments = {"query": "salary band senior engineers", "agent": "intranet"}
    hr = Reader(user_id="alice", roles=frozenset({"staff", "hr"}))
    async with Client(create_server(service(index_dir), reader=hr)) as client:
        allowed = await client.call_tool("search", arguments)
    async with Client(create_server(service(index_dir))) as client:
        anonymous = await client.call_tool("search", arguments)
    found = SearchResults.model_validate(allowed.structured_content).results
    assert "31" in [row.entity_id for row in found]
    hidden = SearchResults.model_validate(anonymous.structured_content).results
    assert "31" not in [row.entity_id for row in hidden]
    assert "Salary bands" not in str(anonymous.model_dump())


async def test_search_returns_at_most_max_results(index_dir: Path) -> None:
    async with Client(create_server(service(index_dir))) as client:
        result = await client.call_tool("search", {"query": "semester fee", "max_results": 2})
    rows = SearchResults.model_validate(result.structured_content).results
    assert 1 <= len(rows) <= 2
    assert rows[0].entity_id == "semester-fee"
    block = result.content[0]
    assert isinstance(block, TextContent)
    assert "semester-fee" in block.text


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"query": "   "}, "invalid_input"),
        ({"query": "fee", "max_results": 0}, "max_results"),
        ({"query": "fee", "agent": "nobody"}, "not_found: agent 'nobody' not found"),
    ],
)
async def test_search_errors_are_tool_errors(
    index_dir: Path, arguments: dict[str, Any], says: str
) -> None:
    async with Client(create_server(service(index_dir))) as client:
        result = await client.call_tool("search", arguments)
    assert says in error_text(result)


def test_an_unknown_default_agent_is_a_configuration_error(index_dir: Path) -> None:
    with pytest.raises(ConfigError, match="default agent 'nobody' is not configured"):
        create_server(service(index_dir), default_agent="nobody")


async def test_a_follow_up_keeps_its_sources_numbers(index_dir: Path) -> None:
    async with Client(create_server(service(index_dir))) as client:
        first = await client.call_tool("ask", {"question": "How much is the semester fee?"})
        conversation = DoneEvent.model_validate(first.structured_content).conversation_id
        follow = {
            "question": "How much is the semester fee again?",
            "conversation_id": conversation,
        }
        second = await client.call_tool("ask", follow)
    before = DoneEvent.model_validate(first.structured_content).references
    after = DoneEvent.model_validate(second.structured_content).references
    numbers = {r.uri: r.number for r in before}
    assert any(r.uri in numbers for r in after)
    for reference in after:
        if reference.uri in numbers:
            assert reference.number == numbers[reference.uri]


async def test_the_agents_are_listed_default_first(index_dir: Path) -> None:
    async with Client(create_server(service(index_dir), default_agent="intranet")) as client:
        result = await client.call_tool("agents", {})
    listing = AgentList.model_validate(result.structured_content)
    assert listing.agents[0].name == "intranet"
    assert listing.agents[0].default
    assert {"default", "intranet", "broken"} <= {a.name for a in listing.agents}
    assert next(a for a in listing.agents if a.name == "broken").corpus == "university"
    block = result.content[0]
    assert isinstance(block, TextContent)
    assert "- intranet (default): corpus intranet" in block.text


async def test_search_links_every_entity_it_found(index_dir: Path) -> None:
    async with Client(create_server(service(index_dir))) as client:
        result = await client.call_tool("search", {"query": "semester fee", "max_results": 5})
    rows = SearchResults.model_validate(result.structured_content).results
    links = [block for block in result.content if isinstance(block, ResourceLink)]
    expected = list(dict.fromkeys(f"entity:{r.entity_type}/{r.entity_id}" for r in rows))
    assert [link.uri for link in links] == expected
    assert links[0].name == rows[0].title


async def test_entity_sources_are_readable_resources(index_dir: Path) -> None:
    async with Client(create_server(service(index_dir))) as client:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["entity:{entity_type}/{entity_id}"]
        answer = await client.call_tool("ask", {"question": "How much is the semester fee?"})
        link = next(b for b in answer.content if isinstance(b, ResourceLink))
        read = await client.read_resource(link.uri)
    [content] = read.contents
    assert content.mime_type == "text/markdown"
    text = getattr(content, "text", "")
    assert text.startswith("# ")
    assert "312" in text


async def test_a_document_the_reader_may_not_read_is_not_found(index_dir: Path) -> None:
    hr = Reader(user_id="alice", roles=frozenset({"staff", "hr"}))
    async with Client(create_server(service(index_dir), reader=hr)) as client:
        allowed = await client.read_resource("entity:node/31")
    assert "Salary" in getattr(allowed.contents[0], "text", "")
    async with Client(create_server(service(index_dir))) as client:
        with pytest.raises(Exception, match="not found") as refused:
            await client.read_resource("entity:node/31")
        with pytest.raises(Exception, match="not found"):
            await client.read_resource("entity:node/no-such-page")
    assert "Salary" not in str(refused.value)


async def test_source_quotes_are_the_sentences_the_claims_rest_on(index_dir: Path) -> None:
    """Not the whole retrieved chunk: each quote is the passage's sentence(s) the anchor's
    claim rests on, at its place in the document, and the done event's cards carry them."""
    answers = service(index_dir)
    async with Client(create_server(answers)) as client:
        result = await client.call_tool("ask", {"question": "How much is the semester fee?"})
    text = result.content[0]
    assert isinstance(text, TextContent)
    assert text.meta is not None
    quotes = text.meta["citelab/source_quotes"]
    assert quotes
    document = await answers.document("default", "page", "semester-fee")
    content = document.translations["en"].content
    done = DoneEvent.model_validate(result.structured_content)
    [card] = done.references
    sentence = "Every student at Hollin University pays a semester fee of 312 euros."
    for quote in quotes:
        assert quote["text"] == sentence
        assert content[quote["startIndex"] : quote["endIndex"]] == quote["text"]
        assert len(quote["text"]) < len(card.passage or "")
    assert [(s.text, s.start, s.end) for s in card.cited_spans] == [
        (q["text"], q["startIndex"], q["endIndex"]) for q in quotes[:1]
    ]
