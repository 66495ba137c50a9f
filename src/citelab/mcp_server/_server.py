"""The MCP server: an ``ask`` tool whose result is the answer's contract message, a ``search``
tool over the corpus, an ``agents`` listing, and ``entity:`` documents as resources.

``ask``'s result carries the :class:`~citelab.contract.AnswerMessage` blocks unchanged: the
``text`` block with its citation anchors in ``_meta`` and one ``resource_link`` per source,
so any MCP client shows the sources; then one more ``text`` block naming the conversation id
(for clients that show only the content). The message's ``_meta`` (suggested replies) becomes
the result's ``_meta``; the structured content is the ``done`` payload every transport sends.
``search`` returns the matching passages as JSON text and structured content, and one
``resource_link`` per entity found. Every ``entity:<type>/<id>`` uri these links name can be
read (``resources/read``, the template ``entity:{entity_type}/{entity_id}``): the document as
Markdown, if the server's reader may read it, from the default agent's corpus first; and
``resources/list`` lists those entities, in pages (MCP cursors). Each ``resource_link`` of an
answer is titled with the ``[n]`` its text uses, for clients that ignore ``_meta``.
Errors become tool errors (``isError``): the caller's mistakes say what was wrong, anything
else is logged and answered with a generic message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    ContentBlock,
    ListResourcesResult,
    Resource,
    ResourceLink,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

from citelab._errors import ConfigError, NotFound
from citelab._text import snippet
from citelab._version import __version__
from citelab.answers import Answer, AnswerService
from citelab.contract import AnswerMessage
from citelab.corpus import Document, Reader
from citelab.events import DoneEvent
from citelab.mcp_server._search import CorpusSearch, SearchResults, entity_markdown
from citelab.server import problem

__all__ = [
    "RESOURCE_PAGE_SIZE",
    "AgentInfo",
    "AgentList",
    "EntityPages",
    "agent_list",
    "answer_result",
    "create_server",
    "numbered_links",
    "search_links",
    "tool_error",
]

_INSTRUCTIONS = (
    "citelab answers questions from a document collection with numbered citations. Call "
    "`ask` with a question; its result is the answer text with inline [n] markers and one "
    "resource_link per cited source. Pass the returned conversation_id to ask a follow-up: "
    "a source keeps its [n] for the whole conversation. Call `search` to read the matching "
    "passages yourself, `agents` to list the agents, and read any entity: resource_link "
    "uri as a resource to see the whole document."
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


RESOURCE_PAGE_SIZE = 100
"""How many entities one ``resources/list`` page holds."""


def create_server(
    service: AnswerService,
    *,
    reader: Reader | None = None,
    default_agent: str = "default",
    page_size: int = RESOURCE_PAGE_SIZE,
) -> MCPServer:
    """An MCP server answering with ``service`` as ``reader`` (default: anonymous);
    ``resources/list`` pages the entities ``reader`` may read, ``page_size`` at a time."""
    if default_agent not in service.agents:
        known = sorted(service.agents)
        raise ConfigError(f"default agent {default_agent!r} is not configured (known: {known})")
    who = reader or Reader.anonymous()
    corpus_search = CorpusSearch(service.agents)
    order = [default_agent, *(name for name in service.agents if name != default_agent)]
    pages = EntityPages(corpus_search, who, order, page_size)
    server: MCPServer = MCPServer(
        "citelab",
        instructions=_INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        middleware=[pages],
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
        name="agents",
        title="List the agents",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def agents() -> Annotated[CallToolResult, AgentList]:
        """The agents this server can ask (pass a name as `agent` to ask or search)."""
        listing = agent_list(service, default_agent)
        structured = listing.model_dump(mode="json")
        lines = [
            f"- {a.name}{' (default)' if a.default else ''}: corpus {a.corpus}"
            for a in listing.agents
        ]
        return CallToolResult(
            content=[TextContent(text="\n".join(lines))], structured_content=structured
        )

    @server.resource(
        "entity:{entity_type}/{entity_id}",
        name="entity",
        title="A document of the corpus",
        description="A corpus entity (the uri of a source's resource_link) as Markdown.",
        mime_type="text/markdown",
    )
    async def entity(entity_type: str, entity_id: str) -> str:
        try:
            document = await corpus_search.document(entity_type, entity_id, who, order)
        except NotFound as exc:
            # The SDK answers this with -32602 and the message; anything else is a crash.
            raise ResourceNotFoundError(str(exc)) from exc
        return entity_markdown(document, who.langcode)

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
        return CallToolResult(
            content=[TextContent(text=text), *search_links(found)], structured_content=structured
        )

    return server


class EntityPages:
    """``resources/list`` as pages of the entities the server's reader may read.

    The SDK's own listing holds only registered resources and has no pages; this answers the
    method itself (a server middleware), with MCP's cursor pagination: ``nextCursor`` names
    the next page, and a cursor this server did not hand out is an invalid-params error.
    """

    def __init__(
        self, search: CorpusSearch, reader: Reader, agents: list[str], page_size: int
    ) -> None:
        if page_size < 1:
            raise ConfigError(f"page_size must be at least 1, not {page_size}")
        self._search, self._reader, self._agents = search, reader, agents
        self._page_size = page_size

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method != "resources/list" or ctx.request_id is None:
            return await call_next(ctx)
        params = ctx.params if isinstance(ctx.params, dict) else {}
        return await self.page(params.get("cursor"))

    async def page(self, cursor: object) -> ListResourcesResult:
        """The page ``cursor`` names (``None``: the first)."""
        start = _cursor_offset(cursor)
        documents = await self._search.readable(self._reader, self._agents)
        end = start + self._page_size
        return ListResourcesResult(
            resources=[_entity_resource(d, self._reader.langcode) for d in documents[start:end]],
            next_cursor=_cursor(end) if end < len(documents) else None,
        )


def _cursor(offset: int) -> str:
    return f"entities:{offset}"


def _cursor_offset(cursor: object) -> int:
    if cursor is None:
        return 0
    text = cursor if isinstance(cursor, str) else ""
    offset = text.removeprefix("entities:")
    if text.startswith("entities:") and offset.isdigit() and _cursor(int(offset)) == text:
        return int(offset)
    raise MCPError(code=INVALID_PARAMS, message=f"unknown cursor {cursor!r}")


def _entity_resource(document: Document, langcode: str) -> Resource:
    _, translation = document.translation(langcode)
    return Resource(
        uri=document.uri,
        name=translation.title or document.uri,
        description=snippet(translation.content),
        mime_type="text/markdown",
    )


class AgentInfo(BaseModel):
    """One agent the server can ask."""

    name: str
    """Pass it as ``agent`` to ``ask`` or ``search``."""
    corpus: str
    """The corpus it answers from."""
    default: bool = False
    """True for the agent used when none is named."""


class AgentList(BaseModel):
    """What the ``agents`` tool returns."""

    agents: list[AgentInfo]


def agent_list(service: AnswerService, default_agent: str) -> AgentList:
    """The enabled agents that can answer, the default one first."""
    usable = [c for c in service.agents.values() if c.enabled and c.retrieval is not None]
    usable.sort(key=lambda config: config.name != default_agent)
    return AgentList(
        agents=[
            AgentInfo(name=c.name, corpus=Path(c.corpus).stem, default=c.name == default_agent)
            for c in usable
        ]
    )


def search_links(found: SearchResults) -> list[ResourceLink]:
    """One ``resource_link`` per entity of the results, best first (readable as a resource)."""
    links: dict[str, ResourceLink] = {}
    for row in found.results:
        uri = f"entity:{row.entity_type}/{row.entity_id}"
        if uri not in links:
            links[uri] = ResourceLink(
                uri=uri,
                name=row.title or uri,
                description=snippet(row.content),
                mime_type="text/markdown",
            )
    return list(links.values())


def answer_result(answer: Answer) -> CallToolResult:
    """An answer as a tool result: the contract blocks, their ``_meta``, the ``done`` payload,
    and a last text block naming the conversation (for clients that read only the content).

    Each ``resource_link``'s ``title`` says the ``[n]`` the text uses for it (``"[2] Fees"``):
    a client that ignores ``_meta`` shows the title, and would otherwise number the list
    1..k beside a follow-up's text that says [2]. The ``done`` payload keeps the contract's
    own blocks."""
    message = answer.message
    result = message.to_call_tool_result()
    note = (
        f"conversation_id: {answer.conversation_id} (pass it to ask for a follow-up; "
        f"turn {answer.turn})"
    )
    result.content = [*numbered_links(message), TextContent(text=note)]
    result.structured_content = answer.to_done_event().model_dump(mode="json")
    return result


def numbered_links(message: AnswerMessage) -> list[ContentBlock]:
    """The message's blocks, each ``resource_link`` titled with its ``[n]``."""
    numbers = {link.uri: number for number, link in message.numbered_sources}
    return [
        block.model_copy(update={"title": f"[{numbers[block.uri]}] {block.title or block.name}"})
        if isinstance(block, ResourceLink) and block.uri in numbers
        else block
        for block in message.content
    ]


def tool_error(exc: BaseException, tool: str) -> CallToolResult:
    """``exc`` as a tool error; what is not the caller's fault is logged, not shown."""
    _, detail = problem(exc, f"MCP tool {tool}")
    return CallToolResult(
        content=[TextContent(text=f"{detail.code}: {detail.message}")], is_error=True
    )
