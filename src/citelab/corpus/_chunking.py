"""Chunking: split each translation into passages with stable ids and code-point offsets.

A chunk is a span ``[start, end)`` of one translation's ``content`` (Python string indices,
i.e. Unicode code points), so ``chunk.text == content[start:end]`` always holds. Spans follow
the text's own structure: paragraphs (separated by a blank line) are packed greedily up to
``max_chars``; a paragraph longer than that is cut into sentences, and a sentence longer than
that at the last whitespace that fits (never between a character and its combining marks).
Spans are trimmed of surrounding whitespace and never overlap.

Chunk ids are ``<entity_type>/<entity_id>:<langcode>:<ordinal>`` (e.g. ``node/5:en:0``): they
depend only on the document itself and the chunking parameters, never on other documents or
on the order of the corpus. A translation with blank content still gets one empty chunk
``[0, 0)`` so that an entity known only by its title and fields can be found and cited.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from citelab.corpus._corpus import Corpus
from citelab.corpus._model import Document

__all__ = [
    "CHUNKING_VERSION",
    "Chunk",
    "ChunkingParams",
    "chunk_document",
    "chunk_id",
    "chunk_spans",
    "iter_chunks",
]

#: Bump whenever the splitting rules change: persisted indexes built by older rules are rebuilt.
CHUNKING_VERSION = 1

# Separators: the named group ``gap`` is what lies between two pieces.
_PARAGRAPH_BREAK = re.compile(r"(?P<gap>\n[^\S\n]*\n\s*)")
# A sentence ends at . ! ? … (and any closing quotes or brackets) before whitespace.
_SENTENCE_END = re.compile(r"[.!?…][\"'”’»)\]]*(?P<gap>\s+)")


class ChunkingParams(BaseModel):
    """How documents are cut into chunks; part of a persisted index's identity."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_chars: int = Field(default=800, ge=8, le=100_000)
    """Longest chunk, in code points."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One passage of one translation of a document."""

    entity_type: str
    entity_id: str
    langcode: str
    chunk_id: str
    start: int
    end: int
    text: str

    @property
    def uri(self) -> str:
        return f"entity:{self.entity_type}/{self.entity_id}"


def chunk_id(entity_type: str, entity_id: str, langcode: str, ordinal: int) -> str:
    """The stable id of the ``ordinal``-th chunk of a translation."""
    return f"{entity_type}/{entity_id}:{langcode}:{ordinal}"


def chunk_spans(content: str, max_chars: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``content``'s chunks; ``[(0, 0)]`` for blank content."""
    spans: list[tuple[int, int]] = []
    for start, end in _pieces(content, max_chars):
        if spans and end - spans[-1][0] <= max_chars:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans or [(0, 0)]


def chunk_document(document: Document, params: ChunkingParams | None = None) -> list[Chunk]:
    """Every chunk of every translation of ``document``, translations in their stored order."""
    max_chars = (params or ChunkingParams()).max_chars
    chunks: list[Chunk] = []
    for langcode, translation in document.translations.items():
        content = translation.content
        for ordinal, (start, end) in enumerate(chunk_spans(content, max_chars)):
            chunks.append(
                Chunk(
                    entity_type=document.entity_type,
                    entity_id=document.entity_id,
                    langcode=langcode,
                    chunk_id=chunk_id(document.entity_type, document.entity_id, langcode, ordinal),
                    start=start,
                    end=end,
                    text=content[start:end],
                )
            )
    return chunks


def iter_chunks(corpus: Corpus, params: ChunkingParams | None = None) -> Iterator[Chunk]:
    """Every chunk of the corpus, documents in corpus order."""
    for document in corpus:
        yield from chunk_document(document, params)


def _pieces(content: str, max_chars: int) -> Iterator[tuple[int, int]]:
    """Trimmed spans no longer than ``max_chars``: paragraphs, else sentences, else cuts."""
    for start, end in _split(content, 0, len(content), _PARAGRAPH_BREAK):
        if end - start <= max_chars:
            yield start, end
            continue
        for s_start, s_end in _split(content, start, end, _SENTENCE_END):
            yield from _cut(content, s_start, s_end, max_chars)


def _split(
    content: str, start: int, end: int, separator: re.Pattern[str]
) -> Iterator[tuple[int, int]]:
    """The trimmed, non-empty spans of ``content[start:end]`` between matches of ``separator``."""
    cursor = start
    for match in separator.finditer(content, start, end):
        yield from _trimmed(content, cursor, match.start("gap"))
        cursor = match.end("gap")
    yield from _trimmed(content, cursor, end)


def _trimmed(content: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    while start < end and content[start].isspace():
        start += 1
    while end > start and content[end - 1].isspace():
        end -= 1
    if start < end:
        yield start, end


def _cut(content: str, start: int, end: int, max_chars: int) -> Iterator[tuple[int, int]]:
    """Cut an over-long sentence at whitespace, or hard at ``max_chars`` when there is none."""
    while end - start > max_chars:
        limit = start + max_chars
        cut = _last_space(content, start, limit)
        if cut is None:
            cut = _hard_cut(content, start, limit)
        yield from _trimmed(content, start, cut)
        start = cut
        while start < end and content[start].isspace():
            start += 1
    yield from _trimmed(content, start, end)


def _last_space(content: str, start: int, limit: int) -> int | None:
    """The last whitespace position in ``(start, limit]``, if any."""
    for position in range(limit, start, -1):
        if content[position].isspace():
            return position
    return None


def _hard_cut(content: str, start: int, limit: int) -> int:
    # Keep a base character together with the combining marks that follow it.
    cut = limit
    while cut > start + 1 and unicodedata.combining(content[cut]):
        cut -= 1
    return cut if cut > start + 1 else limit
