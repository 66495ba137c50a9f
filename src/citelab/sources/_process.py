"""Turn tool output into sources: the seed's "source processing", step by named step.

Retrieved (``rag_search``) rows::

    score gate → rerank (optional) → max_results → entity cap → references

Listed rows (a configured source tool) are complete by design: no gate, no rerank; only the
tool's own ``max_results`` applies. Both paths end in :func:`_references`, which makes one
source per entity (its chunks combined in retrieval order), re-checks access for the reader,
picks the language, and renders the content in the settings' view mode.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from citelab._errors import ConfigError, InvalidInput
from citelab.corpus import Corpus, Document, Reader, Translation
from citelab.sources._render import render_content
from citelab.sources._rerank import Reranker, get_reranker
from citelab.sources._rows import Row, parse_listed_output, parse_rag_rows
from citelab.sources._source import RetrievalSettings, Source, ViewMode

__all__ = ["listed_summary", "process_listed", "process_results"]

_log = logging.getLogger(__name__)


def process_results(
    rows: Sequence[Mapping[str, Any]],
    settings: RetrievalSettings,
    reader: Reader,
    *,
    corpus: Corpus | None = None,
    query: str | None = None,
    reranker: Reranker | None = None,
    tool: str = "rag_search",
) -> list[Source]:
    """Sources from rag_search rows, one per entity, unnumbered, in ranking order.

    ``reranker`` overrides ``settings.reranker``; reranking needs ``query``. Without a
    ``corpus`` nothing can be re-checked: the tool's own access filtering is then the only one,
    and titles, urls and languages are the rows' own.
    """
    parsed = parse_rag_rows(rows)
    gated = _score_gate(parsed, settings.threshold)
    ranked = _rerank(gated, _reranker(settings, reranker), query, tool)
    capped = _entity_cap(ranked[: settings.max_results], settings.entity_cap)
    return _references(capped, settings.view_mode, reader, corpus, tool)


def process_listed(
    output: Mapping[str, Any],
    settings: RetrievalSettings,
    reader: Reader,
    *,
    corpus: Corpus | None = None,
    tool: str = "source_tool",
    max_results: int | None = None,
) -> list[Source]:
    """Sources from a listing tool's output (either row shape), in the tool's order.

    A row without content becomes one line, its label in the reader's language followed by its
    other field values. ``max_results`` is the tool's own cap, counted in readable entities.
    """
    if max_results is not None and max_results < 1:
        raise InvalidInput(f"max_results must be at least 1, got {max_results}")
    rows, _summary = parse_listed_output(output)
    sources = _references(rows, settings.view_mode, reader, corpus, tool)
    return sources if max_results is None else sources[:max_results]


def listed_summary(output: Mapping[str, Any]) -> str | None:
    """The listing tool's own summary message, kept above the numbered sources."""
    return parse_listed_output(output)[1]


def _score_gate(rows: list[Row], threshold: float | None) -> list[Row]:
    if threshold is None:
        return rows
    return [row for row in rows if row.score is not None and row.score >= threshold]


def _reranker(settings: RetrievalSettings, given: Reranker | None) -> Reranker | None:
    if given is not None:
        return given
    if not settings.reranker:
        return None
    try:
        return get_reranker(settings.reranker)
    except ConfigError as exc:
        raise ConfigError(f"retrieval setting reranker: {exc}") from exc


def _rerank(rows: list[Row], reranker: Reranker | None, query: str | None, tool: str) -> list[Row]:
    if reranker is None or not rows:
        return rows
    if query is None:
        raise InvalidInput("reranking needs the query: pass query=... to process_results")
    candidates = [_chunk_source(row, tool) for row in rows]
    row_of = {id(source): row for source, row in zip(candidates, rows, strict=True)}
    reordered = reranker.rerank(query, candidates)
    unknown = [source.uri for source in reordered if id(source) not in row_of]
    if unknown:
        raise InvalidInput(
            f"reranker {type(reranker).__name__} returned sources it was not given: {unknown[:3]}"
        )
    return [row_of[id(source)] for source in reordered]


