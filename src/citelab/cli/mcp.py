"""``citelab mcp``: an MCP server on stdio with the ``ask`` and ``search`` tools."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from citelab.cli._common import (
    add_agents_arguments,
    add_model_arguments,
    add_reader_arguments,
    agents_and_corpora,
    default_agent,
    reader_from,
)

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="run an MCP server (stdio) with the ask and search tools",
        description=(
            "Run an MCP server on stdin/stdout for an MCP client (an IDE, a desktop app, an "
            "agent). `ask` answers with the citation contract's content blocks (the text with "
            "its anchors, one resource_link per source); `search` returns rag_search results. "
            "Both act as one reader: anonymous unless --user/--role say otherwise."
        ),
    )
    add_agents_arguments(parser)
    add_model_arguments(parser)
    parser.add_argument("--agent", help="the agent used when a call names none (default: default)")
    add_reader_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # stdout carries the protocol: every log line must go to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    from citelab.answers import AnswerService
    from citelab.mcp_server import create_server

    agents, corpora = agents_and_corpora(args)
    service = AnswerService(agents, database=args.db, corpora=corpora)
    service.check_corpora()  # a malformed corpus stops the server now, not the first call
    server = create_server(
        service,
        reader=reader_from(args),
        default_agent=default_agent(args.agent, agents),
    )
    server.run("stdio")
    return 0
