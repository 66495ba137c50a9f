"""Cohere Chat v2: ``message.citations``.

A Cohere v2 assistant message is ``{"role": "assistant", "content": [{"type": "text",
"text"}], "citations": [{"start", "end", "text", "sources": [...], "type":
"TEXT_CONTENT"}]}``: ``start``/``end`` index the text (read as code points, end exclusive),
and one citation may name several sources, each ``{"type": "document", "id", "document":
{...}}`` or ``{"type": "tool", "id", "tool_output": {...}}``. A source's uri is its
document's ``url`` (or ``uri``) when it has one, else its ``id``; :func:`to_cohere` writes the
uri as ``id`` and, for http(s) uris, as ``document.url`` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from citelab._errors import InvalidInput
from citelab.contract._message import AnswerMessage, build_message
from citelab.contract.convert._common import (
    Losses,
    SourceBook,
    anchor_for,
    group_by_span,
    mapping_items,
    parse_foreign,
)

__all__ = ["COHERE_LOSSES", "from_cohere", "to_cohere"]

COHERE_LOSSES = Losses(
    to_target=(
        "source descriptions, priorities and uncited sources",
        "suggested replies",
    ),
    from_target=(
        "document and tool-output contents (snippets, text, fields other than url/title)",
        "citations of type PLAN or THINKING_CONTENT (they cite the plan, not the answer)",
        "the order of uncited sources: sources are listed in first-citation order",
        "thinking blocks (content_index still counts them, as Cohere does)",
    ),
)


class _Source(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str = "document"
    id: str | None = None
    document: dict[str, Any] | None = None
    tool_output: dict[str, Any] | None = None


class _Citation(BaseModel):
    model_config = ConfigDict(extra="ignore")

    start: int
    end: int
    text: str | None = None
    sources: list[_Source] = []
    type: str | None = "TEXT_CONTENT"
    content_index: int | None = None


class _TextItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str
    text: str | None = None


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")

    content: list[_TextItem] | str | None = None
    citations: list[_Citation] | None = None


def to_cohere(message: AnswerMessage) -> dict[str, Any]:
    """The answer as a Cohere v2 assistant message with ``citations``."""
    text = message.text
    titles = {source.uri: source.title or source.name for source in message.sources}
    citations = [
        {
            "start": start,
            "end": end,
            "text": text[start:end],
            "sources": [_source(uri, titles[uri]) for uri in uris],
            "type": "TEXT_CONTENT",
        }
        for start, end, uris in group_by_span(message)
    ]
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "citations": citations,
    }


def _source(uri: str, title: str) -> dict[str, Any]:
    document: dict[str, Any] = {"id": uri, "title": title}
    if uri.startswith(("http://", "https://")):
        document["url"] = uri
    return {"type": "document", "id": uri, "document": document}


def from_cohere(data: object, *, sources: Sequence[object] | None = None) -> AnswerMessage:
    """Read a Cohere v2 assistant message, or a chat response (its ``message``)."""
    item = mapping_items(data)
    if "message" in item:
        item = mapping_items(item["message"])
    message = parse_foreign(_Message, item, "Cohere v2 assistant message")
    starts, text = _text_starts(message)
    book = SourceBook(sources)
    anchors = []
    for index, citation in enumerate(message.citations or []):
        if citation.type not in (None, "TEXT_CONTENT"):
            continue
        offset = _offset(starts, citation.content_index, index)
        for source in citation.sources:
            uri = book.cite(*_source_identity(source, index))
            where = f"citations[{index}]"
            start, end = offset + citation.start, offset + citation.end
            anchors.append(anchor_for(text, uri, start, end, where))
    return build_message(text, book.items, anchors=anchors)


def _text_starts(message: _Message) -> tuple[dict[int, int], str]:
    """Where each text block starts in the joined text, by its index among *all* content
    blocks (Cohere's ``content_index`` counts thinking blocks too), and the joined text."""
    if isinstance(message.content, str):
        return {0: 0}, message.content
    starts: dict[int, int] = {}
    text = ""
    for index, item in enumerate(message.content or []):
        if item.type == "text":
            starts[index] = len(text)
            text += item.text or ""
    return starts, text


def _offset(starts: dict[int, int], content_index: int | None, citation: int) -> int:
    if content_index is None or (content_index == 0 and not starts):
        return min(starts.values(), default=0)  # no index: the first text block
    if content_index not in starts:
        raise InvalidInput(
            f"citations[{citation}]: content_index {content_index} names no text item"
        )
    return starts[content_index]


def _source_identity(source: _Source, citation: int) -> tuple[str, str | None]:
    fields = source.document or source.tool_output or {}
    uri = fields.get("url") or fields.get("uri") or source.id or fields.get("id")
    if not isinstance(uri, str) or not uri:
        raise InvalidInput(f"citations[{citation}]: a source has no id, url or uri")
    title = fields.get("title")
    return uri, title if isinstance(title, str) else None
