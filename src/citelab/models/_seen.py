"""What numbered sources a model was shown, read back from the messages themselves.

A model sees sources in system, user and tool messages: citelab's ``<source number=..>``
blocks (in the system prompt, or in a tool message the agent rewrote), the other common
numbered shapes (``[n] Title``, ``Source n:``, ``<document index="n">``, Markdown lists, JSON
arrays; see :mod:`citelab.models._prompt_sources`), and raw tool output. A raw ``rag_search`` result
(``{"results": [...]}``, or a listing tool's ``{"outputs": {"results": [...]}}``) carries no
numbers, so it is numbered by position 1..n, as a naive model would read it. A later element
with the same number overrides an earlier one: the freshest view of a number wins.

A *view* maps numbers to sources. A *round* is one model call; the view of a past round is the
view of the messages before that round's assistant message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from citelab.models._prompt_sources import read_sources
from citelab.models._types import Message, message_text

__all__ = ["SeenSource", "View", "current_view", "round_views", "sources_in_message"]


@dataclass(frozen=True)
class SeenSource:
    """A source as the model saw it, under the number it saw."""

    number: int
    uri: str
    title: str
    content: str


View = dict[int, SeenSource]


def sources_in_message(message: Message) -> list[SeenSource]:
    """The numbered sources one message shows, in order (none for assistant messages)."""
    role = message["role"]
    if role not in ("system", "tool", "user"):
        return []
    text = message_text(message)
    if role == "tool" and "<source number=" not in text:
        raw = _raw_results(text)
        if raw:
            return raw
    found, _ = read_sources(text, strict=role == "user")
    return [SeenSource(s.number, s.uri, s.title, s.content) for s in found]


def current_view(messages: Sequence[Message]) -> View:
    """The numbers as they stand after every message."""
    view: View = {}
    for message in messages:
        for source in sources_in_message(message):
            view[source.number] = source
    return view


def round_views(messages: Sequence[Message]) -> list[View]:
    """The view each past round saw (one per assistant message), then the current view."""
    views: list[View] = []
    view: View = {}
    for message in messages:
        if message["role"] == "assistant":
            views.append(dict(view))
        for source in sources_in_message(message):
            view[source.number] = source
    views.append(view)
    return views


def _raw_results(text: str) -> list[SeenSource]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    rows = _result_rows(data)
    return [_row_source(position, row) for position, row in enumerate(rows, start=1)]


def _result_rows(data: Any) -> list[dict[str, Any]]:
    if not isinstance(data, dict):
        return []
    rows = data.get("results")
    outputs = data.get("outputs")
    if rows is None and isinstance(outputs, dict):
        rows = outputs.get("results")
    if not isinstance(rows, list):
        return []
    return [row for row in rows if isinstance(row, dict)]


def _row_source(position: int, row: dict[str, Any]) -> SeenSource:
    raw_metadata = row.get("_metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    entity_type = row.get("entity_type") or metadata.get("type")
    entity_id = row.get("entity_id") or metadata.get("id")
    if entity_type and entity_id:
        uri = f"entity:{entity_type}/{entity_id}"
    else:
        uri = str(row.get("uri") or row.get("url") or f"result:{position}")
    title = str(row.get("title") or row.get("label") or row.get("name") or uri)
    content = row.get("content")
    if not isinstance(content, str) or not content:
        content = _fields_line(row)
    return SeenSource(position, uri, title, content)


_BOOKKEEPING = frozenset({"entity_type", "entity_id", "langcode", "score", "uri", "url"})


def _fields_line(row: dict[str, Any]) -> str:
    """A row without content reads as its scalar field values on one line."""
    values = [
        str(value)
        for key, value in row.items()
        if key not in _BOOKKEEPING
        and not key.startswith("_")
        and isinstance(value, str | int | float)
        and value != ""
    ]
    return " · ".join(values)
