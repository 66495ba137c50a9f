"""``citelab serve-model``: serve an offline model as an OpenAI-compatible endpoint."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from citelab.cli._common import add_address_arguments, warn_if_reachable

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve-model",
        help="serve a model as an OpenAI- and Anthropic-compatible endpoint",
        description=(
            "Serve a model (by default the offline extractive one) at /v1/chat/completions "
            "and /v1/responses (OpenAI), /v1/messages (Anthropic; document blocks are "
            "answered with citations, as the Citations API does) and /v1/models, streamed "
            "(SSE) or not, tool calls and estimated token usage included. Binds to loopback "
            "unless --host says otherwise."
        ),
    )
    parser.add_argument("--model", default="extractive", help="model name (default: extractive)")
    parser.add_argument(
        "--options",
        default="{}",
        metavar="JSON",
        help="model options as a JSON object, e.g. '{\"max_searches\": 2}'",
    )
    add_address_arguments(parser, port=8008)
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=0.0,
        help="how long every call takes at least, the model's own time included (benchmarks)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from citelab._errors import ConfigError
    from citelab.models import get_model, run_server

    try:
        options = json.loads(args.options)
    except ValueError as exc:
        raise ConfigError(f"--options: not JSON: {exc}") from exc
    if not isinstance(options, dict):
        raise ConfigError("--options: must be a JSON object")
    if args.latency_ms < 0:
        raise ConfigError("--latency-ms: must be >= 0")
    model = get_model(args.model, **options)
    warn_if_reachable("serve-model", args.host)

    def announce(url: str) -> None:
        print(f"citelab serve-model: serving model {model.name!r} at {url}", flush=True)

    try:
        run_server(
            model, host=args.host, port=args.port, latency_ms=args.latency_ms, announce=announce
        )
    except KeyboardInterrupt:  # Ctrl-C is how a foreground server is meant to stop
        print("citelab serve-model: stopped", file=sys.stderr)
    return 0
