"""A corpus at a glance: counts, languages, access rules and fields (``citelab corpus info``)."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict

from citelab.corpus._chunking import ChunkingParams, chunk_spans
from citelab.corpus._corpus import Corpus

__all__ = ["AccessSummary", "CorpusSummary", "summarize_corpus"]


class AccessSummary(BaseModel):
    """Who may read what."""

    model_config = ConfigDict(frozen=True)

    public: int
    """Entities anybody may read."""
    restricted: int
    """Entities readable only by listed users or roles."""
    users: list[str]
    """Every user named by an access rule, sorted."""
    roles: list[str]
    """Every role named by an access rule, sorted."""


class CorpusSummary(BaseModel):
    """Counts describing a corpus."""

    model_config = ConfigDict(frozen=True)

    name: str
    entities: int
    entity_types: dict[str, int]
    """Entities per entity type."""
    translations: int
    languages: dict[str, int]
    """Translations per langcode."""
    missing_translations: int
    """Entities lacking at least one of the corpus's languages."""
    empty_content: int
    """Translations whose content is blank (known only by title and fields)."""
    chunks: int
    """Chunks at the given chunking parameters."""
    max_chars: int
    fields: dict[str, int]
    """Entities per field name."""
    access: AccessSummary


def summarize_corpus(corpus: Corpus, params: ChunkingParams | None = None) -> CorpusSummary:
    """Count what is in ``corpus``; chunks are counted with ``params`` (default chunking)."""
    params = params or ChunkingParams()
    languages: Counter[str] = Counter()
    types: Counter[str] = Counter()
    fields: Counter[str] = Counter()
    chunks = empty = public = 0
    users: set[str] = set()
    roles: set[str] = set()
    for document in corpus:
        types[document.entity_type] += 1
        fields.update(list(document.fields))
        languages.update(list(document.translations))
        for translation in document.translations.values():
            empty += not translation.content.strip()
            chunks += len(chunk_spans(translation.content, params.max_chars))
        public += document.access.public
        users |= document.access.users
        roles |= document.access.roles
    all_languages = set(languages)
    missing = sum(1 for document in corpus if set(document.translations) != all_languages)
    return CorpusSummary(
        name=corpus.name,
        entities=len(corpus),
        entity_types=dict(sorted(types.items())),
        translations=sum(languages.values()),
        languages=dict(sorted(languages.items())),
        missing_translations=missing,
        empty_content=empty,
        chunks=chunks,
        max_chars=params.max_chars,
        fields=dict(sorted(fields.items())),
        access=AccessSummary(
            public=public,
            restricted=len(corpus) - public,
            users=sorted(users),
            roles=sorted(roles),
        ),
    )
