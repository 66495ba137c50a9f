from citelab.corpus import ChunkingParams, Corpus, Document, summarize_corpus


def _doc(entity_id: str, translations: dict[str, str], **extra: object) -> Document:
    data: dict[str, object] = {
        "entity_type": "node",
        "entity_id": entity_id,
        "default_langcode": next(iter(translations)),
        "translations": {lang: {"title": "T", "content": c} for lang, c in translations.items()},
    }
    data.update(extra)
    return Document.model_validate(data)


def test_summary_counts_languages_chunks_fields_and_access() -> None:
    corpus = Corpus(
        [
            _doc("1", {"en": "One.\n\nTwo paragraphs here.", "de": "Eins."}, fields={"a": 1}),
            _doc("2", {"de": ""}, fields={"a": 2, "b": "x"}),
            _doc("3", {"en": "Secret."}, access={"public": False, "users": ["u2", "u1"]}),
            _doc(
                "4", {"fr": "Rôle."}, entity_type="page", access={"public": False, "roles": ["hr"]}
            ),
        ],
        name="mini",
    )
    summary = summarize_corpus(corpus, ChunkingParams(max_chars=10))
    assert summary.name == "mini"
    assert summary.entities == 4
    assert summary.entity_types == {"node": 3, "page": 1}
    assert summary.translations == 5
    assert summary.languages == {"de": 2, "en": 2, "fr": 1}
    assert summary.missing_translations == 4
    assert summary.empty_content == 1
    # "One.\n\nTwo" · "paragraphs" · "here." for doc 1 en, then one chunk per other translation
    assert summary.chunks == 7
    assert summary.fields == {"a": 2, "b": 1}
    assert summary.access.public == 2
    assert summary.access.restricted == 2
    assert summary.access.users == ["u1", "u2"]
    assert summary.access.roles == ["hr"]
