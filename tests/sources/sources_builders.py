"""Small corpora, rows and sources for the source-processing tests (texts invented here)."""

from __future__ import annotations

from typing import Any

from citelab.corpus import Access, Corpus, Document, Translation
from citelab.sources import Source

STAFF_ONLY = Access(public=False, roles=frozenset({"staff"}))


def doc(
    entity_id: str,
    translations: dict[str, tuple[str, str]],
    *,
    entity_type: str = "node",
    default: str = "en",
    fields: dict[str, Any] | None = None,
    access: Access | None = None,
) -> Document:
    """A document; ``translations`` maps langcode → (title, content), urls derived."""
    return Document(
        entity_type=entity_type,
        entity_id=entity_id,
        default_langcode=default,
        translations={
            lang: Translation(
                title=title, content=content, url=f"https://uni.example/{lang}/{entity_id}"
            )
            for lang, (title, content) in translations.items()
        },
        fields=fields or {},
        access=access or Access(),
    )


def campus_corpus() -> Corpus:
    """Five entities: bilingual, German-only, staff-only, and two same-label programs."""
    return Corpus(
        [
            doc(
                "1",
                {
                    "en": ("Admissions", "Apply by March.\n\nLate files wait a year."),
                    "de": ("Zulassung", "Bewerbung bis März.\n\nSpäte Akten warten."),
                },
            ),
            doc(
                "2",
                {"de": ("Gebühren", "Die Gebühr beträgt 300 Euro pro Semester.")},
                default="de",
            ),
            doc(
                "3",
                {"en": ("Salary scales", "Internal pay grades for staff.")},
                access=STAFF_ONLY,
            ),
            doc(
                "10",
                {"en": ("Physics", "")},
                entity_type="program",
                fields={"degree": "BSc", "faculty": "Science"},
            ),
            doc(
                "11",
                {"en": ("Physics", "")},
                entity_type="program",
                fields={"degree": "MSc", "faculty": "Science"},
            ),
        ],
        name="campus",
    )


def rag_row(
    entity_id: str,
    content: str,
    score: float,
    *,
    chunk: int = 0,
    langcode: str = "en",
    entity_type: str = "node",
    title: str | None = None,
) -> dict[str, Any]:
    """A rag_search row as the retrieval tool returns it."""
    return {
        "entity_type": entity_type,
        "entity_id": entity_id,
        "langcode": langcode,
        "chunk_id": f"{entity_type}/{entity_id}:{langcode}:{chunk}",
        "content": content,
        "score": score,
        "title": title or f"Title {entity_id}",
        "url": f"https://uni.example/{langcode}/{entity_id}",
        "bm25_score": score * 10,
    }


def numbered(*numbers: int, entity_type: str = "node") -> list[Source]:
    """Sources numbered as given, entity id = number."""
    return [
        Source(number=n, entity_type=entity_type, entity_id=str(n), title=f"Source {n}")
        for n in numbers
    ]


def entity(entity_id: str) -> Source:
    """An unnumbered source for entity ``node/<entity_id>``."""
    return Source(entity_type="node", entity_id=entity_id, title=f"Entity {entity_id}")
