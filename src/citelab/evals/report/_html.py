"""The report's one escaping helper and its small table builder.

Every text that reaches the report's HTML (model output, titles, URIs, variant names) goes
through :func:`escape`; markup the caller built itself is wrapped in :class:`Safe` so the
builder leaves it alone. To add a table, call :func:`table` with the header texts and one
sequence of cells per row: a cell is a plain value (escaped), a :class:`Safe` string
(inserted as it is), or a :class:`Cell` when it needs a ``class``, a ``title`` (both
escaped too), a ``colspan`` or to be a row's ``<th>``; a row is a sequence of cells, or a
:class:`Row` when it needs a ``class``; e.g.
``table(["fault", "turns"], [[name, Cell(count, cls="num")]])``. Nothing
is escaped twice and nothing unescaped slips in unless someone wrote ``Safe`` on purpose,
which is the line a reviewer checks.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Cell", "Row", "Safe", "cell", "escape", "row", "table"]


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
    """A ``<th>`` (a row's label) instead of a ``<td>``; a header row's cells are always."""
    colspan: int | None = None
    """How many columns the cell spans."""


@dataclass(frozen=True)
class Row:
    """A table row with a ``class`` (escaped); ``cells`` as :func:`row` takes them."""

    cells: Sequence[object]
    cls: str | None = None


def _attributes(cls: str | None, title: str | None, colspan: int | None = None) -> str:
    out = "" if colspan is None else f' colspan="{int(colspan)}"'
    out += "" if cls is None else f' class="{escape(cls)}"'
    return out if title is None else f'{out} title="{escape(title)}"'


def cell(value: object, *, header: bool = False) -> str:
    """One ``<td>`` (or ``<th>``) of ``value``, a plain value or a :class:`Cell`."""
    if not isinstance(value, Cell):
        value = Cell(value, header=header)
    tag = "th" if value.header or header else "td"
    attributes = _attributes(value.cls, value.title, value.colspan)
    return f"<{tag}{attributes}>{escape(value.content)}</{tag}>"


def row(cells: Iterable[object] | Row, *, header: bool = False) -> str:
    """One ``<tr>`` of ``cells`` (a :class:`Row` gives it its class)."""
    if isinstance(cells, Row):
        cls, cells = cells.cls, cells.cells
    else:
        cls = None
    return (
        f"<tr{_attributes(cls, None)}>" + "".join(cell(c, header=header) for c in cells) + "</tr>"
    )


def table(
    headers: Sequence[object],
    rows: Iterable[Iterable[object] | Row],
    *,
    cls: str | None = None,
) -> str:
    """A ``<table>``: one header row (omitted when ``headers`` is empty), then the rows."""
    head = row(headers, header=True) if headers else ""
    body = "".join(row(cells) for cells in rows)
    return f"<table{_attributes(cls, None)}>{head}{body}</table>"
