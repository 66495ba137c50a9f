"""Google Gemini: a candidate's ``groundingMetadata``.

A candidate is ``{"content": {"role": "model", "parts": [{"text"}...]}, "groundingMetadata":
{"groundingChunks": [{"web": {"uri", "title"}} | {"retrievedContext": {"uri", "title"}}],
"groundingSupports": [{"segment": {"partIndex", "startIndex", "endIndex", "text"},
"groundingChunkIndices": [...], "confidenceScores": [...]}]}}``. Segment offsets are **UTF-8
bytes** into the part, end exclusive; a zero ``startIndex``/``partIndex`` may be omitted (JSON
of proto3 defaults). An offset inside a multi-byte character is an ``InvalidInput``.
Both the REST spelling (camelCase) and the Python SDK's (snake_case) are read.

File Search grounding (``retrievedContext`` with ``title``, ``text`` and ``fileSearchStore``
but no ``uri``) names documents of a store, not pages: each becomes a source under a URI of
its own, stable across answers (the same store and document give the same URI)::

    gemini-file-search:<documentName>                    when the chunk names its document
    gemini-file-search:<fileSearchStore>/title/<title>   else (the title percent-encoded)

(:func:`file_search_uri`; without a store, ``gemini-file-search:title/<title>``). A chunk's
``text`` is kept: as the source's ``description`` (the passage a judge reads) and as the
source-side quote of every anchor it supports (``_meta["citelab/source_quotes"]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from citelab._errors import InvalidInput
from citelab.contract._message import AnswerMessage, build_message
from citelab.contract._offsets import TextOffsets
from citelab.contract._payloads import Anchor, SourceQuote
from citelab.contract.convert._common import (
    Losses,
    SourceBook,
    anchor_for,
    group_by_span,
    mapping_items,
    parse_foreign,
    source_index,
)

__all__ = ["FILE_SEARCH_SCHEME", "GEMINI_LOSSES", "file_search_uri", "from_gemini", "to_gemini"]

FILE_SEARCH_SCHEME = "gemini-file-search"
"""The URI scheme of File Search documents (chunks without a uri of their own)."""

GEMINI_LOSSES = Losses(
    to_target=(
        "source descriptions and priorities (chunk order stands in for priority)",
        "suggested replies",
        "zero-width anchors (a segment must cover text)",
    ),
    from_target=(
        "confidenceScores, webSearchQueries, searchEntryPoint, retrievalMetadata",
        "web domains, and a retrieved chunk's page number, custom metadata and ragChunk",
        "the part structure (all answer text parts are joined)",
        "thought parts (thought: true): they are not answer text, and supports inside them "
        "are dropped",
        "grounding chunks with neither a uri nor a File Search store, document or title (maps "
        "and image chunks): they are not sources, and their support indices are dropped",
        "File Search's own document identity when a chunk names no documentName: its "
        "gemini-file-search: URI is made from the store and the title (two documents of one "
        "store with one title become one source)",
        "citationMetadata (recitation citations of training data, not grounding sources)",
    ),
)


def _field(snake: str, camel: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(camel, snake))


class _Segment(BaseModel):
    model_config = ConfigDict(extra="ignore")

    part_index: int | None = _field("part_index", "partIndex")
    start_index: int | None = _field("start_index", "startIndex")
    end_index: int | None = _field("end_index", "endIndex")


class _Support(BaseModel):
    model_config = ConfigDict(extra="ignore")

    segment: _Segment | None = None
    grounding_chunk_indices: list[int] | None = _field(
        "grounding_chunk_indices", "groundingChunkIndices"
    )


class _ChunkRef(BaseModel):
    model_config = ConfigDict(extra="ignore")

    uri: str | None = None
    title: str | None = None
    text: str | None = None
    file_search_store: str | None = _field("file_search_store", "fileSearchStore")
    document_name: str | None = _field("document_name", "documentName")


class _Chunk(BaseModel):
    model_config = ConfigDict(extra="allow")

    web: _ChunkRef | None = None
    retrieved_context: _ChunkRef | None = _field("retrieved_context", "retrievedContext")


class _Metadata(BaseModel):
    model_config = ConfigDict(extra="ignore")

    grounding_chunks: list[_Chunk] | None = _field("grounding_chunks", "groundingChunks")
    grounding_supports: list[_Support] | None = _field("grounding_supports", "groundingSupports")


def to_gemini(message: AnswerMessage) -> dict[str, Any]:
    """The answer as a Gemini candidate: one text part and ``groundingMetadata``."""
    text = message.text
    offsets = TextOffsets(text)
    positions = source_index(message)
    chunks = [
        _chunk(source.uri, source.title or source.name, source.description)
        for source in message.sources
    ]
    supports = [
        {
            "segment": {
                "startIndex": offsets.codepoint_to_utf8(start),
                "endIndex": offsets.codepoint_to_utf8(end),
                "text": text[start:end],
            },
            "groundingChunkIndices": [positions[uri] for uri in uris],
        }
        for start, end, uris in group_by_span(message)
        if end > start
    ]
    return {
        "content": {"role": "model", "parts": [{"text": text}]},
        "groundingMetadata": {"groundingChunks": chunks, "groundingSupports": supports},
    }


def _chunk(uri: str, title: str, text: str | None) -> dict[str, Any]:
    if uri.startswith(("http://", "https://")):
        return {"web": {"uri": uri, "title": title}}
    context = {"uri": uri, "title": title}
    if text:
        context["text"] = text
    return {"retrievedContext": context}


def file_search_uri(
    store: str | None, title: str | None, document: str | None = None
) -> str | None:
    """The URI of a File Search document (see the module docs); ``None`` without a
    document name and a title."""
    if document:
        name = (
            document
            if document.startswith("fileSearchStores/") or not store
            else (f"{store}/documents/{document}")
        )
        return f"{FILE_SEARCH_SCHEME}:{quote(name, safe='/')}"
    if title:
        base = f"{quote(store, safe='/')}/" if store else ""
        return f"{FILE_SEARCH_SCHEME}:{base}title/{quote(title, safe='')}"
    return None


def from_gemini(
    data: object,
    *,
    sources: Sequence[object] | None = None,
    dropped: list[str] | None = None,
) -> AnswerMessage:
    """Read a Gemini candidate, or a response (its first candidate).

    Every grounding chunk with a uri becomes a source, in chunk order (after any given
    ``sources``). What cannot be read as the contract is left out, not refused (see
    :data:`GEMINI_LOSSES`); pass a list as ``dropped`` to be told, one line per thing left
    out (a chunk without uri, a support inside a thought part, citationMetadata).
    """
    report: list[str] = dropped if dropped is not None else []
    candidate = mapping_items(data)
    if "candidates" in candidate:
        candidates = candidate["candidates"] or []
        if not candidates:
            raise InvalidInput("the Gemini response has no candidates")
        candidate = mapping_items(candidates[0])
    parts = _text_parts(candidate)
    raw_meta = candidate.get("groundingMetadata", candidate.get("grounding_metadata")) or {}
    metadata = parse_foreign(_Metadata, raw_meta, "Gemini groundingMetadata")
    if candidate.get("citationMetadata", candidate.get("citation_metadata")):
        report.append("citationMetadata: recitation citations are not grounding sources")
    book = SourceBook(sources)
    chunks = metadata.grounding_chunks or []
    chunk_uris = [_chunk_uri(book, chunk, i, report) for i, chunk in enumerate(chunks)]
    text = "".join(part or "" for part in parts)
    anchors: list[Anchor] = []
    quotes: list[SourceQuote] = []
    for index, support in enumerate(metadata.grounding_supports or []):
        span = _segment_span(parts, support.segment, index)
        if span is None:
            report.append(f"groundingSupports[{index}]: its segment is in a thought part")
            continue
        for chunk in support.grounding_chunk_indices or []:
            if not 0 <= chunk < len(chunk_uris):
                raise InvalidInput(f"groundingSupports[{index}]: no grounding chunk {chunk}")
            if chunk_uris[chunk] is None:
                continue
            where = f"groundingSupports[{index}]"
            anchors.append(anchor_for(text, str(chunk_uris[chunk]), *span, where))
            passage = _chunk_text(chunks[chunk])
            if passage:
                quotes.append(
                    SourceQuote(
                        anchor_index=len(anchors) - 1,
                        source_uri=str(chunk_uris[chunk]),
                        text=passage,
                    )
                )
    return build_message(text, book.items, anchors=anchors, source_quotes=quotes)


def _text_parts(candidate: dict[str, Any] | Any) -> list[str | None]:
    """Each part's answer text by part index; None for a thought part (not answer text)."""
    content = candidate.get("content") or {}
    parts = mapping_items(content).get("parts") or []
    texts: list[str | None] = []
    for part in parts:
        item = mapping_items(part)
        value = item.get("text")
        if item.get("thought") is True:
            texts.append(None)
        else:
            texts.append(value if isinstance(value, str) else "")
    return texts


