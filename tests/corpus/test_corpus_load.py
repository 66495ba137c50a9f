import json
from pathlib import Path

import pytest

from citelab import InvalidInput
from citelab.corpus import Corpus, Document, load_corpus


def _line(**doc: object) -> str:
    base: dict[str, object] = {
        "entity_type": "node",
        "entity_id": "1",
        "translations": {"en": {"title": "A", "content": "Text."}},
    }
    base.update(doc)
    return json.dumps(base)


def _load_error(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput) as info:
        load_corpus(path)
    return str(info.value)


def test_nested_field_errors_name_line_and_path(tmp_path: Path) -> None:
    text = _load_error(
        tmp_path,
        _line(),
        _line(entity_id="2", access={"public": "sometimes"}),
        _line(entity_id="3", translations={"en": {"title": "B", "colour": "red"}}),
        _line(entity_id="bad id"),
    )
    assert "3 problem(s)" in text
    assert "corpus.jsonl:2: field access.public:" in text
    assert "corpus.jsonl:3: field translations.en.colour: Extra inputs are not permitted" in text
    assert "corpus.jsonl:4: field entity_id:" in text


def test_document_level_errors_are_reported_on_their_line(tmp_path: Path) -> None:
    text = _load_error(
        tmp_path,
        _line(translations={}),
        "[1, 2]",
        _line(entity_id="3", default_langcode="fr"),
    )
    assert "corpus.jsonl:1: field translations: Value error, a document needs at least one" in text
    assert "corpus.jsonl:2: field (document):" in text
    assert "corpus.jsonl:3: field (document): Value error, default_langcode 'fr'" in text


def test_duplicate_entities_name_both_lines(tmp_path: Path) -> None:
    text = _load_error(tmp_path, _line(), "", _line(entity_id="2"), _line())
    assert "corpus.jsonl:4: duplicate entity node/1 (first on line 1)" in text


def test_missing_file_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"cannot read corpus .*nothing\.jsonl"):
        load_corpus(tmp_path / "nothing.jsonl")


def test_blank_lines_are_skipped_and_order_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_text("\n".join([_line(entity_id="b"), "   ", _line(entity_id="a")]), "utf-8")
    corpus = load_corpus(path)
    assert [d.entity_id for d in corpus] == ["b", "a"]
    assert corpus.name == "ok"
    assert corpus.path == path
    assert ("node", "a") in corpus
    assert corpus.get("node", "zzz") is None


def test_content_hash_changes_with_any_document_change() -> None:
    doc = Document.model_validate(json.loads(_line()))
    same = Corpus([Document.model_validate(json.loads(_line()))])
    edited = Corpus([Document.model_validate(json.loads(_line(fields={"x": 1})))])
    assert Corpus([doc]).content_hash() == same.content_hash()
    assert Corpus([doc]).content_hash() != edited.content_hash()


def test_in_memory_duplicates_are_rejected() -> None:
    doc = Document.model_validate(json.loads(_line()))
    with pytest.raises(InvalidInput, match="duplicate entity node/1"):
        Corpus([doc, doc])
