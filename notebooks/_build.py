"""Build the tutorial notebooks from their sources in ``notebooks/_cells/``.

Each source is a Python file in the "percent" format that Jupytext and VS Code also read:
``# %%`` starts a code cell, ``# %% [markdown]`` a Markdown cell whose lines are written as
comments (``# text``). The notebooks are written without outputs, with deterministic cell ids
and minimal metadata (the ``python3`` kernelspec), so a rebuild of unchanged sources changes
no byte and a diff shows only what was edited.

    .venv/bin/python notebooks/_build.py          # rewrite every notebook from its source
    .venv/bin/python notebooks/_build.py --check  # exit 1 when a notebook is stale or edited

Edit the sources, not the ``.ipynb`` files: the test suite fails when they disagree.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import nbformat as _nbformat

nbformat: Any = _nbformat  # nbformat ships no type hints

__all__ = [
    "NOTEBOOKS_DIR",
    "SOURCES_DIR",
    "Cell",
    "SourceError",
    "build",
    "notebook_for",
    "parse_cells",
    "sources",
    "stale",
    "target_of",
]

NOTEBOOKS_DIR = Path(__file__).resolve().parent
SOURCES_DIR = NOTEBOOKS_DIR / "_cells"

_CODE_MARK = "# %%"
_MARKDOWN_MARK = "# %% [markdown]"
_KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


class SourceError(ValueError):
    """A notebook source that does not follow the percent format (names file and line)."""


@dataclass(frozen=True)
class Cell:
    """One notebook cell as written in a source file."""

    kind: Literal["code", "markdown"]
    text: str
    line: int
    """Line of the cell's ``# %%`` marker in the source (1-based), for error messages."""


def parse_cells(text: str, where: str = "<source>") -> list[Cell]:
    """The cells of a percent-format source; text before the first marker is an error."""
    cells: list[Cell] = []
    kind: Literal["code", "markdown"] | None = None
    start, body = 0, list[str]()
    for number, line in enumerate(text.splitlines(), start=1):
        marker = _marker(line, where, number)
        if marker is not None:
            if kind is not None:
                cells.append(_cell(kind, body, start, where))
            kind, start, body = marker, number, []
        elif kind is None:
            if line.strip():
                raise SourceError(f"{where}:{number}: text before the first '# %%' cell marker")
        else:
            body.append(line)
    if kind is not None:
        cells.append(_cell(kind, body, start, where))
    if not cells:
        raise SourceError(f"{where}: no cells (start each cell with '# %%')")
    return cells


def _marker(line: str, where: str, number: int) -> Literal["code", "markdown"] | None:
    if line.rstrip() == _MARKDOWN_MARK:
        return "markdown"
    if line.rstrip() == _CODE_MARK:
        return "code"
    if line.startswith(_CODE_MARK):
        raise SourceError(
            f"{where}:{number}: unknown cell marker {line.strip()!r} "
            f"(use {_CODE_MARK!r} or {_MARKDOWN_MARK!r})"
        )
    return None


def _cell(kind: Literal["code", "markdown"], body: list[str], start: int, where: str) -> Cell:
    if kind == "markdown":
        body = [_uncommented(line, where, start + offset) for offset, line in enumerate(body, 1)]
    text = "\n".join(_trimmed(body))
    if not text.strip():
        raise SourceError(f"{where}:{start}: empty {kind} cell")
    return Cell(kind, text, start)


def _uncommented(line: str, where: str, number: int) -> str:
    if line.strip() == "":
        return ""
    if line.rstrip() == "#":
        return ""
    if line.startswith("# "):
        return line[2:]
    raise SourceError(f"{where}:{number}: a Markdown cell line must start with '# '")


def _trimmed(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def notebook_for(source: Path) -> Any:
    """The notebook a source file describes: no outputs, stable ids, minimal metadata."""
    cells = parse_cells(source.read_text(encoding="utf-8"), str(source.name))
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = {"kernelspec": dict(_KERNELSPEC), "language_info": {"name": "python"}}
    for index, cell in enumerate(cells):
        made = (
            nbformat.v4.new_code_cell(cell.text)
            if cell.kind == "code"
            else nbformat.v4.new_markdown_cell(cell.text)
        )
        made.id = f"{source.stem[:40]}-{index:02d}".replace("_", "-")
        notebook.cells.append(made)
    nbformat.validate(notebook)
    return notebook


def _text(notebook: Any) -> str:
    return str(nbformat.writes(notebook)) + "\n"


def sources() -> list[Path]:
    """Every notebook source, in order."""
    return sorted(SOURCES_DIR.glob("[0-9]*.py"))


def target_of(source: Path) -> Path:
    """The notebook built from ``source``."""
    return NOTEBOOKS_DIR / f"{source.stem}.ipynb"


def stale() -> list[str]:
    """Notebooks that differ from their source (or lack one), with the reason."""
    problems = []
    built = {target_of(source): source for source in sources()}
    for target, source in built.items():
        if not target.is_file():
            problems.append(f"{target.name}: missing (build it from _cells/{source.name})")
        elif target.read_text(encoding="utf-8") != _text(notebook_for(source)):
            problems.append(f"{target.name}: differs from _cells/{source.name} (rebuild it)")
    for orphan in sorted(set(NOTEBOOKS_DIR.glob("*.ipynb")) - set(built)):
        problems.append(f"{orphan.name}: has no source in _cells/")
    return problems


def build() -> list[Path]:
    """Write every notebook from its source; returns the notebooks written."""
    written = []
    for source in sources():
        target = target_of(source)
        text = _text(notebook_for(source))
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check, write nothing")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale()
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    for path in build():
        print(f"wrote {path.relative_to(NOTEBOOKS_DIR.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
