"""The fixture corpora exist, are up to date with their sources, and carry their hazards."""

import importlib.util
import re
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import pytest

from citelab.corpus import Corpus, Document, Reader, load_corpus


def _builder(corpora_dir: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_corpora", corpora_dir / "make_corpora.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load(corpora_dir: Path, name: str) -> Corpus:
    return load_corpus(corpora_dir / f"{name}.jsonl")


def test_jsonl_files_match_their_sources(corpora_dir: Path) -> None:
    builder = _builder(corpora_dir)
    for name in builder.NAMES:
        on_disk = (corpora_dir / f"{name}.jsonl").read_text(encoding="utf-8")
        assert on_disk == builder.render(name), f"{name}.jsonl is stale: run make_corpora.py"


@pytest.mark.parametrize("name", ["university", "helpcentre", "intranet"])
def test_each_corpus_has_at_least_40_entities_with_urls(corpora_dir: Path, name: str) -> None:
    corpus = _load(corpora_dir, name)
    assert len(corpus) >= 40
    for doc in corpus:
        for translation in doc.translations.values():
            assert translation.url is not None
            assert translation.url.startswith("https://")


def test_university_shares_labels_across_degree_levels(corpora_dir: Path) -> None:
    corpus = _load(corpora_dir, "university")
    degrees: dict[str, set[str]] = defaultdict(set)
    for doc in corpus:
        if doc.entity_type == "program":
            assert set(doc.fields) >= {"degree", "faculty", "language"}
            degrees[doc.translations["en"].title].add(doc.fields["degree"])
    shared = {label for label, levels in degrees.items() if len(levels) > 1}
    assert len(shared) >= 8
    assert degrees["Data Science"] == {"BSc", "MSc", "Certificate"}
    assert degrees["Computer Science"] == {"BSc", "MSc", "PhD"}


def test_university_has_entities_known_only_by_fields(corpora_dir: Path) -> None:
    corpus = _load(corpora_dir, "university")
    empty = [doc for doc in corpus if not doc.translations["en"].content.strip()]
    assert len(empty) >= 5
    assert all(doc.fields.get("degree") and doc.fields.get("faculty") for doc in empty)


def test_helpcentre_translations_are_uneven(corpora_dir: Path) -> None:
    corpus = _load(corpora_dir, "helpcentre")
    sets = [frozenset(doc.translations) for doc in corpus]
    assert {frozenset({"en", "de", "fr"}), frozenset({"en", "de"}), frozenset({"en", "fr"})} <= set(
        sets
    )
    only_de = [doc for doc in corpus if set(doc.translations) == {"de"}]
    only_fr = [doc for doc in corpus if set(doc.translations) == {"fr"}]
    assert len(only_de) >= 3
    assert len(only_fr) >= 3
    assert all(doc.default_langcode == "de" for doc in only_de)
    assert all(doc.default_langcode == "fr" for doc in only_fr)


def test_intranet_restricted_words_appear_only_where_access_allows(corpora_dir: Path) -> None:
    builder = _builder(corpora_dir)
    markers = builder.source("intranet").LEAK_MARKERS
    corpus = _load(corpora_dir, "intranet")
    public = [doc for doc in corpus if doc.access.public]
    restricted = [doc for doc in corpus if not doc.access.public]
    assert len(public) >= 10
    assert len(restricted) >= 10
    assert {"alice", "bob"} <= {u for doc in restricted for u in doc.access.users}
    assert {"staff", "hr"} <= {r for doc in restricted for r in doc.access.roles}
    for marker in markers:
        pattern = re.compile(rf"\b{re.escape(marker)}\b")
        holders = [doc for doc in corpus if _mentions(doc, pattern)]
        assert holders, marker
        # Whoever can read one holder of the word can read all of them: any reader who
        # lacks access and still sees the word has seen a leak.
        rules = {doc.access for doc in holders}
        assert all(not rule.public for rule in rules), marker
        assert len(rules) == 1, marker


def _mentions(doc: Document, pattern: re.Pattern[str]) -> bool:
    translations = doc.translations.values()
    return any(pattern.search(t.title) or pattern.search(t.content) for t in translations)


def test_intranet_personas_see_what_the_readme_says(corpora_dir: Path) -> None:
    corpus = _load(corpora_dir, "intranet")

    def readable(reader: Reader) -> int:
        return sum(doc.readable_by(reader) for doc in corpus)

    anonymous = readable(Reader.anonymous())
    bob = readable(Reader(user_id="bob", roles=frozenset({"staff"})))
    alice = readable(Reader(user_id="alice", roles=frozenset({"staff", "hr"})))
    carol = readable(Reader(user_id="carol", roles=frozenset({"staff", "finance"})))
    assert (anonymous, bob, carol, alice) == (16, 32, 33, 39)
