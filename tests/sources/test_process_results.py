"""rag_search rows → sources: gate, rerank, cap, one source per entity, language, access."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from sources_builders import campus_corpus, rag_row

from citelab import ConfigError, InvalidInput
from citelab.corpus import Reader
from citelab.sources import (
    RERANKERS,
    RetrievalSettings,
    Source,
    merge_round,
    process_results,
    register_reranker,
    reranker_names,
    sources_block,
)

ANONYMOUS = Reader.anonymous()
STAFF = Reader(user_id="u7", roles=frozenset({"staff"}))


def keys(sources: Sequence[Source]) -> list[str]:
    return [source.uri for source in sources]


def test_score_gate_drops_chunks_below_the_threshold() -> None:
    rows = [rag_row("1", "a", 0.9), rag_row("2", "b", 0.4), rag_row("3", "c", 0.5)]
    gated = process_results(rows, RetrievalSettings(threshold=0.5), ANONYMOUS)
    assert keys(gated) == ["entity:node/1", "entity:node/3"]
    ungated = process_results(rows, RetrievalSettings(), ANONYMOUS)
    assert len(ungated) == 3


def test_sources_come_back_unnumbered_with_their_tool() -> None:
    sources = process_results([rag_row("1", "a", 0.9)], RetrievalSettings(), ANONYMOUS, tool="kb")
    assert [(s.number, s.tool) for s in sources] == [(None, "kb")]


def test_chunks_of_one_entity_combine_in_retrieval_order() -> None:
    rows = [
        rag_row("1", "first chunk", 0.9, chunk=4),
        rag_row("2", "other entity", 0.8),
        rag_row("1", "second chunk", 0.7, chunk=1),
        rag_row("1", "first chunk", 0.6, chunk=4),  # the same chunk again
    ]
    sources = process_results(rows, RetrievalSettings(), ANONYMOUS)
    assert keys(sources) == ["entity:node/1", "entity:node/2"]
    first = sources[0]
    assert first.content == "first chunk\n\nsecond chunk"
    assert first.chunk_ids == ("node/1:en:4", "node/1:en:1")
    assert first.score == 0.9


def test_entity_cap_skips_rather_than_breaks() -> None:
    rows = [
        rag_row("1", "one a", 0.9),
        rag_row("2", "two a", 0.8),
        rag_row("3", "three", 0.7),  # a third entity: over the cap, skipped
        rag_row("1", "one b", 0.6, chunk=1),  # a later chunk of an admitted entity: kept
        rag_row("2", "two b", 0.5, chunk=1),
    ]
    sources = process_results(rows, RetrievalSettings(entity_cap=2), ANONYMOUS)
    assert keys(sources) == ["entity:node/1", "entity:node/2"]
    assert [s.content for s in sources] == ["one a\n\none b", "two a\n\ntwo b"]


def test_max_results_bounds_the_chunks_kept() -> None:
    rows = [rag_row(str(n), f"chunk {n}", 1 - n / 10) for n in range(1, 6)]
    sources = process_results(rows, RetrievalSettings(max_results=3), ANONYMOUS)
    assert keys(sources) == ["entity:node/1", "entity:node/2", "entity:node/3"]


def test_lexical_reranker_by_name_reorders_before_the_cap() -> None:
    rows = [
        rag_row("1", "housing office hours", 0.9),
        rag_row("2", "tuition fee per semester", 0.8),
        rag_row("3", "fee waivers", 0.7),
    ]
    settings = RetrievalSettings(reranker="lexical", entity_cap=2)
    sources = process_results(rows, settings, ANONYMOUS, query="tuition fee")
    assert keys(sources) == ["entity:node/2", "entity:node/3"]


class _Reverse:
    def rerank(self, query: str, sources: Sequence[Source]) -> list[Source]:
        return list(reversed(sources))


class _Inventing:
    def rerank(self, query: str, sources: Sequence[Source]) -> list[Source]:
        return [Source(entity_type="node", entity_id="99", title="made up")]


def test_a_given_reranker_overrides_the_settings() -> None:
    rows = [rag_row("1", "a", 0.9), rag_row("2", "b", 0.8)]
    settings = RetrievalSettings(reranker="lexical")
    sources = process_results(rows, settings, ANONYMOUS, query="q", reranker=_Reverse())
    assert keys(sources) == ["entity:node/2", "entity:node/1"]


def test_registered_reranker_is_used_by_name() -> None:
    # Registrations inside the block do not outlive the test.
    with RERANKERS.preserved():
        _registered_reranker_is_used_by_name()
    assert "test-reverse" not in reranker_names()


def _registered_reranker_is_used_by_name() -> None:
    register_reranker("test-reverse", _Reverse)
    assert "test-reverse" in reranker_names()
    rows = [rag_row("1", "a", 0.9), rag_row("2", "b", 0.8)]
    sources = process_results(
        rows, RetrievalSettings(reranker="test-reverse"), ANONYMOUS, query="q"
    )
    assert keys(sources) == ["entity:node/2", "entity:node/1"]
    with pytest.raises(ConfigError, match=r"'test-reverse' is already registered.*lexical"):
        register_reranker("test-reverse", _Reverse)


def test_reranker_errors_say_what_is_wrong() -> None:
    rows = [rag_row("1", "a", 0.9)]
    known = r"reranker: unknown reranker 'cross-encoder'; known rerankers: lexical"
    with pytest.raises(ConfigError, match=known):
        process_results(rows, RetrievalSettings(reranker="cross-encoder"), ANONYMOUS, query="q")
    with pytest.raises(InvalidInput, match="reranking needs the query"):
        process_results(rows, RetrievalSettings(reranker="lexical"), ANONYMOUS)
    with pytest.raises(InvalidInput, match="_Inventing returned sources it was not given"):
        process_results(rows, RetrievalSettings(), ANONYMOUS, query="q", reranker=_Inventing())


def test_reader_language_is_preferred_when_the_entity_has_it() -> None:
    corpus = campus_corpus()
    rows = [rag_row("1", "Apply by March.", 0.9, langcode="en")]
    sources = process_results(rows, RetrievalSettings(), Reader(langcode="de"), corpus=corpus)
    assert [(s.langcode, s.title, s.url) for s in sources] == [
        ("de", "Zulassung", "https://uni.example/de/1")
    ]


def test_missing_translation_falls_back_to_the_retrieved_language() -> None:
    corpus = campus_corpus()
    # Entity 1 has en and de, default en; the reader wants French, the chunk was found in German.
    rows = [rag_row("1", "Bewerbung bis März.", 0.9, langcode="de")]
    sources = process_results(rows, RetrievalSettings(), Reader(langcode="fr"), corpus=corpus)
    assert [(s.langcode, s.title) for s in sources] == [("de", "Zulassung")]
    # Entity 2 exists only in German: an English reader still gets the German version.
    rows = [rag_row("2", "Die Gebühr", 0.9, langcode="de")]
    sources = process_results(rows, RetrievalSettings(), ANONYMOUS, corpus=corpus)
    assert [(s.langcode, s.title) for s in sources] == [("de", "Gebühren")]


def test_restricted_entity_never_appears_for_a_reader_without_access() -> None:
    corpus = campus_corpus()
    rows = [rag_row("3", "Internal pay grades for staff.", 0.95), rag_row("1", "Apply.", 0.5)]
    hidden = process_results(rows, RetrievalSettings(), ANONYMOUS, corpus=corpus)
    assert keys(hidden) == ["entity:node/1"]
    rendered = sources_block(merge_round([], hidden))
    references = [s.to_reference().model_dump_json() for s in merge_round([], hidden)]
    for shown in [rendered, *references]:
        assert "pay grades" not in shown
        assert "Salary" not in shown
        assert "node/3" not in shown
    shown_to_staff = process_results(rows, RetrievalSettings(), STAFF, corpus=corpus)
    assert keys(shown_to_staff) == ["entity:node/3", "entity:node/1"]


def test_entity_missing_from_the_corpus_is_dropped() -> None:
    rows = [rag_row("404", "ghost", 0.9), rag_row("1", "Apply.", 0.5)]
    sources = process_results(rows, RetrievalSettings(), ANONYMOUS, corpus=campus_corpus())
    assert keys(sources) == ["entity:node/1"]


def test_without_a_corpus_the_rows_own_data_is_used() -> None:
    rows = [rag_row("7", "text", 0.9, langcode="fr", title="Bourses")]
    rows[0]["fields"] = {"level": "master"}
    [source] = process_results(rows, RetrievalSettings(), ANONYMOUS)
    assert (source.title, source.langcode, source.url) == (
        "Bourses",
        "fr",
        "https://uni.example/fr/7",
    )
    assert source.fields == {"level": "master"}  # bm25_score is retrieval data, not a field


@pytest.mark.parametrize(
    ("view_mode", "expected"),
    [
        ("chunk", "Apply by March."),
        ("teaser", "Apply by March."),
        ("full", "Apply by March.\n\nLate files wait a year."),
        ("label", "Admissions"),
    ],
)
def test_view_modes_render_the_content(view_mode: Any, expected: str) -> None:
    rows = [rag_row("1", "Apply by March.", 0.9)]
    settings = RetrievalSettings(view_mode=view_mode)
    [source] = process_results(rows, settings, ANONYMOUS, corpus=campus_corpus())
    assert source.content == expected


def test_label_view_lists_field_values() -> None:
    rows = [rag_row("10", "", 0.9, entity_type="program")]
    settings = RetrievalSettings(view_mode="label")
    [source] = process_results(rows, settings, ANONYMOUS, corpus=campus_corpus())
    assert source.content == "Physics · BSc · Science"


def test_empty_chunk_falls_back_to_the_label_line() -> None:
    rows = [rag_row("11", "  ", 0.9, entity_type="program")]
    [source] = process_results(rows, RetrievalSettings(), ANONYMOUS, corpus=campus_corpus())
    assert source.content == "Physics · MSc · Science"


def test_teaser_is_cut_at_a_word_boundary() -> None:
    long_text = "word " * 200
    rows = [rag_row("1", long_text, 0.9)]
    [source] = process_results(rows, RetrievalSettings(view_mode="teaser"), ANONYMOUS)
    assert len(source.content) <= 300
    assert source.content.endswith("word…")


@pytest.mark.parametrize(
    ("rows", "problems"),
    [
        ({"results": []}, ["rag_search results: expected a list of rows, got dict"]),
        ("rows", ["expected a list of rows, got str"]),
        ([["node", "1"]], ["results[0]: expected an object, got list"]),
        (
            [rag_row("1", "a", 0.9), {"entity_type": "node", "content": "b", "score": 0.5}],
            ["results[1].entity_id: Field required"],
        ),
        (
            [{**rag_row("1", "a", 0.9), "score": "0.9"}],
            ["results[0].score: Input should be a valid number"],
        ),
        (
            [{**rag_row("1", "a", 0.9), "entity_id": True, "content": None}],
            [
                "results[0].entity_id: Value error, expected a string or an integer, got bool",
                "results[0].content: Input should be a valid string",
            ],
        ),
        (
            [{**rag_row("1", "a", 0.9), "entity_type": "node type"}],
            ["results[0].entity_type: String should match pattern"],
        ),
    ],
)
def test_bad_rows_name_the_row_index_and_field(rows: Any, problems: list[str]) -> None:
    with pytest.raises(InvalidInput) as info:
        process_results(rows, RetrievalSettings(), ANONYMOUS)
    for problem in problems:
        assert problem in str(info.value)


def test_integer_entity_ids_are_read_as_strings() -> None:
    row = {**rag_row("5", "a", 0.9), "entity_id": 5}
    [source] = process_results([row], RetrievalSettings(), ANONYMOUS)
    assert source.uri == "entity:node/5"


def test_sources_carry_their_passage_detail_and_access_for_the_cards() -> None:
    corpus = campus_corpus()
    rows = [
        rag_row("1", "Late files wait a year.", 0.9, chunk=1),
        rag_row("1", "Apply by March.", 0.8),
        rag_row("3", "Internal pay grades for staff.", 0.7),
        rag_row("11", "Physics MSc.", 0.6, entity_type="program"),
    ]
    sources = process_results(rows, RetrievalSettings(), STAFF, corpus=corpus)
    admissions, salaries, physics = sources
    # The passage is the best chunk, located in the document's text.
    assert admissions.passage == "Late files wait a year."
    body = "Apply by March.\n\nLate files wait a year."
    assert admissions.passage_start is not None
    assert body[admissions.passage_start : admissions.passage_end] == admissions.passage
    assert not admissions.restricted
    assert salaries.restricted
    # Physics MSc's passage is not in its (empty) text: no offsets, the passage still shows.
    assert physics.passage == "Physics MSc."
    assert physics.passage_start is None
    assert physics.detail == "MSc"
    card = physics.model_copy(update={"number": 3}).to_reference()
    assert (card.detail, card.passage, card.restricted) == ("MSc", "Physics MSc.", False)
    staff_card = salaries.model_copy(update={"number": 2}).to_reference()
    assert staff_card.restricted
    assert staff_card.detail is None  # no short text field
