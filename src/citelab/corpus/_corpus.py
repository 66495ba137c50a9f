"""A corpus: documents keyed by entity, loaded from JSONL with errors that name line and field."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from citelab._errors import InvalidInput
from citelab._jsonl import JsonlRows, load_jsonl
from citelab.corpus._model import Document

__all__ = ["EXAMPLE_LINE", "Corpus", "load_corpus"]

EXAMPLE_LINE = (
    '{"entity_type": "page", "entity_id": "semester-fee", "translations": {"en": '
    '{"title": "Semester fee", "content": "Every student pays a semester fee.", '
    '"url": "https://example.org/fees"}}}'
)
"""A correct corpus line, shown under every list of problems (``fields``, ``access`` and
``default_langcode`` are optional)."""


class Corpus:
    """An immutable set of documents, unique by ``(entity_type, entity_id)``."""

    def __init__(self, documents: Iterable[Document], name: str = "corpus") -> None:
        self.name = name
        self._by_key: dict[tuple[str, str], Document] = {}
        for doc in documents:
            if doc.key in self._by_key:
                raise InvalidInput(f"{name}: duplicate entity {doc.entity_type}/{doc.entity_id}")
            self._by_key[doc.key] = doc
        self.path: Path | None = None
        self._content_hash: str | None = None

    def __len__(self) -> int:
        return len(self._by_key)

    def __iter__(self) -> Iterator[Document]:
        return iter(self._by_key.values())

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def get(self, entity_type: str, entity_id: str) -> Document | None:
        return self._by_key.get((entity_type, entity_id))

    def content_hash(self) -> str:
        """A hash of every document, stable across runs: it changes iff the corpus changes.

        Computed once: a corpus is immutable."""
        if self._content_hash is None:
            digest = hashlib.sha256()
            for doc in self._by_key.values():
                digest.update(doc.model_dump_json().encode())
                digest.update(b"\n")
            self._content_hash = digest.hexdigest()
        return self._content_hash


def load_corpus(path: str | Path, name: str | None = None) -> Corpus:
    """Load a JSONL corpus; every bad line is reported with its number and field path."""
    path = Path(path)
    try:
        documents = load_jsonl(path, _DOCUMENTS)
    except InvalidInput as exc:
        if not path.is_file():
            raise
        raise InvalidInput(
            f"{exc}\nA valid line looks like this (one JSON object per line):\n"
            f"{EXAMPLE_LINE}\n(a folder of Markdown, text, HTML or PDF files can be "
            "turned into a corpus with `citelab corpus import DIR -o corpus.jsonl`)"
        ) from exc
    corpus = Corpus(documents, name=name or path.stem)
    corpus.path = path
    return corpus


def _repeated(document: Document, first: int) -> str:
    return f"duplicate entity {document.entity_type}/{document.entity_id} (first on line {first})"


_DOCUMENTS = JsonlRows(
    Document, what="corpus", whole="(document)", key=lambda d: d.key, repeated=_repeated
)
