"""JSONL files of pydantic rows: read every line, validate it, report every problem at once.

A corpus and an evaluation dataset are both one JSON object per line. :func:`load_jsonl`
reads such a file into validated rows, skipping blank lines, and collects every problem (bad
JSON, a field the model refuses, a repeated key) as ``"file:line: ..."`` before raising one
:class:`~citelab.InvalidInput` that lists them all, so a user fixes a file in one pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from citelab._errors import InvalidInput
from citelab._validation import validation_problems

__all__ = ["JsonlRows", "load_jsonl"]

RowT = TypeVar("RowT", bound=BaseModel)


@dataclass(frozen=True)
class JsonlRows(Generic[RowT]):
    """How a file's rows are read: the model, what a row is called, and what makes it unique."""

    model: type[RowT]
    """Validates one line."""
    what: str
    """What the file is, for messages: ``corpus``, ``dataset``."""
    whole: str
    """How a problem with a whole row (no field of its own) names it: ``(document)``."""
    key: Callable[[RowT], Hashable]
    """Rows must be unique by this key."""
    repeated: Callable[[RowT, int], str]
    """The problem told for a row whose key already stood on the given (earlier) line."""


def load_jsonl(path: Path, rows: JsonlRows[RowT]) -> list[RowT]:
    """The valid rows of ``path`` in file order; :class:`InvalidInput` listing every problem."""
    if path.is_dir():
        raise InvalidInput(f"{rows.what} {path} is a folder; give a JSONL file (one row a line)")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidInput(f"cannot read {rows.what} {path}: {exc.strerror or exc}") from exc
    found, problems = _parse(lines, path.name, rows)
    if problems:
        raise InvalidInput(
            f"{rows.what} {path} has {len(problems)} problem(s):\n" + "\n".join(problems)
        )
    return found


def _parse(lines: list[str], filename: str, rows: JsonlRows[RowT]) -> tuple[list[RowT], list[str]]:
    found: list[RowT] = []
    problems: list[str] = []
    first_line: dict[Hashable, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{filename}:{number}"
        row = _row(line, where, rows, problems)
        if row is None:
            continue
        seen = first_line.setdefault(rows.key(row), number)
        if seen != number:
            problems.append(f"{where}: {rows.repeated(row, seen)}")
            continue
        found.append(row)
    return found, problems


def _row(line: str, where: str, rows: JsonlRows[RowT], problems: list[str]) -> RowT | None:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        problems.append(f"{where}: invalid JSON ({exc.msg} at column {exc.colno})")
        return None
    try:
        return rows.model.model_validate(data)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, where, label="field ", whole=rows.whole))
        return None
