"""What an MCP client sees without citelab's ``_meta``: the entities it may read, listed in
pages, and a follow-up's sources numbered as its text numbers them. Over stdio with the SDK's
client (``citelab mcp`` as a child process), and in process for small pages."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from mcp_types import CallToolResult, Resource, ResourceLink, TextContent

from citelab import ConfigError
from citelab.agent import default_agents, resolve_corpus_path
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.corpus import Reader, load_corpus
from citelab.events import DoneEvent
from citelab.mcp_server import create_server
from mcp import Client, MCPError, StdioServerParameters

pytestmark = pytest.mark.anyio

FIRST = "How much is the semester fee?"
FOLLOW_UP = "What do Digital Humanities MA students work on in their second year?"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-indexes")


def server(tmp_path: Path, *args: str) -> StdioServerParameters:
    """``citelab mcp`` as a child process speaking stdio."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "citelab", "mcp", "--db", str(tmp_path / "mcp.sqlite3"), *args],
        env={"CITELAB_CACHE_DIR": str(tmp_path / "cache"), "PATH": os.environ.get("PATH", "")},
    )


def service(index_dir: Path) -> AnswerService:
    return AnswerService(
        default_agents(),
        store=MemoryConversationStore(),
        logs=MemoryLogStore(),
        index_dir=index_dir,
    )


async def every_resource(client: Client) -> tuple[list[Resource], int]:
    """All pages of ``resources/list``, following ``nextCursor``; and how many pages."""
    listed: list[Resource] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await client.list_resources(cursor=cursor)
        listed += page.resources
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            return listed, pages


def readable_uris(reader: Reader) -> set[str]:
    """What the agents' corpora hold that ``reader`` may read (independently of the server)."""
    names = {config.corpus for config in default_agents().values()}
    return {
        document.uri
        for name in names
        for document in load_corpus(resolve_corpus_path(name))
        if document.readable_by(reader)
    }


def render_plain(result: CallToolResult) -> tuple[str, list[str]]:
    """The answer as a client that ignores ``_meta`` shows it: the first text block, and its
    source list from the resource_links' standard fields (``title``, else ``name``)."""
    text = result.content[0]
    assert isinstance(text, TextContent)
    links = [block for block in result.content if isinstance(block, ResourceLink)]
    return text.text, [link.title or link.name for link in links]


async def test_list_resources_pages_through_what_the_reader_may_read(tmp_path: Path) -> None:
    """Before, the list was empty (only the template was listed)."""
    async with Client(server(tmp_path)) as client:
        anonymous, _ = await every_resource(client)
    async with Client(server(tmp_path, "--user", "alice", "--role", "hr")) as client:
        hr, _ = await every_resource(client)
    uris = [resource.uri for resource in anonymous]
    assert len(uris) == len(set(uris))
    assert set(uris) == readable_uris(Reader.anonymous())
    assert "entity:node/31" not in uris  # the HR-only salary bands
    assert "entity:node/31" in {resource.uri for resource in hr}
    alice = Reader(user_id="alice", roles=frozenset({"hr"}))
    assert readable_uris(alice) == {resource.uri for resource in hr}
    fee = next(r for r in anonymous if r.uri == "entity:page/semester-fee")
    assert (fee.name, fee.mime_type) == ("Semester fee", "text/markdown")


async def test_small_pages_chain_by_cursor_and_each_listed_entity_reads(index_dir: Path) -> None:
    async with Client(create_server(service(index_dir), page_size=7)) as client:
        listed, pages = await every_resource(client)
        first = await client.list_resources()
        read = await client.read_resource(listed[-1].uri)
        with pytest.raises(MCPError, match="unknown cursor"):
            await client.list_resources(cursor="not-a-cursor")
    assert len(first.resources) == 7
    assert pages == -(-len(listed) // 7)
    assert {r.uri for r in listed} == readable_uris(Reader.anonymous())
    assert getattr(read.contents[0], "text", "").startswith("# ")


def test_a_page_size_below_one_is_a_configuration_error(index_dir: Path) -> None:
    with pytest.raises(ConfigError, match="page_size must be at least 1"):
        create_server(service(index_dir), page_size=0)


async def test_a_follow_up_citing_only_2_lists_it_as_2_without_meta(tmp_path: Path) -> None:
    """Before, the follow-up's one resource_link had no number a plain client could see, so
    it listed the source as 1 beside text that says [2]."""
    async with Client(server(tmp_path)) as client:
        first = await client.call_tool("ask", {"question": FIRST})
        conversation = DoneEvent.model_validate(first.structured_content).conversation_id
        follow = await client.call_tool(
            "ask", {"question": FOLLOW_UP, "conversation_id": conversation}
        )
    text, listed = render_plain(follow)
    cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", text)})
    assert cited == [2], text  # the case in point: the follow-up cites only its second source
    shown = [re.match(r"\[(\d+)\] ", label) for label in listed]
    assert all(shown), listed
    assert sorted(int(match.group(1)) for match in shown if match) == cited
    assert listed == ["[2] Digital Humanities"]
    # The structured done payload keeps the contract's own links (numbers in _meta).
    done = DoneEvent.model_validate(follow.structured_content)
    assert [r.number for r in done.references] == [2]
    [link] = [b for b in done.message["content"] if b["type"] == "resource_link"]
    assert "title" not in link
