"""A corpus: documents keyed by entity, loaded from JSONL with errors that name line and field."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from citelab._errors import InvalidInput
from citelab.corpus._memory import paused_garbage_collection
from citelab.corpus._model import Document

__all__ = ["Corpus", "load_corpus"]


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
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidInput(f"cannot read corpus {path}: {exc.strerror or exc}") from exc
    with paused_garbage_collection():
        documents, problems = _parse_lines(lines, path)
    if problems:
        raise InvalidInput(f"corpus {path} has {len(problems)} problem(s):\n" + "\n".join(problems))
    corpus = Corpus(documents, name=name or path.stem)
    corpus.path = path
    return corpus


def _parse_lines(lines: list[str], path: Path) -> tuple[list[Document], list[str]]:
    documents: list[Document] = []
    problems: list[str] = []
    first_line: dict[tuple[str, str], int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: invalid JSON ({exc.msg} at column {exc.colno})")
            continue
        try:
            document = Document.model_validate(data)
        except ValidationError as exc:
            problems.extend(_describe(where, exc))
            continue
        seen = first_line.setdefault(document.key, number)
        if seen != number:
            entity = f"{document.entity_type}/{document.entity_id}"
            problems.append(f"{where}: duplicate entity {entity} (first on line {seen})")
            continue
        documents.append(document)
    return documents, problems


def _describe(where: str, exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        field = ".".join(str(part) for part in err["loc"]) or "(document)"
        out.append(f"{where}: field {field}: {err['msg']}")
    return out
