"""Anthropic Messages: text blocks carrying ``citations``.

Anthropic splits an answer into text blocks; a block with ``citations`` is a cited claim, and
each citation points into a *document* of the request by ``document_index``
(``char_location``, ``page_location``, ``content_block_location``) or at a search result
(``web_search_result_location`` by ``url``, ``search_result_location`` by ``source``). Its
``cited_text`` and location fields describe the *source* side; the contract's anchor is the
*answer* side (the block's span of the joined text), and the source side travels beside it in
the text block's ``_meta["citelab/source_quotes"]`` (:class:`~citelab.contract.SourceQuote`:
the quoted passage, with its character offsets for ``char_location``). So ``cited_text``
survives a round trip: :func:`from_anthropic` writes a quote per citation, and
:func:`to_anthropic` writes each anchor's quote back as ``cited_text`` and
``start_char_index``/``end_char_index``.

Document order is the request's: pass the request's documents as ``sources`` to
:func:`from_anthropic` so ``document_index`` resolves to their uris (otherwise a document is
``document:<index>``). The request's own ``document`` blocks are accepted as they are
(:func:`anthropic_document_source`: a ``url`` source is its url, any other is
``document:<index>``; the title is the block's). :func:`to_anthropic` writes
``document_index`` as the position in the message's source list, so giving
``message.sources`` back as ``sources`` round-trips.

Coverage round-trips: every source covers the same characters (white space aside) after
``from_anthropic(to_anthropic(message), sources=message.sources)``, and a position cited on
an OpenAI file (a ``file_citation`` carries a position, not a span) comes back as that
position.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from citelab._errors import InvalidInput
from citelab.contract._message import AnswerMessage, build_message
from citelab.contract._payloads import Anchor, SourceQuote
from citelab.contract.convert._common import (
    Losses,
    SourceBook,
    anchor_for,
    mapping_items,
    parse_foreign,
    plain_data,
    source_index,
)
from citelab.contract.convert._openai import OPENAI_FILE_SCHEME

__all__ = ["ANTHROPIC_LOSSES", "anthropic_document_source", "from_anthropic", "to_anthropic"]

ANTHROPIC_LOSSES = Losses(
    to_target=(
        "source uris (a citation carries only document_index and document_title)",
        "source descriptions and priorities (document order stands in for priority)",
        "uncited sources",
        "suggested replies",
        "overlapping anchors: the text is split at every anchor boundary, so an anchor that "
        "overlaps another comes back as one anchor per piece (each source covers the same "
        "characters as before)",
        "zero-width anchors and white space alone: the Messages API takes no empty or "
        "white-space-only text block, so a zero-width anchor's citation goes on the block "
        "before it (after it at the start of the text) and comes back spanning that block, "
        "except on an OpenAI file source (openai-file:), which comes back as the position "
        "after that block's last word; white space joins the block before it without its "
        "own citations, so a source's coverage is kept on every character but white space; "
        "an answer with no text but white space is no block",
        "the source-side passage of anchors without a citelab/source_quotes entry: cited_text "
        "is then written empty and the char_location indices as 0–0",
    ),
    from_target=(
        "the source-side location other than character offsets: page or block indices, "
        "search_result_index, encrypted_index (cited_text itself is kept as a source quote)",
        "non-text blocks (tool use, thinking, server tool results)",
        "the block structure itself: uncited blocks are joined into the one answer text",
    ),
)


class _Citation(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Literal[
        "char_location",
        "page_location",
        "content_block_location",
        "web_search_result_location",
        "search_result_location",
    ]
    cited_text: str | None = None
    document_index: int | None = None
    document_title: str | None = None
    start_char_index: int | None = None
    end_char_index: int | None = None
    url: str | None = None
    source: str | None = None
    title: str | None = None


class _TextBlock(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Literal["text"]
    text: str
    citations: list[_Citation] | None = None


def to_anthropic(message: AnswerMessage) -> list[dict[str, Any]]:
    """The answer as Anthropic ``text`` blocks, cited spans carrying ``char_location`` citations.

    No block is empty or white space only (the Messages API rejects those): a zero-width
    anchor's citation goes on the block before it (the one after it at the start of the
    text), and white space alone joins the block before it. An empty answer is no block.
    See :data:`ANTHROPIC_LOSSES`.
    """
    text = message.text
    anchors = message.anchors
    positions = source_index(message)
    titles = {source.uri: source.title or source.name for source in message.sources}
    quotes = {quote.anchor_index: quote for quote in message.source_quotes}
    blocks: list[dict[str, Any]] = []
    for piece, numbers in _joined_pieces(text, anchors):
        block: dict[str, Any] = {"type": "text", "text": piece}
        if numbers:
            block["citations"] = [
                _citation(positions, titles, anchors[n].source_uri, quotes.get(n)) for n in numbers
            ]
        blocks.append(block)
    return blocks


def _joined_pieces(text: str, anchors: Sequence[Anchor]) -> list[tuple[str, list[int]]]:
    """:func:`_pieces` as block texts: a piece that is empty or white space only joins the
    piece before it (or, at the start, the next one).

    A zero-width anchor's citation goes with it; a white-space piece's span citations do not
    (a block's citation covers the whole block, so they would spread over its words).
    """
    joined: list[tuple[str, list[int]]] = []
    pending: tuple[str, list[int]] = ("", [])
    for start, end, numbers in _pieces(text, anchors):
        piece = pending[0] + text[start:end]
        kept = numbers if piece.strip() or start == end else []  # see the docstring
        cited = _one_per_uri(anchors, [*pending[1], *kept])
        pending = ("", [])
        if piece.strip():
            joined.append((piece, cited))
        elif joined:
            last_text, last_cited = joined[-1]
            joined[-1] = (last_text + piece, _one_per_uri(anchors, [*last_cited, *cited]))
        else:
            pending = (piece, cited)
    return joined  # an answer of white space alone (and zero-width anchors): no block


def _citation(
    positions: dict[str, int], titles: dict[str, str], uri: str, quote: SourceQuote | None
) -> dict[str, Any]:
    if uri not in positions:
        raise InvalidInput(f"anchor cites {uri!r}, which is not a source")
    start = quote.start_index if quote is not None else None
    end = quote.end_index if quote is not None else None
    return {
        "type": "char_location",
        "cited_text": quote.text if quote is not None else "",
        "document_index": positions[uri],
        "document_title": titles[uri],
        "start_char_index": start or 0,
        "end_char_index": end or 0,
    }


def _pieces(text: str, anchors: Sequence[Anchor]) -> list[tuple[int, int, list[int]]]:
    """The text cut at every anchor boundary; each piece with the anchors covering it (by
    index, the first of each source uri).

    A zero-width anchor becomes an empty piece of its own at its position.
    """
    opening: dict[int, list[int]] = defaultdict(list)
    closing: dict[int, list[int]] = defaultdict(list)
    empty: dict[int, list[int]] = defaultdict(list)
    for number, anchor in enumerate(anchors):
        if anchor.start_index == anchor.end_index:
            empty[anchor.start_index].append(number)
        else:
            opening[anchor.start_index].append(number)
            closing[anchor.end_index].append(number)
    cuts = sorted({0, len(text), *opening, *closing, *empty})
    active: set[int] = set()
    pieces: list[tuple[int, int, list[int]]] = []
    for left, right in zip(cuts, [*cuts[1:], None], strict=True):
        active.difference_update(closing[left])
        active.update(opening[left])
        if empty[left]:
            pieces.append((left, left, _one_per_uri(anchors, empty[left])))
        if right is not None:
            pieces.append((left, right, _one_per_uri(anchors, sorted(active))))
    return pieces


def _one_per_uri(anchors: Sequence[Anchor], numbers: list[int]) -> list[int]:
    """The first of ``numbers`` for each source uri, in order."""
    first: dict[str, int] = {}
    for number in numbers:
        first.setdefault(anchors[number].source_uri, number)
    return list(first.values())


def from_anthropic(data: object, *, sources: Sequence[object] | None = None) -> AnswerMessage:
    """Read an Anthropic response (``{"content": [...]}``) or its list of content blocks.

    ``sources`` are the request's documents in order (any source item ``build_message``
    accepts), so ``document_index`` can name them. See :data:`ANTHROPIC_LOSSES`.
    """
    raw = plain_data(data)
    blocks = raw if isinstance(raw, list) else mapping_items(raw).get("content")
    if not isinstance(blocks, list):
        raise InvalidInput("an Anthropic response needs a 'content' list of blocks")
    book = SourceBook(_request_sources(sources))
    text, anchors, quotes = "", [], []
    for index, raw_block in enumerate(blocks):
        item = plain_data(raw_block)
        if not isinstance(item, dict) or item.get("type") != "text":
            continue  # tool use, thinking, server tool results: not answer text
        block = parse_foreign(_TextBlock, item, f"Anthropic text block (content[{index}])")
        start, text = len(text), text + block.text
        for citation in block.citations or []:
            uri = _citation_uri(book, citation, index)
            left, right = _cited_span(text, start, uri)
            anchors.append(anchor_for(text, uri, left, right, f"content[{index}]"))
            if citation.cited_text:
                quotes.append(_quote(citation, len(anchors) - 1, uri))
    return build_message(text, book.items, anchors=anchors, source_quotes=quotes)


def _cited_span(text: str, start: int, uri: str) -> tuple[int, int]:
    """The span a citation on the block ``text[start:]`` covers: the block, or for an OpenAI
    file (cited at a position) the position after the block's last word."""
    if not uri.startswith(OPENAI_FILE_SCHEME):
        return start, len(text)
    position = max(start, len(text.rstrip()))
    return position, position


