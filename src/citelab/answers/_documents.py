"""One corpus document as a reader may see it: what a source card's local document view shows.

The demo corpora link their entities to ``.example`` pages that do not exist, so the front end
shows ``entity:`` sources from the corpus itself. The lookup applies the same rules as
answering: the agent must be enabled, and a document the reader may not read is "not found"
(it does not reveal that the entity exists).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from citelab._errors import InvalidInput
from citelab.answers._service import AnswerService
from citelab.corpus import Reader

__all__ = ["DocumentPayload", "parse_entity_uri", "read_document"]

_ENTITY_URI = re.compile(r"^entity:([A-Za-z0-9_.-]+)/([A-Za-z0-9_.:-]+)$")


class DocumentPayload(BaseModel):
    """A corpus document in the reader's language (untrusted text: the front end shows it as
    text)."""

    model_config = ConfigDict(extra="forbid")

    uri: str
    """``entity:<type>/<id>``."""
    entity_type: str
    entity_id: str
    langcode: str
    """The language of the version shown."""
    title: str
    content: str
    """The document's whole text."""
    url: str | None = None
    """Its web page, when it has one (may not exist: the front end checks the scheme)."""
    fields: dict[str, object] = {}
    """The entity's other fields (e.g. the degree level)."""


def parse_entity_uri(uri: str) -> tuple[str, str]:
    """``(entity_type, entity_id)`` of an ``entity:<type>/<id>`` URI, else InvalidInput."""
    match = _ENTITY_URI.match(uri) if isinstance(uri, str) else None
    if match is None:
        raise InvalidInput(f"uri: {str(uri)[:200]!r} is not an entity:<type>/<id> URI")
    return match.group(1), match.group(2)


async def read_document(
    service: AnswerService, agent: str, uri: str, reader: Reader | None = None
) -> DocumentPayload:
    """The document ``uri`` names in ``agent``'s corpus, as ``reader`` may read it (see
    :meth:`AnswerService.document`)."""
    entity_type, entity_id = parse_entity_uri(uri)
    reader = reader or Reader.anonymous()
    document = await service.document(agent, entity_type, entity_id, reader)
    langcode, translation = document.translation(reader.langcode)
    return DocumentPayload(
        uri=uri,
        entity_type=entity_type,
        entity_id=entity_id,
        langcode=langcode,
        title=translation.title,
        content=translation.content,
        url=translation.url,
        fields=dict(document.fields),
    )
