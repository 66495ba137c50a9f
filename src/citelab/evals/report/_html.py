"""The report's one escaping helper and its small table builder.

Every text that reaches the report's HTML (model output, titles, URIs, variant names) goes
through :func:`escape`; markup the caller built itself is wrapped in :class:`Safe` so the
builder leaves it alone. To add a table, call :func:`table` with the header texts and one
sequence of cells per row: a cell is a plain value (escaped), a :class:`Safe` string
(inserted as it is), or a :class:`Cell` when it needs a ``class`` or a ``title`` (both
escaped too); e.g. ``table(["fault", "turns"], [[name, Cell(count, cls="num")]])``. Nothing
is escaped twice and nothing unescaped slips in unless someone wrote ``Safe`` on purpose,
which is the line a reviewer checks.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Cell", "Safe", "cell", "escape", "row", "table"]


class Safe(str):
    """HTML the caller built (from escaped parts): inserted without escaping."""

    __slots__ = ()


def escape(value: object) -> str:
    """``value`` as HTML text (quotes too, so it may stand in an attribute); :class:`Safe`
    is returned as it is."""
    if isinstance(value, Safe):
        return value
    return html.escape(str(value), quote=True)


@dataclass(frozen=True)
class Cell:
    """A table cell with attributes; ``content`` is escaped unless it is :class:`Safe`."""

    content: object
    cls: str | None = None
    title: str | None = None
    header: bool = False
    """A ``<th>`` (a row's label) instead of a ``<td>``."""


def _attributes(cls: str | None, title: str | None) -> str:
    out = "" if cls is None else f' class="{escape(cls)}"'
    return out if title is None else f'{out} title="{escape(title)}"'


def cell(value: object, *, header: bool = False) -> str:
    """One ``<td>`` (or ``<th>``) of ``value``, a plain value or a :class:`Cell`."""
    if not isinstance(value, Cell):
        value = Cell(value, header=header)
    tag = "th" if value.header else "td"
    return f"<{tag}{_attributes(value.cls, value.title)}>{escape(value.content)}</{tag}>"


def row(cells: Iterable[object], *, header: bool = False) -> str:
    """One ``<tr>`` of ``cells``."""
    return "<tr>" + "".join(cell(c, header=header) for c in cells) + "</tr>"


def table(
    headers: Sequence[object],
    rows: Iterable[Iterable[object]],
    *,
    cls: str | None = None,
) -> str:
    """A ``<table>``: one header row (omitted when ``headers`` is empty), then the rows."""
    head = row(headers, header=True) if headers else ""
    body = "".join(row(cells) for cells in rows)
    return f"<table{_attributes(cls, None)}>{head}{body}</table>"