def _quote(citation: _Citation, anchor: int, uri: str) -> SourceQuote:
    """The citation's source side; character offsets only for a ``char_location`` that
    gives a span (``0–0`` is how a passage without a location is written)."""
    start, end = citation.start_char_index, citation.end_char_index
    located = (
        citation.type == "char_location"
        and start is not None
        and end is not None
        and 0 <= start <= end
        and (start, end) != (0, 0)
    )
    return SourceQuote(
        anchor_index=anchor,
        source_uri=uri,
        text=citation.cited_text or "",
        start_index=start if located else None,
        end_index=end if located else None,
    )


def _citation_uri(book: SourceBook, citation: _Citation, block: int) -> str:
    if citation.type == "web_search_result_location" and citation.url:
        return book.cite(citation.url, citation.title)
    if citation.type == "search_result_location" and citation.source:
        return book.cite(citation.source, citation.title)
    index = citation.document_index
    if index is None or index < 0:
        raise InvalidInput(f"content[{block}]: a {citation.type} citation needs a document_index")
    return book.uri_at(index, f"document:{index}", citation.document_title)


def _request_sources(sources: Sequence[object] | None) -> list[object] | None:
    if sources is None:
        return None
    return [
        anthropic_document_source(item, index) if _is_document(item) else item
        for index, item in enumerate(sources)
    ]


