"""JSONL files of pydantic rows: read every line, validate it, report every problem at once.

A corpus and an evaluation dataset are both one JSON object per line. :func:`load_jsonl`
reads such a file into validated rows, skipping blank lines, and collects every problem (bad
JSON, a field the model refuses, a repeated key) as ``"file:line: ..."`` before raising one
:class:`~citelab.InvalidInput` that lists them all, so a user fixes a file in one pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from citelab._errors import InvalidInput
from citelab._validation import validation_problems

__all__ = ["JsonlRows", "json_lines", "load_jsonl"]

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


def json_lines(lines: Iterable[str]) -> tuple[list[tuple[int, Any]], list[tuple[int, str]]]:
    """Each non-blank line's JSON value with its line number (from 1), and each line that is
    not JSON with the problem (``invalid JSON (… at column n)``)."""
    values: list[tuple[int, Any]] = []
    problems: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            values.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append((number, f"invalid JSON ({exc.msg} at column {exc.colno})"))
    return values, problems


def _parse(lines: list[str], filename: str, rows: JsonlRows[RowT]) -> tuple[list[RowT], list[str]]:
    values, bad = json_lines(lines)
    problems = [(number, f"{filename}:{number}: {problem}") for number, problem in bad]
    found: list[RowT] = []
    first_line: dict[Hashable, int] = {}
    for number, data in values:
        where = f"{filename}:{number}"
        row_problems: list[str] = []
        row = _row(data, where, rows, row_problems)
        problems += [(number, problem) for problem in row_problems]
        if row is None:
            continue
        seen = first_line.setdefault(rows.key(row), number)
        if seen != number:
            problems.append((number, f"{where}: {rows.repeated(row, seen)}"))
            continue
        found.append(row)
    # In file order (a stable sort: a line's own problems keep their order).
    return found, [problem for _, problem in sorted(problems, key=lambda item: item[0])]


def _row(data: Any, where: str, rows: JsonlRows[RowT], problems: list[str]) -> RowT | None:
    try:
        return rows.model.model_validate(data)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, where, label="field ", whole=rows.whole))
        return None
