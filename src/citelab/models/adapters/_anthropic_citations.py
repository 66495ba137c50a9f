"""Anthropic's Citations API on ``serve-model``'s ``/v1/messages``: documents in, cited text out.

A request's ``document`` blocks with a ``text`` source (``media_type`` ``text/plain``) or a
``content`` source (a list of text blocks, or one string) are numbered in request order, as
the API numbers them (``document_index`` 0, 1, …), and shown to the model in the user turn as
Anthropic's long-context documents, ``<document index="i+1"><source>title</source>
<document_content>text</document_content></document>``, which citelab's offline model reads
and cites as ``[i+1]`` (a content document's blocks are joined by line breaks, so a sentence
never spans two blocks). ``context`` is shown to no one: the API passes it to the model but
never cites it, and the offline model would quote it. PDF, image and file sources cannot be
read here (no text): they are a 400, as a source type the server does not know would be.

As in the API, citations are enabled on all documents of a request or on none (mixing is a
400). With citations, the answer's ``[n]`` markers become citations and leave the text: each
claim (the text before a chain of markers, with the punctuation right after it) is a ``text``
block whose ``citations`` name document ``n - 1`` by the part of it the claim rests on
(:func:`citelab.sources.supporting_span`: for the offline model, the very sentence it quoted):

* a plain-text document: ``char_location`` with ``start_char_index``/``end_char_index`` into
  the document's text and ``cited_text`` that slice;
* a content document: ``content_block_location`` with the block range holding that span and
  ``cited_text`` those blocks' text joined, as the API writes it.

The text between claims starts the next block (no block is empty or white space only); a
marker naming no document is dropped. Without citations the markers are dropped and the
text is one block. Streamed, each block is ``content_block_start`` (a text block with
``citations: []`` when cited), one ``citations_delta`` per citation, then its text as
``text_delta`` events, then ``content_block_stop``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from citelab._errors import InvalidInput
from citelab.sources import Marker, parse_markers, supporting_span

__all__ = [
    "RequestDocument",
    "check_citation_settings",
    "cited_blocks",
    "document_prompt",
    "read_document",
]

_CLAIM_END = ".!?;:"


@dataclass(frozen=True)
class RequestDocument:
    """A ``document`` block of a Messages request, as the server reads it."""

    index: int
    """Its ``document_index``: its position among the request's documents."""
    title: str | None
    """The block's ``title``."""
    blocks: tuple[str, ...] | None
    """A content document's text blocks; ``None`` for a plain-text document."""
    text: str
    """The plain text, or the blocks joined by line breaks."""
    citations: bool
    """Whether the block enables citations (``citations: {enabled: true}``)."""


def read_document(block: dict[str, Any], index: int, where: str) -> RequestDocument:
    """The document block ``block`` (the request's ``index``-th), or :class:`InvalidInput`
    saying what is wrong at ``where``."""
    source = block.get("source")
    if not isinstance(source, dict):
        raise InvalidInput(f"{where}.source: a document needs a source object")
    kind = source.get("type")
    if kind == "text":
        data = source.get("data")
        if not isinstance(data, str):
            raise InvalidInput(f"{where}.source.data: a text source needs its text as a string")
        blocks: tuple[str, ...] | None = None
        text = data
    elif kind == "content":
        blocks = _content_blocks(source.get("content"), f"{where}.source.content")
        text = "\n".join(blocks)
    else:
        raise InvalidInput(
            f"{where}.source.type: {kind!r} documents cannot be read by this server (it reads "
            "'text' and 'content' sources)"
        )
    title = block.get("title")
    settings = block.get("citations")
    enabled = isinstance(settings, dict) and settings.get("enabled") is True
    return RequestDocument(index, title if isinstance(title, str) else None, blocks, text, enabled)


def _content_blocks(content: Any, where: str) -> tuple[str, ...]:
    if isinstance(content, str):
        return (content,)
    if not isinstance(content, list) or not content:
        raise InvalidInput(f"{where}: must be a string or a non-empty list of text blocks")
    texts = []
    for position, item in enumerate(content):
        if not isinstance(item, dict) or item.get("type") != "text":
            raise InvalidInput(f"{where}.{position}: only text blocks can be read here")
        texts.append(str(item.get("text", "")))
    return tuple(texts)


