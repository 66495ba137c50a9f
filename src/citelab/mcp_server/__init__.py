"""The MCP server behind ``citelab mcp`` (stdio): ``ask`` returns the answer's contract
message as a tool result; ``search`` runs ``rag_search`` for the server's reader.

- :func:`create_server` — an ``MCPServer`` (the official ``mcp`` SDK) over an
  :class:`~citelab.answers.AnswerService`.
- :func:`answer_result` / :func:`tool_error` — answers and errors as MCP tool results.
- :class:`CorpusSearch` / :class:`SearchResults` — the search behind the ``search`` tool.
"""

from citelab.mcp_server._search import CorpusSearch, SearchResults
from citelab.mcp_server._server import answer_result, create_server, tool_error

__all__ = ["CorpusSearch", "SearchResults", "answer_result", "create_server", "tool_error"]
