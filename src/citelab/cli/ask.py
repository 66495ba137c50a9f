"""``citelab ask``: answer one question (or a follow-up) with citations, from the shell."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from citelab.cli._common import (
    add_agents_arguments,
    add_model_arguments,
    add_reader_arguments,
    agents_and_corpora,
    default_agent,
    reader_from,
)

if TYPE_CHECKING:
    from citelab.answers import Answer

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="answer a question with citations",
        description=(
            "Answer a question with a configured agent (default: the bundled offline agents) "
            "and print the answer with its numbered sources. Conversations are kept in a "
            "SQLite file, so a follow-up can continue one with --conversation."
        ),
    )
    parser.add_argument("question", help="the question to answer")
    parser.add_argument(
        "--agent",
        help="agent name (default: default; with --corpus and no --agents: the corpus's agent)",
    )
    parser.add_argument(
        "--conversation", metavar="ID", help="continue this conversation (its agent is kept)"
    )
    parser.add_argument("--json", action="store_true", help="print the done event as JSON")
    parser.add_argument(
        "--stream", action="store_true", help="print the raw answer text as it is generated"
    )
    add_agents_arguments(parser)
    add_model_arguments(parser)
    add_reader_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    answer = asyncio.run(_ask(args))
    if args.json:
        print(answer.to_done_event().model_dump_json(indent=2))
        return 0
    if not args.stream or not answer.raw_text:  # nothing streamed (or no answer): print it
        print(answer.text)
    elif answer.text != answer.raw_text:
        # The text streamed above is the model's; finalizing renumbered or dropped markers.
        print("\n\nWith the citations finalized:\n" + answer.text)
    else:
        print()  # the answer is the text streamed above
    _print_sources(answer.references)
    print(
        f"\n(conversation {answer.conversation_id}, turn {answer.turn}; "
        f"continue with --conversation {answer.conversation_id})",
        file=sys.stderr,
    )
    return 0


async def _ask(args: argparse.Namespace) -> Answer:
    from citelab._errors import NotFound
    from citelab.answers import AnswerService

    agents, corpora = agents_and_corpora(args)
    agent = default_agent(args.agent, agents)
    if args.conversation is None and agent not in agents:
        raise NotFound(f"unknown agent {agent!r}; the agents are: {', '.join(sorted(agents))}")
    reader = reader_from(args)
    on_token = _print_piece if args.stream and not args.json else None
    async with AnswerService(agents, database=args.db, corpora=corpora) as service:
        return await service.answer(
            agent, args.question, args.conversation, reader, on_token=on_token
        )


def _print_piece(piece: str) -> None:
    print(piece, end="", flush=True)


def _print_sources(references: list[Any]) -> None:
    if not references:
        return
    print("\nSources:")
    for reference in references:
        # [n] is the conversation's number for the source: the same in every follow-up.
        detail = f" ({reference.detail})" if reference.detail else ""
        where = f" <{reference.url}>" if reference.url else ""
        print(f"  [{reference.number}] {reference.title}{detail}{where}")
