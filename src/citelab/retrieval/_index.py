"""A BM25 index over the chunks of a corpus, persisted next to the corpus file.

Every translation is chunked (see ``citelab.corpus.chunk_spans``) and each chunk is indexed
under the terms of its text plus its translation's title and its document's field values, so
that an entity known only by its title and fields is still found. Ranking is ``bm25s``.

Persistence: ``<corpus>.index/`` holds the ``bm25s`` arrays, the chunk table and a
``manifest.json`` naming what the index was built from (corpus content hash, chunking
parameters, tokenizer signature, index format version) and a SHA-256 of every file. Opening an
index loads it only when all of that matches; a missing, stale, partial or corrupt index is
rebuilt (never a crash), written to a temporary sibling directory and moved into place, so a
reader never sees half an index. Building and writing hold a lock file beside the index
(``filelock``), so two processes opening the same stale index build it once: the second waits,
then loads what the first wrote.

Access and language are applied *inside* the ranking, as a mask over all chunks before the
top k are chosen: a reader gets the best k chunks among those they may read, exactly, and a
chunk they may not read is never materialized at all.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import os
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import bm25s
import filelock
import numpy as np
import numpy.typing as npt

from citelab._errors import InvalidInput
from citelab.corpus import (
    CHUNKING_VERSION,
    Access,
    Chunk,
    ChunkingParams,
    Corpus,
    Document,
    Reader,
    Translation,
    chunk_id,
    chunk_spans,
    load_corpus,
)
from citelab.retrieval._tokenize import Tokenizer

__all__ = ["INDEX_FORMAT_VERSION", "SearchHit", "SearchIndex", "index_directory", "open_index"]

#: Bump whenever the persisted layout changes.
INDEX_FORMAT_VERSION = 1

_log = logging.getLogger("citelab.retrieval")
_LOCK_SECONDS = 600.0
_BM25_PARAMS: dict[str, Any] = {"k1": 1.5, "b": 0.75, "method": "lucene"}
_TABLE = ("document", "language", "ordinal", "start", "end")
_ARRAYS = (*(f"chunk_{name}.npy" for name in _TABLE), "term_best.npy")


@dataclass(frozen=True)
class SearchHit:
    """One ranked chunk, with the document it belongs to."""

    chunk: Chunk
    document: Document
    score: float
    """``bm25_score`` divided by the best score any chunk reaches for each query term, summed
    over the query's indexed terms: 1.0 means the best chunk for every term at once. In
    [0, 1]; comparable across queries, so a threshold can be applied to it."""
    bm25_score: float
    """The raw BM25 score (lucene variant, k1=1.5, b=0.75); > 0."""

    @property
    def translation(self) -> Translation:
        return self.document.translations[self.chunk.langcode]


@dataclass
class _ChunkTable:
    """Where every indexed chunk lives: document position, language, ordinal and span."""

    document: npt.NDArray[np.int32]
    language: npt.NDArray[np.int16]
    ordinal: npt.NDArray[np.int32]
    start: npt.NDArray[np.int64]
    end: npt.NDArray[np.int64]
    languages: list[str]

    def __len__(self) -> int:
        return len(self.document)


@dataclass
class _Build:
    table: _ChunkTable
    token_ids: list[list[int]]
    vocabulary: dict[str, int]


def index_directory(corpus_path: str | Path) -> Path:
    """Where the index of the corpus at ``corpus_path`` is kept: ``<corpus_path>.index``."""
    path = Path(corpus_path)
    return path.with_name(path.name + ".index")


def open_index(
    corpus_path: str | Path,
    params: ChunkingParams | None = None,
    *,
    directory: str | Path | None = None,
) -> SearchIndex:
    """Load the corpus at ``corpus_path`` and open (or build and persist) its index."""
    return SearchIndex.open(load_corpus(corpus_path), params, directory=directory)


class SearchIndex:
    """BM25 over the chunks of a corpus; ``search`` ranks what a given reader may read."""

    def __init__(
        self,
        corpus: Corpus,
        *,
        params: ChunkingParams,
        table: _ChunkTable,
        bm25: bm25s.BM25 | None,
        term_best: npt.NDArray[np.float32],
        origin: Literal["built", "loaded"],
    ) -> None:
        self.corpus = corpus
        self.params = params
        self.tokenizer = Tokenizer()
        self.origin: Literal["built", "loaded"] = origin
        """``built`` when this process built the index, ``loaded`` when read from disk."""
        self.directory: Path | None = None
        """Where the index is persisted, if it is."""
        self.rebuild_reason: str | None = None
        """Why a persisted index could not be used, when ``origin`` is ``built``."""
        self._documents = list(corpus)
        self._table = table
        self._bm25 = bm25
        self._term_best = term_best
        self._access, self._chunk_access = _access_classes(self._documents, table)

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def build(cls, corpus: Corpus, params: ChunkingParams | None = None) -> SearchIndex:
        """Chunk, tokenize and index ``corpus`` in memory."""
        params = params or ChunkingParams()
        bm25: bm25s.BM25 | None = None
        build = _tokenize_corpus(corpus, params, Tokenizer())
        term_best = np.zeros(len(build.vocabulary), dtype=np.float32)
        if build.vocabulary:
            bm25 = bm25s.BM25(**_BM25_PARAMS)
            bm25.index(
                (build.token_ids, build.vocabulary),
                create_empty_token=False,
                show_progress=False,
            )
            term_best = _best_per_term(bm25)
        return cls(
            corpus, params=params, table=build.table, bm25=bm25, term_best=term_best, origin="built"
        )

    @classmethod
    def open(
        cls,
        corpus: Corpus,
        params: ChunkingParams | None = None,
        *,
        directory: str | Path | None = None,
    ) -> SearchIndex:
        """Load the persisted index if it matches ``corpus`` and ``params``, else build it and
        persist it. ``directory`` defaults to ``<corpus.path>.index``; a corpus without a path
        and without ``directory`` is indexed in memory only."""
        params = params or ChunkingParams()
        if directory is not None:
            where = Path(directory)
        elif corpus.path is not None:
            where = index_directory(corpus.path)
        else:
            return cls.build(corpus, params)
        try:
            return cls._load_from(corpus, params, where)
        except _Unusable:
            pass
        # One process builds and writes; the others wait for it, then load what it wrote.
        with _build_lock(where):
            try:
                return cls._load_from(corpus, params, where)
            except _Unusable as reason:
                _log.info("rebuilding the index in %s: %s", where, reason)
                index = cls.build(corpus, params)
                index.rebuild_reason = str(reason)
            try:
                index.save(where)
            except OSError as exc:
                _log.warning(
                    "cannot persist the index in %s (%s); keeping it in memory", where, exc
                )
        return index

    @classmethod
    def _load_from(cls, corpus: Corpus, params: ChunkingParams, where: Path) -> SearchIndex:
        index = cls._load(corpus, params, where)
        index.directory = where
        return index

    # -- queries ----------------------------------------------------------------------------

    def __len__(self) -> int:
        """The number of chunks."""
        return len(self._table)

    @property
    def languages(self) -> list[str]:
        """Every langcode that has at least one chunk."""
        return list(self._table.languages)

    @property
    def vocabulary_size(self) -> int:
        return len(self._term_best)

    def chunk(self, position: int) -> Chunk:
        """The chunk at ``position`` in the index (0 ≤ position < len(self))."""
        table = self._table
        document = self._documents[int(table.document[position])]
        langcode = table.languages[int(table.language[position])]
        start, end = int(table.start[position]), int(table.end[position])
        return Chunk(
            entity_type=document.entity_type,
            entity_id=document.entity_id,
            langcode=langcode,
            chunk_id=chunk_id(
                document.entity_type, document.entity_id, langcode, int(table.ordinal[position])
            ),
            start=start,
            end=end,
            text=document.translations[langcode].content[start:end],
        )

    def search(
        self, query: str, reader: Reader, *, k: int = 5, langcode: str | None = None
    ) -> list[SearchHit]:
        """The ``k`` best chunks for ``query`` that ``reader`` may read, best first.

        ``langcode`` restricts the search to one language's translations. Only chunks sharing
        at least one term with the query are returned, so there may be fewer than ``k``.
        """
        if k < 1:
            raise InvalidInput(f"k must be at least 1, got {k}")
        terms = self.tokenizer.terms(query, langcode)
        vocabulary = self._bm25.vocab_dict if self._bm25 is not None else {}
        term_ids = [vocabulary[term] for term in terms if term in vocabulary]
        if self._bm25 is None or not term_ids:
            return []
        mask = self._visible(reader, langcode)
        if mask is None:
            return []
        scores = np.where(mask, self._bm25.get_scores_from_ids(term_ids), 0.0)
        best = float(self._term_best[term_ids].sum())
        return list(self._hits(scores, k, best, reader))

    def _visible(self, reader: Reader, langcode: str | None) -> npt.NDArray[np.bool_] | None:
        allowed = np.array([access.allows(reader) for access in self._access], dtype=bool)
        mask = allowed[self._chunk_access]
        if langcode is not None:
            if langcode not in self._table.languages:
                return None
            mask &= self._table.language == self._table.languages.index(langcode)
        return mask

    def _hits(
        self, scores: npt.NDArray[np.floating[Any]], k: int, best: float, reader: Reader
    ) -> Iterator[SearchHit]:
        for position in _top(scores, k):
            chunk = self.chunk(int(position))
            document = self._documents[int(self._table.document[position])]
            if not document.readable_by(reader):  # the mask already did this; never trust one
                _log.error("access mask let %s through for %s", chunk.chunk_id, reader.user_id)
                continue
            raw = float(scores[position])
            yield SearchHit(chunk, document, min(1.0, raw / best), raw)

    # -- persistence ------------------------------------------------------------------------

    def save(self, directory: str | Path) -> None:
        """Write the index to ``directory`` atomically (replacing what was there)."""
        target = Path(directory)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            self._write(staging)
            _replace_directory(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        self.directory = target

    def _write(self, directory: Path) -> None:
        table = self._table
        for name in _TABLE:
            np.save(directory / f"chunk_{name}.npy", getattr(table, name))
        np.save(directory / "term_best.npy", self._term_best)
        if self._bm25 is not None:
            self._bm25.save(directory / "bm25", show_progress=False)
        files = sorted(p for p in directory.rglob("*") if p.is_file())
        manifest = {
            **_identity(self.corpus, self.params, self.tokenizer),
            "chunks": len(table),
            "documents": len(self._documents),
            "languages": table.languages,
            "files": {p.relative_to(directory).as_posix(): _sha256(p) for p in files},
        }
        (directory / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")

    @classmethod
    def _load(cls, corpus: Corpus, params: ChunkingParams, directory: Path) -> SearchIndex:
        manifest = _read_manifest(directory)
        tokenizer = Tokenizer()
        for key, expected in _identity(corpus, params, tokenizer).items():
            if manifest.get(key) != expected:
                raise _Unusable(f"{key} changed")
        _verify_files(directory, manifest)
        try:
            table = _load_table(directory, manifest)
            term_best = np.load(directory / "term_best.npy")
            bm25 = None
            if (directory / "bm25").is_dir():
                bm25 = bm25s.BM25.load(directory / "bm25", show_progress=False)
        except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
            raise _Unusable(f"unreadable ({exc})") from exc
        _check_consistency(len(corpus), table, bm25, term_best, manifest)
        return cls(
            corpus, params=params, table=table, bm25=bm25, term_best=term_best, origin="loaded"
        )


class _Unusable(Exception):
    """The persisted index cannot be used; the message says why (for logs and the CLI)."""


def _identity(corpus: Corpus, params: ChunkingParams, tokenizer: Tokenizer) -> dict[str, Any]:
    """What an index is built from: any difference makes a persisted index stale."""
    return {
        "format": INDEX_FORMAT_VERSION,
        "corpus_hash": corpus.content_hash(),
        "chunking": {"version": CHUNKING_VERSION, **params.model_dump()},
        "tokenizer": tokenizer.signature,
        "bm25": {**_BM25_PARAMS, "bm25s": bm25s.__version__},
    }


def _tokenize_corpus(corpus: Corpus, params: ChunkingParams, tokenizer: Tokenizer) -> _Build:
    languages: dict[str, int] = {}
    # A missing term gets the next id; map() over __getitem__ keeps the hot loop in C.
    vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    token_ids: list[list[int]] = []
    rows: list[tuple[int, int, int, int, int]] = []
    for position, document in enumerate(corpus):
        fields = _field_text(document.fields)
        for langcode, translation in document.translations.items():
            language = languages.setdefault(langcode, len(languages))
            head = tokenizer.terms(f"{translation.title}\n{fields}", langcode)
            head_ids = list(map(vocabulary.__getitem__, head))
            content = translation.content
            for ordinal, (start, end) in enumerate(chunk_spans(content, params.max_chars)):
                terms = tokenizer.terms(content[start:end], langcode)
                token_ids.append(head_ids + list(map(vocabulary.__getitem__, terms)))
                rows.append((position, language, ordinal, start, end))
    columns = list(zip(*rows, strict=True)) if rows else [()] * 5
    table = _ChunkTable(
        document=np.array(columns[0], dtype=np.int32),
        language=np.array(columns[1], dtype=np.int16),
        ordinal=np.array(columns[2], dtype=np.int32),
        start=np.array(columns[3], dtype=np.int64),
        end=np.array(columns[4], dtype=np.int64),
        languages=list(languages),
    )
    return _Build(table, token_ids, dict(vocabulary))


def _field_text(fields: dict[str, Any]) -> str:
    """The searchable words of a document's field values (strings, numbers, lists of them)."""
    values: list[str] = []
    for value in fields.values():
        items = value if isinstance(value, list) else [value]
        values.extend(str(item) for item in items if isinstance(item, str | int | float))
    return " ".join(values)


