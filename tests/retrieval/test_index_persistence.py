"""The index is persisted next to its corpus and rebuilt only when it must be."""

import hashlib
import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from citelab.corpus import ChunkingParams, Corpus, Reader, load_corpus
from citelab.retrieval import SearchIndex, index_directory, open_index
from citelab.retrieval import _index as index_module


@pytest.fixture
def corpus_path(tmp_path: Path, corpora_dir: Path) -> Path:
    return Path(shutil.copy(corpora_dir / "helpcentre.jsonl", tmp_path / "help.jsonl"))


def _results(index: SearchIndex) -> list[tuple[str, float]]:
    hits = index.search("invoice reminder password", Reader.anonymous(), k=10)
    return [(hit.chunk.chunk_id, hit.bm25_score) for hit in hits]


def test_first_open_builds_and_persists_next_to_the_corpus(corpus_path: Path) -> None:
    index = open_index(corpus_path)
    directory = index_directory(corpus_path)
    assert directory == corpus_path.with_name("help.jsonl.index")
    assert (index.origin, index.rebuild_reason, index.directory) == (
        "built",
        "no index yet",
        directory,
    )
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["chunks"] == len(index)
    assert manifest["format"] == index_module.INDEX_FORMAT_VERSION
    assert "bm25/data.csc.index.npy" in manifest["files"]
    # Nothing else is left behind beside the corpus (no staging directory), except the lock
    # file that makes two processes build it once.
    assert sorted(p.name for p in corpus_path.parent.iterdir()) == [
        ".help.jsonl.index.lock",
        "help.jsonl",
        "help.jsonl.index",
    ]


def test_reopening_an_unchanged_corpus_does_not_rebuild(
    corpus_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = open_index(corpus_path)
    expected = _results(built)

    def refuse(*args: object, **kwargs: object) -> SearchIndex:
        raise AssertionError("the index was rebuilt")

    monkeypatch.setattr(SearchIndex, "build", classmethod(refuse))
    again = open_index(corpus_path)
    assert again.origin == "loaded"
    assert again.rebuild_reason is None
    assert _results(again) == expected
    assert [again.chunk(i) for i in range(len(again))] == [
        built.chunk(i) for i in range(len(built))
    ]


def test_a_changed_corpus_is_rebuilt(corpus_path: Path) -> None:
    open_index(corpus_path)
    with corpus_path.open("a", encoding="utf-8") as handle:
        handle.write(
            '{"entity_type": "article", "entity_id": "999", "translations": {"en": '
            '{"title": "Zeppelin shipping", "content": "Invoices can travel by zeppelin."}}}\n'
        )
    index = open_index(corpus_path)
    assert (index.origin, index.rebuild_reason) == ("built", "corpus_hash changed")
    assert index.search("zeppelin", Reader.anonymous())[0].chunk.entity_id == "999"
    assert open_index(corpus_path).origin == "loaded"


def test_changed_chunking_or_format_is_rebuilt(
    corpus_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_index(corpus_path)
    smaller = open_index(corpus_path, ChunkingParams(max_chars=120))
    assert smaller.rebuild_reason == "chunking changed"
    assert len(smaller) > len(open_index(corpus_path))  # rebuilt back at the default size
    monkeypatch.setattr(index_module, "INDEX_FORMAT_VERSION", 999)
    assert open_index(corpus_path).rebuild_reason == "format changed"


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        ("flip", "corrupt file chunk_start.npy"),
        ("truncate", "corrupt file bm25/data.csc.index.npy"),
        ("delete", "missing file bm25/vocab.index.json"),
        ("no-manifest", "no index yet"),
        ("garbage-manifest", "unreadable manifest"),
        ("list-manifest", "malformed manifest"),
        ("unlisted-array", "manifest lists no term_best.npy"),
        ("escaping-name", "manifest names a file outside the index"),
        ("forged-table", "chunk table points outside the corpus"),
    ],
)
def test_a_damaged_index_is_rebuilt_not_a_crash(
    corpus_path: Path, damage: str, reason: str
) -> None:
    expected = _results(open_index(corpus_path))
    directory = index_directory(corpus_path)
    _damage(directory, damage)
    index = open_index(corpus_path)
    assert index.origin == "built"
    assert index.rebuild_reason is not None
    assert index.rebuild_reason.startswith(reason)
    assert _results(index) == expected
    assert open_index(corpus_path).origin == "loaded"


def _damage(directory: Path, damage: str) -> None:
    manifest = directory / "manifest.json"
    if damage == "flip":
        path = directory / "chunk_start.npy"
        data = bytearray(path.read_bytes())
        data[-1] ^= 0xFF
        path.write_bytes(bytes(data))
    elif damage == "truncate":
        path = directory / "bm25" / "data.csc.index.npy"
        path.write_bytes(path.read_bytes()[:-7])
    elif damage == "delete":
        (directory / "bm25" / "vocab.index.json").unlink()
    elif damage == "no-manifest":
        manifest.unlink()
    elif damage == "garbage-manifest":
        manifest.write_text("{not json", encoding="utf-8")
    elif damage == "list-manifest":
        manifest.write_text("[]", encoding="utf-8")
    elif damage == "unlisted-array":
        data = json.loads(manifest.read_text(encoding="utf-8"))
        del data["files"]["term_best.npy"]
        manifest.write_text(json.dumps(data), encoding="utf-8")
    elif damage == "escaping-name":
        data = json.loads(manifest.read_text(encoding="utf-8"))
        data["files"]["../help.jsonl"] = "0" * 64
        manifest.write_text(json.dumps(data), encoding="utf-8")
    elif damage == "forged-table":
        # Consistent checksums, but rows that point at documents the corpus does not have.
        path = directory / "chunk_document.npy"
        np.save(path, np.load(path) + 10_000)
        data = json.loads(manifest.read_text(encoding="utf-8"))
        data["files"]["chunk_document.npy"] = hashlib.sha256(path.read_bytes()).hexdigest()
        manifest.write_text(json.dumps(data), encoding="utf-8")


def test_an_unwritable_location_keeps_the_index_in_memory(
    corpus_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = corpus_path.parent / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="citelab.retrieval"):
        index = SearchIndex.open(load_corpus(corpus_path), directory=blocker / "index")
    assert index.origin == "built"
    assert index.directory is None
    assert "keeping it in memory" in caplog.text
    assert _results(index)


def test_a_corpus_without_a_path_is_indexed_in_memory(corpora_dir: Path) -> None:
    documents = list(load_corpus(corpora_dir / "helpcentre.jsonl"))
    index = SearchIndex.open(Corpus(documents))
    assert (index.origin, index.directory) == ("built", None)


def test_an_explicit_directory_is_used(corpus_path: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "indexes" / "help"
    corpus = load_corpus(corpus_path)
    assert SearchIndex.open(corpus, directory=elsewhere).directory == elsewhere
    assert SearchIndex.open(corpus, directory=elsewhere).origin == "loaded"
    assert not index_directory(corpus_path).exists()
