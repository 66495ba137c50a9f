"""``citelab serve``: the chat page and the HTTP API (JSON or SSE) on this machine."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citelab.cli._common import (
    add_address_arguments,
    add_agents_arguments,
    add_model_arguments,
    agents_and_corpora,
    default_agent,
    warn_if_reachable,
)

if TYPE_CHECKING:
    from citelab.server import Auth

__all__ = ["register", "run"]

TOKEN_VARIABLE = "CITELAB_TOKEN"
"""The environment variable a token can come from (not visible in the process list)."""
_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_REACHABLE = "anyone who can reach it and holds a token can ask (plain HTTP: use a trusted network)"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the chat page and the answer API",
        description=(
            "Serve the chat page and the answer API (POST /api/question, JSON or Server-Sent "
            "Events). Binds to loopback and prints the address with a token, like Jupyter: "
            "API calls need 'Authorization: Bearer <token>' or the page's session."
        ),
    )
    add_address_arguments(parser, port=8000)
    tokens = parser.add_mutually_exclusive_group()
    tokens.add_argument(
        "--token",
        help=(
            "the token to use (default: $CITELAB_TOKEN, else a random one); other users of "
            "this machine can read it in the process list: prefer --token-file or $CITELAB_TOKEN"
        ),
    )
    tokens.add_argument(
        "--token-file", metavar="FILE", help="read the token from the first line of FILE"
    )
    add_agents_arguments(parser)
    add_model_arguments(parser)
    parser.add_argument(
        "--agent", help="the page's agent when the address has no ?agent= (default: default)"
    )
    parser.add_argument(
        "--users", metavar="FILE", help="users with their tokens and roles (TOML or YAML)"
    )
    parser.add_argument(
        "--anonymous", action="store_true", help="let requests without credentials in"
    )
    parser.add_argument(
        "--max-body-bytes", type=int, metavar="N", help="largest request body accepted"
    )
    parser.add_argument(
        "--answer-deadline",
        type=float,
        metavar="S",
        help="longest one answer may take, in seconds (an agent's own setting wins; 504 after)",
    )
    parser.add_argument(
        "--first-token-timeout",
        type=float,
        metavar="S",
        help="longest a model call may take to send anything, in seconds (504 after)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from citelab._errors import ConfigError
    from citelab.answers import AnswerService
    from citelab.server import DEFAULT_MAX_BODY_BYTES, LOOPBACK_HOSTS, create_app
    from citelab.server import serve as serve_app

    if args.max_body_bytes is not None and args.max_body_bytes < 1:
        raise ConfigError("--max-body-bytes: must be a positive number of bytes")
    logging.basicConfig(level=logging.INFO, format=_LOG_FORMAT)
    agents, corpora = agents_and_corpora(args)
    auth = _auth(args)
    loopback = warn_if_reachable("serve", args.host, _REACHABLE)
    timing = {
        name: value
        for name, value in (
            ("answer_deadline_seconds", args.answer_deadline),
            ("first_token_seconds", args.first_token_timeout),
        )
        if value is not None
    }
    if any(value <= 0 for value in timing.values()):
        raise ConfigError("--answer-deadline and --first-token-timeout must be positive seconds")
    service = AnswerService(agents, database=args.db, corpora=corpora, **timing)
    service.check_storage()  # a bad --db is a clear error now, not a 500 on the first question
    service.check_corpora()  # so is a missing or malformed corpus (not a 400 to the asker)
    app = create_app(
        service,
        auth=auth,
        default_agent=default_agent(args.agent, agents),
        max_body_bytes=args.max_body_bytes or DEFAULT_MAX_BODY_BYTES,
        allowed_hosts=LOOPBACK_HOSTS if loopback else None,
    )
    # uvicorn stops gracefully on SIGINT and SIGTERM, then raises the signal again: make a
    # SIGTERM end like Ctrl-C, so the stores below are closed (and checkpointed) either way.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        serve_app(app, host=args.host, port=args.port, announce=lambda p: _announce(args, auth, p))
    except KeyboardInterrupt:  # Ctrl-C is how a foreground server is meant to stop
        print("citelab serve: stopped", file=sys.stderr)
    finally:
        asyncio.run(service.aclose())
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _auth(args: argparse.Namespace) -> Auth:
    from citelab.server import Auth, User, UserDirectory, generate_token, load_users

    users: list[User] = list(load_users(args.users)) if args.users else []
    token = _given_token(args)
    if token is None and not users and not args.anonymous:
        token = generate_token()
    if token is not None:
        users.append(next(iter(UserDirectory.single(token))))
    return Auth(users=UserDirectory(users), anonymous=args.anonymous)


def _given_token(args: argparse.Namespace) -> str | None:
    """``--token``, else the first line of ``--token-file``, else ``$CITELAB_TOKEN``."""
    from citelab._errors import ConfigError

    if args.token is not None:
        return str(args.token)
    if args.token_file is not None:
        try:
            lines = Path(args.token_file).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"--token-file {args.token_file}: {exc.strerror}") from exc
        if not lines or not lines[0].strip():
            raise ConfigError(f"--token-file {args.token_file}: the first line is empty")
        return lines[0].strip()
    return os.environ.get(TOKEN_VARIABLE) or None


def _announce(args: argparse.Namespace, auth: Auth, port: int) -> None:
    """The address, and the login link of the local token only: a users file's tokens are
    its users' secrets, and are never printed."""
    from citelab.server import page_url

    print(f"citelab serve: serving on {page_url(args.host, port)}", flush=True)
    if auth.anonymous:
        print(f"  anonymous: {page_url(args.host, port)}", flush=True)
    for user in auth.users:
        if user.id == "local":
            url = page_url(args.host, port, user.token.get_secret_value())
            print(f"  local: {url}", flush=True)
    if args.users:
        names = ", ".join(user.id for user in auth.users if user.id != "local")
        print(
            f"  users of {args.users} ({names}): {page_url(args.host, port)}?token=<their token>",
            flush=True,
        )
    print("Open an address above in a browser; press Ctrl+C to stop.", flush=True)
