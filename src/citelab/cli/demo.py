"""``citelab demo``: build an answer message from a fixture, validate it, print it.

A placeholder main job (a later issue replaces it with the evaluation run). Exits 1 and
lists the violations when the message breaks the contract.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_FIXTURE", "register", "run"]

DEFAULT_FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "messages" / "example.json"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo", help="build, validate and print an answer message from a fixture"
    )
    parser.add_argument(
        "--fixture",
        type=Path,
        default=DEFAULT_FIXTURE,
        help="JSON with answer, sources, anchors, suggested_replies (default: %(default)s)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from citelab.contract import build_message, validate_message

    fixture = _read_fixture(args.fixture)
    message = build_message(
        fixture.answer,
        fixture.sources,
        anchors=fixture.anchors,
        suggested_replies=fixture.suggested_replies,
    )
    print(message.to_json(indent=2))
    violations = validate_message(message)
    if violations:
        for violation in violations:
            print(violation, file=sys.stderr)
        print(f"invalid: {len(violations)} violation(s)", file=sys.stderr)
        return 1
    print(f"valid: {len(message.sources)} sources, {len(message.anchors)} anchors", file=sys.stderr)
    return 0


def _read_fixture(path: Path) -> Any:
    from pydantic import BaseModel, ValidationError

    from citelab._errors import InvalidInput

    class Fixture(BaseModel):
        question: str = ""
        answer: str
        sources: list[dict[str, Any]] = []
        anchors: list[dict[str, Any]] | None = None
        suggested_replies: list[dict[str, Any] | str] | None = None

    try:
        return Fixture.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise InvalidInput(f"cannot read the fixture {path}: {exc.strerror}") from exc
    except ValidationError as exc:
        raise InvalidInput(f"the fixture {path} is not a valid demo fixture: {exc}") from exc
