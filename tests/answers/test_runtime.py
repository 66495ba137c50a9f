"""Where indexes go, and what the service closes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from citelab import ConfigError
from citelab._paths import fixtures_dir
from citelab.agent import AgentConfig
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore, _runtime
from citelab.corpus import load_corpus
from citelab.models import MODELS, register_model
from citelab.models.offline._extractive import ExtractiveModel
from citelab.retrieval import SearchIndex

pytestmark = pytest.mark.anyio


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Path:
    path = tmp_path / "corpora" / "mine.jsonl"
    path.parent.mkdir()
    shutil.copy(fixtures_dir() / "corpora" / "helpcentre.jsonl", path)
    return path


def service(corpus: Path, **options: Any) -> AnswerService:
    agent = AgentConfig(name="mine", corpus=str(corpus))
    return AnswerService(
        {"mine": agent}, store=MemoryConversationStore(), logs=MemoryLogStore(), **options
    )


async def test_an_index_goes_next_to_a_writable_corpus(corpus_copy: Path) -> None:
    await service(corpus_copy).answer("mine", "How do I reset my password?")
    assert (corpus_copy.parent / "mine.jsonl.index" / "manifest.json").is_file()


async def test_an_index_goes_to_the_cache_when_the_corpus_folder_is_read_only(
    corpus_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITELAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(_runtime.os, "access", lambda path, mode: False)
    await service(corpus_copy).answer("mine", "How do I reset my password?")
    assert not (corpus_copy.parent / "mine.jsonl.index").exists()
    # (beside it only the hidden lock file that keeps two processes from building it twice)
    [index] = [p for p in (tmp_path / "cache" / "indexes").iterdir() if not p.name.startswith(".")]
    assert index.name.startswith("mine-")
    assert (index / "manifest.json").is_file()


async def test_an_explicit_index_dir_wins(corpus_copy: Path, tmp_path: Path) -> None:
    await service(corpus_copy, index_dir=tmp_path / "idx").answer("mine", "Reset password?")
    built = [p.name.split("-")[0] for p in (tmp_path / "idx").iterdir() if p.name[0] != "."]
    assert built == ["mine"]


async def test_aclose_closes_the_models_the_service_built(corpus_copy: Path) -> None:
    # Registered inside the block only, so the test name never leaks into other tests.
    with MODELS.preserved():
        await _closes_the_models_the_service_built(corpus_copy)
    assert "closable-test" not in MODELS


async def _closes_the_models_the_service_built(corpus_copy: Path) -> None:
    closed: list[str] = []

    class Closable(ExtractiveModel):
        async def aclose(self) -> None:
            closed.append(self.name)

    register_model("closable-test", lambda **kw: Closable(name="closable-test"), replace=True)
    given = Closable(name="given")
    agents = {
        "built": AgentConfig(name="built", corpus=str(corpus_copy), model="closable-test"),
        "given": AgentConfig(name="given", corpus=str(corpus_copy), model="given"),
    }
    async with AnswerService(
        agents,
        store=MemoryConversationStore(),
        logs=MemoryLogStore(),
        models={"given": given},
    ) as svc:
        await svc.answer("built", "How do I reset my password?")
        await svc.answer("given", "How do I reset my password?")
    assert closed == ["closable-test"]  # a model the caller gave stays the caller's


async def test_an_index_given_built_is_searched_as_it_is(corpus_copy: Path) -> None:
    corpus = load_corpus(corpus_copy)
    index = SearchIndex.build(corpus)
    given = service(
        corpus_copy, corpora={str(corpus_copy): corpus}, indexes={str(corpus_copy): index}
    )
    answer = await given.answer("mine", "How do I reset my password?")
    assert answer.sources
    assert not (corpus_copy.parent / "mine.jsonl.index").exists()  # nothing built or written
    other = load_corpus(corpus_copy)  # the same file, another corpus object
    with pytest.raises(ConfigError, match=r"the index given for corpus .* indexes another corpus"):
        service(corpus_copy, corpora={str(corpus_copy): other}, indexes={str(corpus_copy): index})
