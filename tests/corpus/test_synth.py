import io
import json
from pathlib import Path

import pytest

from citelab import InvalidInput
from citelab.corpus import (
    ChunkingParams,
    Document,
    SynthParams,
    iter_chunks,
    load_corpus,
    synth_documents,
    write_synthetic_corpus,
)

SMALL = SynthParams(vocabulary=2_000)


def _text(entities: int, seed: int) -> str:
    out = io.StringIO()
    write_synthetic_corpus(out, entities, seed=seed, params=SMALL)
    return out.getvalue()


def test_same_seed_same_bytes_other_seed_other_bytes() -> None:
    assert _text(30, seed=7) == _text(30, seed=7)
    assert _text(30, seed=7) != _text(30, seed=8)


def test_a_prefix_does_not_depend_on_the_total_size() -> None:
    small, large = _text(10, seed=3), _text(40, seed=3)
    assert large.startswith(small)


def test_synthetic_documents_are_valid_and_every_paragraph_is_one_chunk(tmp_path: Path) -> None:
    path = tmp_path / "synth.jsonl"
    paragraphs = write_synthetic_corpus(path, 300, seed=1)
    corpus = load_corpus(path)
    assert len(corpus) == 300
    assert sum(1 for _ in iter_chunks(corpus, ChunkingParams())) == paragraphs
    languages = {lang for doc in corpus for lang in doc.translations}
    assert languages == {"en", "de", "fr"}
    restricted = [doc for doc in corpus if not doc.access.public]
    assert 10 <= len(restricted) <= 60
    assert all(doc.access.users or doc.access.roles for doc in restricted)


def test_languages_do_not_share_words() -> None:
    words: dict[str, set[str]] = {"en": set(), "de": set(), "fr": set()}
    for doc in synth_documents(200, seed=2, params=SMALL):
        for lang, translation in doc["translations"].items():
            words[lang].update(translation["content"].lower().replace(".", "").split())
    assert not words["en"] & words["de"]
    assert not words["en"] & words["fr"]


def test_params_shape_the_corpus() -> None:
    params = SynthParams(vocabulary=500, paragraphs=(1, 1), other_languages=0.0, restricted=1.0)
    docs = [Document.model_validate(d) for d in synth_documents(20, seed=0, params=params)]
    assert all(list(d.translations) == ["en"] for d in docs)
    assert all("\n\n" not in d.translations["en"].content for d in docs)
    assert all(not d.access.public for d in docs)
    assert json.loads(json.dumps(docs[0].model_dump(mode="json")))["entity_type"] == "page"


def test_bad_params_are_reported_together() -> None:
    with pytest.raises(InvalidInput) as info:
        SynthParams(vocabulary=5, paragraphs=(3, 1), restricted=1.5)
    message = str(info.value)
    assert "vocabulary must be between 10 and 100000, got 5" in message
    assert "paragraphs must be a range" in message
    assert "restricted must be a probability" in message


def test_negative_entity_count_is_rejected() -> None:
    with pytest.raises(InvalidInput, match="entities must not be negative"):
        list(synth_documents(-1))
