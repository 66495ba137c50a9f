"""``citelab mcp --corpus DIR --model SPEC``: an MCP client asks about a folder of notes."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from citelab.events import DoneEvent
from citelab.models import ExtractiveModel, RunningServer, serve_in_thread
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel(name="notes-model")) as server:
        yield server


@pytest.mark.slow  # several processes or a server: not in make test-quick
async def test_ask_answers_from_the_folder_through_the_endpoint(
    tmp_path: Path, endpoint: RunningServer
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "boat.md").write_text("# Boat\n\nThe rowing boat is moored at pier 4.\n", "utf-8")
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m", "citelab", "mcp", "--db", str(tmp_path / "mcp.sqlite3"),
            "--corpus", str(notes), "--model", "anthropic:notes-model",
        ],
        env={
            "CITELAB_CACHE_DIR": str(tmp_path / "cache"),
            "PATH": os.environ.get("PATH", ""),
            "ANTHROPIC_BASE_URL": endpoint.base_url.removesuffix("/v1"),
        },
    )  # fmt: skip
    async with Client(params) as client:
        answered = await client.call_tool("ask", {"question": "Where is the rowing boat moored?"})
    assert answered.is_error is False
    done = DoneEvent.model_validate(answered.structured_content)
    assert "moored at pier 4 [1]." in done.text
    assert [block.type for block in answered.content][:2] == ["text", "resource_link"]