def _best_per_term(bm25: bm25s.BM25) -> npt.NDArray[np.float32]:
    """For every term, the highest BM25 contribution it makes to any chunk."""
    data, indptr = bm25.scores["data"], bm25.scores["indptr"]
    starts = indptr[:-1]
    present = indptr[1:] > starts
    best = np.zeros(len(starts), dtype=np.float32)
    if present.any():
        best[present] = np.maximum.reduceat(data, starts[present])
    return best


def _access_classes(
    documents: list[Document], table: _ChunkTable
) -> tuple[list[Access], npt.NDArray[np.int32]]:
    """The distinct access rules, and for every chunk the position of its document's rule."""
    classes: dict[Access, int] = {}
    per_document = np.array(
        [classes.setdefault(d.access, len(classes)) for d in documents], dtype=np.int32
    )
    per_chunk = per_document[table.document] if len(table) else np.zeros(0, dtype=np.int32)
    return list(classes), per_chunk


def _top(scores: npt.NDArray[np.floating[Any]], k: int) -> npt.NDArray[np.intp]:
    """Positions of the ``k`` highest positive scores, best first; ties by position."""
    if k < len(scores):
        candidates = np.argpartition(-scores, k - 1)[:k]
        # Everything tied with the k-th score competes, so that ties break by position.
        threshold = scores[candidates].min()
        candidates = np.flatnonzero(scores >= threshold) if threshold > 0 else candidates
    else:
        candidates = np.arange(len(scores))
    candidates = candidates[scores[candidates] > 0]
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order][:k]


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _read_manifest(directory: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise _Unusable("no index yet") from exc
    except (OSError, ValueError) as exc:
        raise _Unusable(f"unreadable manifest ({exc})") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise _Unusable("malformed manifest")
    return manifest


def _verify_files(directory: Path, manifest: dict[str, Any]) -> None:
    for name in _ARRAYS:
        if name not in manifest["files"]:
            raise _Unusable(f"manifest lists no {name}")
    for name, digest in manifest["files"].items():
        if not isinstance(name, str) or ".." in Path(name).parts or Path(name).is_absolute():
            raise _Unusable(f"manifest names a file outside the index: {name!r}")
        path = directory / name
        if not path.is_file():
            raise _Unusable(f"missing file {name}")
        if _sha256(path) != digest:
            raise _Unusable(f"corrupt file {name}")


def _load_table(directory: Path, manifest: dict[str, Any]) -> _ChunkTable:
    arrays = {name: np.load(directory / f"chunk_{name}.npy") for name in _TABLE}
    return _ChunkTable(**arrays, languages=list(manifest["languages"]))


def _check_consistency(
    documents: int,
    table: _ChunkTable,
    bm25: bm25s.BM25 | None,
    term_best: npt.NDArray[np.float32],
    manifest: dict[str, Any],
) -> None:
    count = manifest.get("chunks")
    if any(len(getattr(table, name)) != count for name in _TABLE):
        raise _Unusable("chunk table does not match the manifest")
    if len(table) and (
        int(table.document.max()) >= documents
        or int(table.language.max()) >= len(table.languages)
        or bool((table.start > table.end).any())
    ):
        raise _Unusable("chunk table points outside the corpus")
    if bm25 is not None and (
        bm25.scores["num_docs"] != count or len(bm25.scores["indptr"]) != len(term_best) + 1
    ):
        raise _Unusable("bm25 arrays do not match the chunk table")


@contextlib.contextmanager
def _build_lock(target: Path) -> Iterator[None]:
    """Hold ``.<name>.lock`` beside ``target`` (across processes) while an index is built and
    written; where no lock file can be made (a read-only folder), go on without it."""
    lock = filelock.FileLock(target.with_name(f".{target.name}.lock"), timeout=_LOCK_SECONDS)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except (OSError, filelock.Timeout) as exc:
        _log.warning("building the index in %s without the lock (%s)", target, exc)
        yield
        return
    try:
        yield
    finally:
        lock.release()


def _replace_directory(staging: Path, target: Path) -> None:
    """Move ``staging`` to ``target``, replacing an existing directory as briefly as possible."""
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
        shutil.rmtree(old, ignore_errors=True)
    staging.rename(target)
