"""The ``citelab`` command line.

Each module in this package that defines ``register(subparsers)`` adds one or more
subcommands; ``register`` must keep heavy imports inside the command's own function so that
``citelab --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence

from citelab._errors import CitelabError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citelab", description="A research workbench for answers with citations."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if callable(register):
            register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``citelab`` script; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        result = args.func(args)
    except CitelabError as exc:
        print(f"citelab {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"citelab {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_went_away()
    try:
        sys.stdout.flush()  # what is still buffered can meet a closed pipe too
    except BrokenPipeError:
        return _reader_went_away()
    return int(result or 0)


def _reader_went_away() -> int:
    """``citelab … | head`` closed the pipe: stop quietly, as other tools do (exit 141, the
    shell's code for SIGPIPE), and point stdout at nothing so the exit flush cannot fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
