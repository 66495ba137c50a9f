"""A source the model can cite, the retrieval settings that shape sources, and the sources block.

A :class:`Source` is one entity (or, for non-entity sources, one URL or title) with the chunk
text the model reads. Its ``number`` is ``None`` until a merge strategy numbers it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citelab._errors import InvalidInput
from citelab._text import snippet
from citelab.events import Reference
from citelab.sources._block import NumberedSource, render_sources_block

__all__ = ["ReferenceKey", "RetrievalSettings", "Source", "ViewMode", "sources_block"]

ReferenceKey = tuple[str, str]
"""Identity of a source across rounds and turns: ``(entity_type, entity_id)`` for entities,
``("url:", url)`` or ``("title:", title)`` otherwise (a colon never occurs in an entity type,
so the fallbacks cannot collide with an entity)."""

ViewMode = Literal["chunk", "teaser", "full", "label"]
"""How a source's ``content`` is rendered for the model (see :class:`RetrievalSettings`)."""

_DETAIL_LENGTH = 40


class Source(BaseModel):
    """One citable source: an entity with the chunk text the model sees."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    number: int | None = Field(default=None, ge=1)
    """The citation number ``[n]``; ``None`` until a merge strategy numbers it."""
    entity_type: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+$")
    """Entity type, for corpus entities (set together with ``entity_id``)."""
    entity_id: str | None = None
    """Entity id, for corpus entities (set together with ``entity_type``)."""
    uri: str = ""
    """The resource_link URI; when empty it is derived: ``entity:<type>/<id>``, else the url,
    else ``urn:citelab:title:<quoted title>``."""
    title: str = ""
    """The label shown on the card, in ``langcode`` (untrusted: escape it)."""
    url: str | None = None
    """Where a reader opens the source (untrusted: check the scheme)."""
    langcode: str | None = None
    """Language of the title and url (the version cited)."""
    content: str = ""
    """The chunk text the model sees, rendered in the settings' view mode."""
    score: float | None = None
    """Best retrieval score among the source's chunks; ``None`` when the tool gave none."""
    fields: dict[str, Any] = Field(default_factory=dict)
    """Extra field values of the entity (e.g. degree, faculty)."""
    tool: str = "rag_search"
    """The tool that returned the source."""
    chunk_ids: tuple[str, ...] = ()
    """Ids of the retrieved chunks combined into ``content``, in retrieval order."""
    passage: str | None = None
    """The best retrieved chunk's text (the supporting passage); ``None`` without one."""
    passage_start: int | None = Field(default=None, ge=0)
    """Where ``passage`` starts in the source's text (the ``langcode`` translation's
    content), in code points; ``None`` when unknown."""
    passage_end: int | None = Field(default=None, ge=0)
    """Where ``passage`` ends in the source's text (code points, exclusive)."""
    restricted: bool = False
    """True when access rules apply to the source (its document is not public)."""

    @model_validator(mode="before")
    @classmethod
    def _derive_uri(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("uri"):
            uri = _derived_uri(data)
            if uri:
                data = {**data, "uri": uri}
        return data

    @model_validator(mode="after")
    def _identity(self) -> Source:
        if (self.entity_type is None) != (self.entity_id is None):
            raise ValueError("entity_type and entity_id must be given together")
        if not self.uri:
            raise ValueError("a source needs an entity, a url or a title")
        return self

    @property
    def key(self) -> ReferenceKey:
        """Entity first, then url, then title: neither a url nor a title is unique per entity."""
        if self.entity_type is not None and self.entity_id is not None:
            return (self.entity_type, self.entity_id)
        if self.url:
            return ("url:", self.url)
        return ("title:", self.title)

    def to_reference(self) -> Reference:
        """The card a client shows; the source must be numbered."""
        if self.number is None:
            raise InvalidInput(f"source {self.uri} has no number yet: number it before showing it")
        return Reference(
            number=self.number,
            entity_type=self.entity_type,
            entity_id=self.entity_id,
            uri=self.uri,
            title=self.title or self.uri,
            url=self.url,
            langcode=self.langcode,
            snippet=snippet(self.content),
            detail=self.detail,
            passage=self.passage,
            restricted=self.restricted,
        )

    @property
    def detail(self) -> str | None:
        """The field value that tells same-title sources apart: the first field holding a
        short text (e.g. the degree level), else ``None``."""
        for value in self.fields.values():
            if isinstance(value, str) and 0 < len(value.strip()) <= _DETAIL_LENGTH:
                return value.strip()
        return None


def _derived_uri(data: dict[str, Any]) -> str:
    """``entity:<type>/<id>`` for entities, else the url, else a URN made from the title."""
    if data.get("entity_type") is not None and data.get("entity_id") is not None:
        return f"entity:{data['entity_type']}/{data['entity_id']}"
    if data.get("url"):
        return str(data["url"])
    if data.get("title"):
        return "urn:citelab:title:" + quote(str(data["title"]), safe="")
    return ""


class RetrievalSettings(BaseModel):
    """How an agent's retrieval results become sources.

    View modes (what ``Source.content`` holds):

    - ``chunk``: the retrieved chunk texts of the entity, joined by blank lines in retrieval
      order — exactly the passages the search matched, in the language they were retrieved in.
    - ``teaser``: the first paragraph of the entity's text in the chosen language, at most
      about 300 characters.
    - ``full``: the entity's whole text in the chosen language.
    - ``label``: one line, the entity's label followed by its field values.

    ``teaser`` and ``full`` read the corpus; without one they fall back to the chunk text.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: str = Field(default="default", min_length=1)
    """Name of the search index the rag_search tool queries."""
    threshold: float | None = None
    """Score gate: chunks scoring below it are dropped; ``None`` turns the gate off."""
    max_results: int = Field(default=10, ge=1)
    """Chunks asked of the search; after reranking, at most this many chunks are kept."""
    entity_cap: int | None = Field(default=None, ge=1)
    """At most this many distinct entities; ``None`` turns the cap off."""
    reranker: str | None = None
    """Name of a registered reranker, or ``None`` for the search's own order."""
    view_mode: ViewMode = "chunk"
    """How each source's content is rendered for the model."""


def sources_block(sources: Iterable[Source]) -> str:
    """The numbered ``<sources>`` block the agent writes into prompts and tool messages.

    Unnumbered sources are left out: the model may only see numbers it can cite.
    """
    numbered: list[NumberedSource] = list(sources)
    return render_sources_block(numbered)
