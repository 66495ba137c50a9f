"""``citelab mcp``: an MCP server on stdio with the ``ask`` and ``search`` tools."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

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
    parser.add_argument("--agents", metavar="FILE", help="agent configuration (TOML or YAML)")
    parser.add_argument("--agent", help="the agent used when a call names none (default: default)")
    parser.add_argument("--db", metavar="PATH", help="SQLite file for conversations and logs")
    parser.add_argument("--user", metavar="ID", help="act as this user (default: anonymous)")
    parser.add_argument(
        "--role", action="append", default=[], metavar="ROLE", help="a role of the user"
    )
    parser.add_argument("--lang", default="en", help="the reader's language (default: en)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # stdout carries the protocol: every log line must go to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    from citelab.agent import default_agents, load_agents
    from citelab.answers import AnswerService
    from citelab.corpus import Reader
    from citelab.mcp_server import create_server

    agents = load_agents(args.agents) if args.agents else default_agents()
    agent = args.agent or ("default" if "default" in agents else next(iter(agents)))
    reader = Reader(user_id=args.user, roles=frozenset(args.role), langcode=args.lang)
    server = create_server(
        AnswerService(agents, database=args.db), reader=reader, default_agent=agent
    )
    server.run("stdio")
    return 0