def document_prompt(document: RequestDocument) -> str:
    """The document as the model reads it (Anthropic's long-context document shape)."""
    title = escape(document.title or f"Document {document.index + 1}", quote=False)
    body = escape(document.text, quote=False)
    return (
        f'<document index="{document.index + 1}"><source>{title}</source>'
        f"<document_content>{body}</document_content></document>"
    )


def check_citation_settings(documents: Sequence[RequestDocument]) -> None:
    """Citations on all documents or on none, as the API requires."""
    enabled = {document.citations for document in documents}
    if len(enabled) > 1:
        raise InvalidInput("citations must be enabled on all or none of the documents")


def cited_blocks(text: str, documents: Sequence[RequestDocument]) -> list[dict[str, Any]]:
    """The answer ``text`` as Messages ``text`` blocks (see the module docs)."""
    chains = _chains(parse_markers(text))
    if not any(document.citations for document in documents):
        plain = _without_markers(text, chains)
        return [{"type": "text", "text": plain}] if plain.strip() else []
    pieces: list[tuple[str, list[dict[str, Any]]]] = []
    position = 0
    for chain in chains:
        end = chain[-1].end
        if end < len(text) and text[end] in _CLAIM_END:
            end += 1
        claim = text[position : chain[0].start].rstrip(" \t") + text[chain[-1].end : end]
        numbers = dict.fromkeys(n for marker in chain for n in marker.numbers)
        cited = [documents[n - 1] for n in numbers if 0 < n <= len(documents)]
        pieces.append((claim, [_citation(claim, document) for document in cited]))
        position = end
    pieces.append((text[position:], []))
    return _blocks(pieces)


def _blocks(pieces: list[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """One block per piece; white space alone starts the next block instead (the API takes
    no block that is empty or white space only), or ends the last one."""
    blocks: list[dict[str, Any]] = []
    carried = ""
    for piece, citations in pieces:
        text = carried + piece
        carried = ""
        if not text.strip():
            carried = text
            continue
        block: dict[str, Any] = {"type": "text", "text": text}
        if citations:
            block["citations"] = citations
        blocks.append(block)
    if carried and blocks:
        blocks[-1]["text"] += carried
    return blocks


def _citation(claim: str, document: RequestDocument) -> dict[str, Any]:
    start, end = supporting_span(claim, document.text)
    if document.blocks is None:
        return {
            "type": "char_location",
            "cited_text": document.text[start:end],
            "document_index": document.index,
            "document_title": document.title,
            "start_char_index": start,
            "end_char_index": end,
        }
    first, last = _block_range(document.blocks, start, end)
    return {
        "type": "content_block_location",
        "cited_text": "".join(document.blocks[first:last]),
        "document_index": document.index,
        "document_title": document.title,
        "start_block_index": first,
        "end_block_index": last,
    }


def _block_range(blocks: Sequence[str], start: int, end: int) -> tuple[int, int]:
    """The first block and one past the last that the span ``start:end`` of the joined text
    (blocks joined by one line break) touches."""
    spans = []
    offset = 0
    for block in blocks:
        spans.append((offset, offset + len(block)))
        offset += len(block) + 1
    touched = [i for i, (left, right) in enumerate(spans) if left < end and start < right]
    if not touched:  # an empty span: the block it sits in
        touched = [max(i for i, (left, _) in enumerate(spans) if left <= start)]
    return touched[0], touched[-1] + 1


def _chains(markers: Iterable[Marker]) -> list[list[Marker]]:
    chains: list[list[Marker]] = []
    for marker in markers:
        if chains and _touching(chains[-1][-1], marker):
            chains[-1].append(marker)
        else:
            chains.append([marker])
    return chains


def _touching(before: Marker, after: Marker) -> bool:
    return before.end == after.start


def _without_markers(text: str, chains: list[list[Marker]]) -> str:
    parts = []
    position = 0
    for chain in chains:
        parts.append(text[position : chain[0].start].rstrip(" \t"))
        position = chain[-1].end
    parts.append(text[position:])
    return "".join(parts)
