"""``citelab mcp`` as an MCP client starts it: a child process speaking stdio to the SDK."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types import CallToolResult, TextContent

from citelab.contract import validate_message
from citelab.events import DoneEvent
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio

LARKSPUR = {"query": "Operation Larkspur assembly", "agent": "intranet"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def server(tmp_path: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "citelab", "mcp", "--db", str(tmp_path / "mcp.sqlite3"), *args],
        env={"CITELAB_CACHE_DIR": str(tmp_path / "cache"), "PATH": os.environ.get("PATH", "")},
    )


def wire(result: CallToolResult) -> dict[str, Any]:
    """The answer message of a tool result: its blocks but the last, the conversation note."""
    blocks = [
        block.model_dump(mode="json", by_alias=True, exclude_none=True)
        for block in result.content[:-1]
    ]
    return {"role": "assistant", "content": blocks}


async def test_list_ask_and_search_over_stdio(tmp_path: Path) -> None:
    async with Client(server(tmp_path)) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        answered = await client.call_tool("ask", {"question": "How much is the semester fee?"})
        searched = await client.call_tool("search", {"query": "semester fee", "max_results": 3})
        restricted = await client.call_tool("search", LARKSPUR)
        refused = await client.call_tool("ask", {"question": "", "agent": "default"})
    assert names == ["agents", "ask", "search"]

    assert answered.is_error is False
    assert validate_message(wire(answered)) == []
    assert [block.type for block in answered.content] == ["text", "resource_link", "text"]
    done = DoneEvent.model_validate(answered.structured_content)
    assert "312 euros" in done.text
    assert validate_message(done.message) == []

    assert searched.is_error is False
    assert searched.structured_content is not None
    rows = searched.structured_content["results"]
    assert rows[0]["entity_id"] == "semester-fee"
    assert len(rows) <= 3

    assert refused.is_error is True
    block = refused.content[0]
    assert isinstance(block, TextContent)
    assert block.text.startswith("invalid_input: ")

    # An anonymous server: the HR-only page on Operation Larkspur is not among the results.
    assert restricted.structured_content is not None
    assert "32" not in [row["entity_id"] for row in restricted.structured_content["results"]]


async def test_the_reader_given_on_the_command_line_may_read_more(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--user", "alice", "--role", "hr")) as client:
        allowed = await client.call_tool("search", LARKSPUR)
    assert allowed.structured_content is not None
    assert "32" in [row["entity_id"] for row in allowed.structured_content["results"]]
