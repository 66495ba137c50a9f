"""The MCP server: an ``ask`` tool whose result is the answer's contract message, and a
``search`` tool over the corpus.

``ask``'s result carries the :class:`~citelab.contract.AnswerMessage` blocks unchanged: the
``text`` block with its citation anchors in ``_meta`` and one ``resource_link`` per source,
so any MCP client shows the sources; the message's ``_meta`` (suggested replies) becomes the
result's ``_meta``; the structured content is the ``done`` payload every transport sends.
Errors become tool errors (``isError``): the caller's mistakes say what was wrong, anything
else is logged and answered with a generic message.
"""

from __future__ import annotations

import json
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from citelab import __version__
from citelab._errors import ConfigError
from citelab.answers import Answer, AnswerService
from citelab.corpus import Reader
from citelab.events import DoneEvent
from citelab.mcp_server._search import CorpusSearch, SearchResults
from citelab.server import problem

__all__ = ["answer_result", "create_server", "tool_error"]

_INSTRUCTIONS = (
    "citelab answers questions from a document collection with numbered citations. Call "
    "`ask` with a question; its result is the answer text with inline [n] markers and one "
    "resource_link per cited source. Pass the returned conversation_id to ask a follow-up. "
    "Call `search` to read the matching passages yourself."
)

Question = Annotated[str, Field(description="The question to answer.", max_length=20_000)]
ConversationId = Annotated[
    str | None,
    Field(description="Continue this conversation (from an earlier result's conversation_id)."),
]
AgentName = Annotated[
    str | None, Field(description="The agent to ask (default: the server's agent).")
]
Query = Annotated[str, Field(description="What to search for: keywords or a short question.")]
MaxResults = Annotated[
    int | None, Field(description="How many passages to return (1-50).", ge=1, le=50)
]


def create_server(
    service: AnswerService, *, reader: Reader | None = None, default_agent: str = "default"
) -> MCPServer:
    """An MCP server answering with ``service`` as ``reader`` (default: anonymous)."""
    if default_agent not in service.agents:
        known = sorted(service.agents)
        raise ConfigError(f"default agent {default_agent!r} is not configured (known: {known})")
    who = reader or Reader.anonymous()
    corpus_search = CorpusSearch(service.agents)
    server: MCPServer = MCPServer(
        "citelab", instructions=_INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    @server.tool(
        name="ask",
        title="Ask with citations",
        annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False),
    )
    async def ask(
        question: Question, conversation_id: ConversationId = None, agent: AgentName = None
    ) -> Annotated[CallToolResult, DoneEvent]:
        """Answer a question from the documents, citing them as [n] with a source list."""
        try:
            answer = await service.answer(agent or default_agent, question, conversation_id, who)
        except Exception as exc:
            return tool_error(exc, "ask")
        return answer_result(answer)

    @server.tool(
        name="search",
        title="Search the documents",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def search(
        query: Query, max_results: MaxResults = None, agent: AgentName = None
    ) -> Annotated[CallToolResult, SearchResults]:
        """Find the passages that match a query (only those this server's reader may read)."""
        try:
            found = await corpus_search.search(agent or default_agent, query, who, max_results)
        except Exception as exc:
            return tool_error(exc, "search")
        structured = found.model_dump(mode="json")
        text = json.dumps(structured, ensure_ascii=False)
        return CallToolResult(content=[TextContent(text=text)], structured_content=structured)

    return server


def answer_result(answer: Answer) -> CallToolResult:
    """An answer as a tool result: the contract blocks, their ``_meta``, the ``done`` payload."""
    result = answer.message.to_call_tool_result()
    result.structured_content = answer.to_done_event().model_dump(mode="json")
    return result


def tool_error(exc: BaseException, tool: str) -> CallToolResult:
    """``exc`` as a tool error; what is not the caller's fault is logged, not shown."""
    _, detail = problem(exc, f"MCP tool {tool}")
    return CallToolResult(
        content=[TextContent(text=f"{detail.code}: {detail.message}")], is_error=True
    )