def _chunk_text(chunk: _Chunk) -> str | None:
    context = chunk.retrieved_context
    return context.text if context is not None and chunk.web is None else None


def _chunk_uri(book: SourceBook, chunk: _Chunk, index: int, report: list[str]) -> str | None:
    ref = chunk.web or chunk.retrieved_context
    uri = ref.uri if ref is not None else None
    if ref is not None and not uri and ref is chunk.retrieved_context:
        uri = file_search_uri(ref.file_search_store, ref.title, ref.document_name)
    if ref is None or not uri:
        kinds = sorted(chunk.model_extra or {}) or ["an empty chunk"]
        kind = "retrievedContext without uri or title" if ref is not None else ", ".join(kinds)
        report.append(f"groundingChunks[{index}] ({kind}): no uri, so it is not a source")
        return None
    return book.cite(uri, ref.title, _chunk_text(chunk))


def _segment_span(
    parts: list[str | None], segment: _Segment | None, support: int
) -> tuple[int, int] | None:
    """The segment as code points of the joined answer text; None inside a thought part."""
    where = f"groundingSupports[{support}].segment"
    if segment is None or segment.end_index is None:
        raise InvalidInput(f"{where}: a segment needs an endIndex")
    part = segment.part_index or 0
    if not 0 <= part < len(parts):
        raise InvalidInput(f"{where}: partIndex {part} names no text part")
    text = parts[part]
    if text is None:
        return None
    offsets = TextOffsets(text)
    try:
        start = offsets.utf8_to_codepoint(segment.start_index or 0)
        end = offsets.utf8_to_codepoint(segment.end_index)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}") from exc
    base = sum(len(other or "") for other in parts[:part])
    return base + start, base + end