def _chunk_source(row: Row, tool: str) -> Source:
    """One chunk as a source, the unit a reranker orders."""
    return Source(
        entity_type=row.entity_type,
        entity_id=row.entity_id,
        title=row.label or "",
        url=row.url,
        langcode=row.langcode,
        content=row.content,
        score=row.score,
        fields=row.fields,
        tool=tool,
        chunk_ids=() if row.chunk_id is None else (row.chunk_id,),
    )


def _entity_cap(rows: list[Row], cap: int | None) -> list[Row]:
    """Keep chunks of the first ``cap`` entities; skip (never stop at) chunks of later ones."""
    if cap is None:
        return rows
    admitted: set[tuple[str, str]] = set()
    kept = []
    for row in rows:
        if row.key not in admitted:
            if len(admitted) >= cap:
                continue
            admitted.add(row.key)
        kept.append(row)
    return kept


def _references(
    rows: list[Row], view_mode: ViewMode, reader: Reader, corpus: Corpus | None, tool: str
) -> list[Source]:
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault(row.key, []).append(row)
    sources = []
    for key, chunks in groups.items():
        document = corpus.get(*key) if corpus is not None else None
        if corpus is not None and not _may_read(document, reader, key):
            continue
        sources.append(_reference(_distinct(chunks), document, view_mode, reader, tool))
    return sources


def _may_read(document: Document | None, reader: Reader, key: tuple[str, str]) -> bool:
    if document is None:
        # Not in the corpus: its access rules cannot be checked, so it is not shown.
        _log.warning("dropping %s/%s: not in the corpus, access cannot be checked", *key)
        return False
    return document.readable_by(reader)


def _distinct(chunks: list[Row]) -> list[Row]:
    """The entity's chunks without repeats (same chunk id, or same text when ids are absent)."""
    seen: set[str] = set()
    kept = []
    for chunk in chunks:
        identity = f"id:{chunk.chunk_id}" if chunk.chunk_id is not None else f"text:{chunk.content}"
        if identity not in seen:
            seen.add(identity)
            kept.append(chunk)
    return kept


def _reference(
    chunks: list[Row], document: Document | None, view_mode: ViewMode, reader: Reader, tool: str
) -> Source:
    first = chunks[0]
    fields = _row_fields(chunks) or (dict(document.fields) if document is not None else {})
    scores = [chunk.score for chunk in chunks if chunk.score is not None]
    langcode: str | None
    if document is not None:
        langcode, translation = _language(document, reader.langcode, first.langcode)
        title, url, body = translation.title, translation.url, translation.content
    else:
        langcode, body = first.langcode, None
        title = first.label or f"{first.entity_type} {first.entity_id}"
        url = next((chunk.url for chunk in chunks if chunk.url), None)
    passage = first.content.strip() or None
    start = body.find(passage) if body and passage else -1
    return Source(
        entity_type=first.entity_type,
        entity_id=first.entity_id,
        title=title,
        url=url,
        langcode=langcode,
        content=render_content(
            view_mode,
            chunks=[chunk.content for chunk in chunks],
            label=title,
            fields=fields,
            body=body,
        ),
        score=max(scores) if scores else None,
        fields=fields,
        tool=tool,
        chunk_ids=tuple(chunk.chunk_id for chunk in chunks if chunk.chunk_id is not None),
        passage=passage,
        passage_start=start if start >= 0 else None,
        passage_end=start + len(passage) if start >= 0 and passage else None,
        restricted=document is not None and not document.access.public,
    )


def _language(document: Document, preferred: str, retrieved: str | None) -> tuple[str, Translation]:
    """The reader's language when the entity has it, else the language it was retrieved in.

    ``Document.translation`` alone would fall back to the *default* language, which can differ
    from the retrieved one; the seed keeps the retrieved language.
    """
    for langcode in (preferred, retrieved):
        if langcode is not None and langcode in document.translations:
            return langcode, document.translations[langcode]
    return document.translation(None)


def _row_fields(chunks: list[Row]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for chunk in chunks:
        for name, value in chunk.fields.items():
            fields.setdefault(name, value)
    return fields
