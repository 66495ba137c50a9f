"""``citelab serve``: the chat page and the HTTP API (JSON or SSE) on this machine."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING, Any

from citelab.cli._common import (
    add_address_arguments,
    add_agents_arguments,
    add_model_arguments,
    agents_from,
    default_agent,
    warn_if_reachable,
)

if TYPE_CHECKING:
    from citelab.server import Auth

__all__ = ["register", "run"]

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
    parser.add_argument("--token", help="the token to use (default: a random one)")
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
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from citelab._errors import ConfigError
    from citelab.answers import AnswerService
    from citelab.server import DEFAULT_MAX_BODY_BYTES, LOOPBACK_HOSTS, create_app
    from citelab.server import serve as serve_app

    if args.max_body_bytes is not None and args.max_body_bytes < 1:
        raise ConfigError("--max-body-bytes: must be a positive number of bytes")
    logging.basicConfig(level=logging.INFO, format=_LOG_FORMAT)
    agents = agents_from(args)
    auth = _auth(args)
    loopback = warn_if_reachable("serve", args.host, _REACHABLE)
    app = create_app(
        AnswerService(agents, database=args.db),
        auth=auth,
        default_agent=default_agent(args.agent, agents),
        max_body_bytes=args.max_body_bytes or DEFAULT_MAX_BODY_BYTES,
        allowed_hosts=LOOPBACK_HOSTS if loopback else None,
    )
    try:
        serve_app(app, host=args.host, port=args.port, announce=lambda p: _announce(args, auth, p))
    except KeyboardInterrupt:  # Ctrl-C is how a foreground server is meant to stop
        print("citelab serve: stopped", file=sys.stderr)
    return 0


def _auth(args: argparse.Namespace) -> Auth:
    from citelab.server import Auth, User, UserDirectory, generate_token, load_users

    users: list[User] = list(load_users(args.users)) if args.users else []
    token = args.token
    if token is None and not users and not args.anonymous:
        token = generate_token()
    if token is not None:
        users.append(next(iter(UserDirectory.single(token))))
    return Auth(users=UserDirectory(users), anonymous=args.anonymous)


def _announce(args: argparse.Namespace, auth: Auth, port: int) -> None:
    from citelab.server import page_url

    print(f"citelab serve: serving on {page_url(args.host, port)}", flush=True)
    if auth.anonymous:
        print(f"  anonymous: {page_url(args.host, port)}", flush=True)
    for user in auth.users:
        url = page_url(args.host, port, user.token.get_secret_value())
        print(f"  {user.id}: {url}", flush=True)
    print("Open an address above in a browser; press Ctrl+C to stop.", flush=True)
