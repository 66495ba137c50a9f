from pathlib import Path

import pytest

from citelab import InvalidInput
from citelab.corpus import Access, Document, Reader, Translation, load_corpus


def _doc(**kw: object) -> Document:
    base: dict[str, object] = {
        "entity_type": "node",
        "entity_id": "1",
        "translations": {"en": Translation(title="Hello", content="x")},
    }
    base.update(kw)
    return Document.model_validate(base)


def test_translation_falls_back_to_default() -> None:
    doc = _doc(translations={"en": {"title": "A"}, "de": {"title": "B"}})
    assert doc.translation("de")[0] == "de"
    assert doc.translation("fr") == ("en", doc.translations["en"])


def test_access_rules() -> None:
    doc = _doc(access=Access(public=False, users=frozenset({"u1"}), roles=frozenset({"staff"})))
    assert not doc.readable_by(Reader.anonymous())
    assert doc.readable_by(Reader(user_id="u1"))
    assert doc.readable_by(Reader(user_id="u2", roles=frozenset({"staff"})))
    assert not doc.readable_by(Reader(user_id="u2", roles=frozenset({"student"})))


def test_load_reports_every_bad_line_with_field(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"entity_type": "node", "entity_id": "1", "translations": {"en": {"title": "A"}}}\n'
        "{not json\n"
        '{"entity_type": "node", "entity_id": "2", "translations": {"en": {"title": ""}}}\n',
        encoding="utf-8",
    )
    with pytest.raises(InvalidInput) as info:
        load_corpus(path)
    text = str(info.value)
    assert "c.jsonl:2: invalid JSON" in text
    assert "c.jsonl:3: field translations.en.title" in text


def test_default_langcode_must_exist() -> None:
    with pytest.raises(ValueError, match="default_langcode 'de' has no translation"):
        _doc(default_langcode="de")
