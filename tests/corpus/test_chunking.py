import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from citelab.corpus import (
    ChunkingParams,
    Corpus,
    Document,
    chunk_document,
    chunk_id,
    chunk_spans,
    iter_chunks,
)

# Text made of the pieces chunking cares about: words, sentence ends, paragraph breaks,
# odd whitespace, combining marks, astral characters and long unbroken runs.
_PIECES = st.sampled_from(
    [
        "word",
        "Ünïcödé",
        "e\u0301",
        "🙂",
        "👩‍🔬",
        "x" * 37,
        ". ",
        "! ",
        "?\u201d ",
        "… ",
        " ",
        "\t",
        "\n",
        "\n\n",
        "\n \n",
        "\r\n\r\n",
        "\u00a0",
        "\u2003",
    ]
)
_CONTENT = st.lists(_PIECES, max_size=80).map("".join) | st.text(max_size=300)


def _doc(content: str, **extra: object) -> Document:
    data: dict[str, object] = {
        "entity_type": "node",
        "entity_id": "5",
        "translations": {"en": {"title": "T", "content": content}},
    }
    data.update(extra)
    return Document.model_validate(data)


@settings(max_examples=300, deadline=None)
@given(content=_CONTENT, max_chars=st.integers(min_value=8, max_value=120))
def test_spans_are_ordered_trimmed_bounded_and_cover_every_visible_character(
    content: str, max_chars: int
) -> None:
    spans = chunk_spans(content, max_chars)
    if not content.strip():
        assert spans == [(0, 0)]
        return
    covered: set[int] = set()
    previous_end = 0
    for start, end in spans:
        text = content[start:end]
        assert previous_end <= start < end <= len(content)
        assert end - start <= max_chars
        assert text == text.strip()
        covered.update(range(start, end))
        previous_end = end
    visible = {i for i, char in enumerate(content) if not char.isspace()}
    assert visible <= covered


@settings(max_examples=150, deadline=None)
@given(content=_CONTENT, max_chars=st.integers(min_value=8, max_value=400))
def test_chunk_text_is_exactly_the_content_slice(content: str, max_chars: int) -> None:
    chunks = chunk_document(_doc(content), ChunkingParams(max_chars=max_chars))
    assert [c.chunk_id for c in chunks] == [f"node/5:en:{i}" for i in range(len(chunks))]
    for chunk in chunks:
        assert chunk.text == content[chunk.start : chunk.end]
        assert (chunk.entity_type, chunk.entity_id, chunk.langcode) == ("node", "5", "en")


def test_paragraphs_are_packed_up_to_the_limit() -> None:
    content = "First paragraph here.\n\nSecond one.\n\n" + "Third paragraph is long. " * 3
    texts = [content[s:e] for s, e in chunk_spans(content, 40)]
    assert texts == ["First paragraph here.\n\nSecond one."] + ["Third paragraph is long."] * 3


def test_a_long_paragraph_is_cut_at_sentence_ends() -> None:
    content = "Alpha beta gamma. Delta epsilon! Zeta eta theta? Iota kappa."
    texts = [content[s:e] for s, e in chunk_spans(content, 34)]
    assert texts == ["Alpha beta gamma. Delta epsilon!", "Zeta eta theta? Iota kappa."]


def test_a_sentence_longer_than_the_limit_is_cut_at_whitespace() -> None:
    content = "one two three four five six seven eight nine ten"
    texts = [content[s:e] for s, e in chunk_spans(content, 15)]
    assert texts == ["one two three", "four five six", "seven eight", "nine ten"]


def test_a_word_longer_than_the_limit_is_cut_hard_but_not_inside_a_combining_sequence() -> None:
    content = "abcdefg" + "e\u0301" + "xyz"  # the combining accent sits at index 8
    spans = chunk_spans(content, 8)
    assert spans[0] == (0, 7)
    assert content[spans[1][0]] == "e"
    assert "".join(content[s:e] for s, e in spans) == content


def test_blank_content_still_yields_one_empty_chunk() -> None:
    chunks = chunk_document(_doc("  \n\n "))
    assert [(c.chunk_id, c.start, c.end, c.text) for c in chunks] == [("node/5:en:0", 0, 0, "")]


def test_ids_depend_only_on_the_document() -> None:
    text = "One paragraph.\n\nAnother paragraph."
    alone = chunk_document(_doc(text), ChunkingParams(max_chars=20))
    neighbour = _doc("Something else entirely.", entity_id="4")
    corpus = Corpus([neighbour, _doc(text)])
    in_corpus = [c for c in iter_chunks(corpus, ChunkingParams(max_chars=20)) if c.entity_id == "5"]
    assert alone == in_corpus
    assert [c.chunk_id for c in alone] == ["node/5:en:0", "node/5:en:1"]


def test_every_translation_is_chunked_with_its_own_ids() -> None:
    doc = _doc(
        "English text.",
        translations={
            "en": {"title": "T", "content": "English text."},
            "de": {"title": "T", "content": "Deutscher Text.\n\nZweiter Absatz."},
        },
    )
    chunks = chunk_document(doc, ChunkingParams(max_chars=16))
    assert [c.chunk_id for c in chunks] == ["node/5:en:0", "node/5:de:0", "node/5:de:1"]
    assert chunks[0].uri == "entity:node/5"


def test_chunk_id_format() -> None:
    assert chunk_id("program", "data-science-msc", "en", 3) == "program/data-science-msc:en:3"


@pytest.mark.parametrize("max_chars", [0, 7, 100_001])
def test_chunking_params_reject_unreasonable_sizes(max_chars: int) -> None:
    with pytest.raises(ValidationError, match="max_chars"):
        ChunkingParams(max_chars=max_chars)
