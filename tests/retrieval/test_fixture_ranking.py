"""Ranking sanity and leak checks on the fixture corpora."""

import importlib.util
import re
from pathlib import Path

import pytest

from citelab.corpus import Corpus, Reader
from citelab.retrieval import RagSearch, SearchIndex

PERSONA_NAMES = ["alice", "anonymous", "bob", "carol", "dave"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("aptitude test athletics swimming", "program/sports-science-bsc"),
        ("research station on Lake Arvel", "program/biology-bsc"),
        ("semester fee public transport ticket", "page/semester-fee"),
        ("Kepler Building laboratory", "program/physics-bsc"),
        ("part-time MBA on Friday evenings and Saturdays", "program/business-administration-mba"),
        ("Data Science master specialisation track climate data", "program/data-science-msc"),
        ("robot arms drones robotics hall", "program/robotics-msc"),
        ("archive internship state archive", "program/history-ma"),
    ],
)
def test_university_queries_find_their_programme_first(
    university: SearchIndex, query: str, expected: str
) -> None:
    hit = university.search(query, Reader.anonymous(), k=1)[0]
    assert f"{hit.chunk.entity_type}/{hit.chunk.entity_id}" == expected


@pytest.mark.parametrize(
    ("query", "langcode", "expected"),
    [
        ("Leitweg-ID XRechnung", None, "article/135:de:0"),
        ("Chorus Pro SIRET", None, "article/140:fr:0"),
        ("recovery codes authenticator app", None, "article/102:en:0"),
        ("Passwort vergessen", None, "article/101:de:0"),
        ("bank connection renewed every 180 days", "en", "article/118:en:0"),
        ("devis expirent après 30 jours", "fr", "article/131:fr:0"),
        ("Gutschrift stornieren", "de", "article/109:de:0"),
    ],
)
def test_helpcentre_queries_find_their_article_first(
    helpcentre: SearchIndex, query: str, langcode: str | None, expected: str
) -> None:
    hit = helpcentre.search(query, Reader.anonymous(), k=1, langcode=langcode)[0]
    assert hit.chunk.chunk_id == expected


@pytest.mark.parametrize(
    ("persona", "query", "expected"),
    [
        ("anonymous", "AQ-40 solar powered sensor launch", "3"),
        ("bob", "Kittiwake Street apartment", "40"),
        ("alice", "Quillon lidar acquisition", "39"),
        ("carol", "Saltmarsh cash forecast", "36"),
        ("bob", "VPN gateway", "19"),
    ],
)
def test_intranet_queries_find_their_document_first(
    intranet: SearchIndex, personas: dict[str, Reader], persona: str, query: str, expected: str
) -> None:
    hit = intranet.search(query, personas[persona], k=1)[0]
    assert hit.chunk.entity_id == expected


def _leak_markers(corpora_dir: Path) -> dict[str, str]:
    spec = importlib.util.spec_from_file_location("_intranet", corpora_dir / "_intranet.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.LEAK_MARKERS)


@pytest.mark.parametrize("persona", PERSONA_NAMES)
def test_rag_search_never_leaks_a_restricted_document(
    intranet: SearchIndex,
    intranet_corpus: Corpus,
    corpora_dir: Path,
    personas: dict[str, Reader],
    persona: str,
) -> None:
    reader = personas[persona]
    tool = RagSearch(intranet)
    for marker in _leak_markers(corpora_dir):
        pattern = re.compile(rf"\b{re.escape(marker)}\b")
        holders = [
            doc
            for doc in intranet_corpus
            if any(pattern.search(t.title + "\n" + t.content) for t in doc.translations.values())
        ]
        allowed = all(doc.readable_by(reader) for doc in holders)
        rows = tool.run({"query": marker, "max_results": 50}, reader)["results"]
        for row in rows:
            document = intranet_corpus.get(row["entity_type"], row["entity_id"])
            assert document is not None
            assert document.readable_by(reader), (persona, row["entity_id"])
        seen = any(pattern.search(row["title"] + "\n" + row["content"]) for row in rows)
        assert seen == allowed, (persona, marker)
