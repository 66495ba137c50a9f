from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from citelab.corpus import Corpus, Document, Reader, load_corpus
from citelab.retrieval import SearchIndex

CORPORA = Path(__file__).resolve().parents[2] / "fixtures" / "corpora"

_PERSONAS = {
    "anonymous": Reader.anonymous(),
    "dave": Reader(user_id="dave"),
    "bob": Reader(user_id="bob", roles=frozenset({"staff"})),
    "carol": Reader(user_id="carol", roles=frozenset({"staff", "finance"})),
    "alice": Reader(user_id="alice", roles=frozenset({"staff", "hr"})),
}


def make_document(entity_id: str, content: str = "", **extra: Any) -> Document:
    """A one-translation ``node`` document; ``extra`` overrides any field."""
    data: dict[str, Any] = {
        "entity_type": "node",
        "entity_id": entity_id,
        "translations": {"en": {"title": f"Document {entity_id}", "content": content}},
    }
    data.update(extra)
    return Document.model_validate(data)


@pytest.fixture(scope="session")
def personas() -> dict[str, Reader]:
    """The intranet personas described in fixtures/corpora/README.md, by name."""
    return dict(_PERSONAS)


@pytest.fixture
def document() -> Callable[..., Document]:
    """Build a one-translation ``node`` document: ``document(entity_id, content, **fields)``."""
    return make_document


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """The directory of the fixture corpora (read them; never write next to them in tests)."""
    return CORPORA


def _fixture_index(name: str) -> SearchIndex:
    return SearchIndex.build(load_corpus(CORPORA / f"{name}.jsonl"))


@pytest.fixture(scope="session")
def university() -> SearchIndex:
    return _fixture_index("university")


@pytest.fixture(scope="session")
def helpcentre() -> SearchIndex:
    return _fixture_index("helpcentre")


@pytest.fixture(scope="session")
def intranet() -> SearchIndex:
    return _fixture_index("intranet")


@pytest.fixture(scope="session")
def intranet_corpus() -> Corpus:
    return load_corpus(CORPORA / "intranet.jsonl")