def _is_document(item: object) -> bool:
    data = plain_data(item)
    return isinstance(data, dict) and data.get("type") == "document"


def anthropic_document_source(document: object, index: int) -> dict[str, Any]:
    """A request ``document`` block as a source: ``{"uri", "title", "content"}``.

    The uri is the document's url (a ``url`` source), else ``document:<index>`` (its
    position in the request); ``content`` is its text (``text`` and ``content`` sources;
    absent for PDFs and files).
    """
    data = mapping_items(document)
    source = data.get("source")
    source = source if isinstance(source, dict) else {}
    url = source.get("url")
    uri = url if source.get("type") == "url" and isinstance(url, str) and url else None
    title = data.get("title")
    out: dict[str, Any] = {
        "uri": uri or f"document:{index}",
        "title": title if isinstance(title, str) and title else None,
    }
    content = _document_text(source)
    if content is not None:
        out["content"] = content
    return out


def _document_text(source: dict[str, Any]) -> str | None:
    if source.get("type") == "text" and isinstance(source.get("data"), str):
        return str(source["data"])
    if source.get("type") == "content" and isinstance(source.get("content"), list):
        texts = [
            str(block.get("text", ""))
            for block in source["content"]
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        return "\n".join(texts)
    if source.get("type") == "content" and isinstance(source.get("content"), str):
        return str(source["content"])
    return None
