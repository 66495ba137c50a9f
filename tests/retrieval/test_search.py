from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citelab import InvalidInput
from citelab.corpus import ChunkingParams, Corpus, Document, Reader
from citelab.retrieval import SearchIndex

DocumentFactory = Callable[..., Document]


def make_document(entity_id: str, content: str = "", **extra: Any) -> Document:
    data: dict[str, Any] = {
        "entity_type": "node",
        "entity_id": entity_id,
        "translations": {"en": {"title": f"Document {entity_id}", "content": content}},
    }
    data.update(extra)
    return Document.model_validate(data)


def _index(*documents: Document, max_chars: int = 800) -> SearchIndex:
    return SearchIndex.build(Corpus(documents), ChunkingParams(max_chars=max_chars))


def _ids(hits: list[Any]) -> list[str]:
    return [hit.chunk.chunk_id for hit in hits]


def test_a_distinctive_query_finds_its_chunk_first(document: DocumentFactory) -> None:
    index = _index(
        document("1", "The library opens at eight and closes at midnight."),
        document("2", "Parking permits are sold at the gate.\n\nThe gate closes at ten."),
        document("3", "The canteen serves soup at noon."),
        max_chars=40,
    )
    hits = index.search("where are parking permits sold", Reader.anonymous(), k=3)
    assert _ids(hits)[0] == "node/2:en:0"
    content = index.corpus.get("node", "2").translations["en"].content  # type: ignore[union-attr]
    assert hits[0].chunk.text == content[hits[0].chunk.start : hits[0].chunk.end]
    assert hits[0].chunk.text == "Parking permits are sold at the gate."


def test_scores_are_ordered_and_normalized(document: DocumentFactory) -> None:
    index = _index(
        document("1", "alpha beta"),
        document("2", "alpha gamma delta epsilon zeta"),
        document("3", "beta gamma delta epsilon zeta"),
    )
    hits = index.search("alpha beta", Reader.anonymous(), k=10)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < s <= 1.0 for s in scores)
    assert all(hit.bm25_score > 0 for hit in hits)
    # Document 1 is the best chunk for both terms, so it reaches the maximum.
    assert hits[0].chunk.entity_id == "1"
    assert hits[0].score == pytest.approx(1.0)
    assert index.search("alpha", Reader.anonymous(), k=1)[0].score == pytest.approx(1.0)


def test_only_chunks_sharing_a_term_are_returned(document: DocumentFactory) -> None:
    index = _index(document("1", "apples and pears"), document("2", "plums"))
    assert _ids(index.search("pears", Reader.anonymous(), k=5)) == ["node/1:en:0"]
    assert index.search("bananas", Reader.anonymous()) == []
    assert index.search("   ", Reader.anonymous()) == []
    assert index.search("the and of", Reader.anonymous()) == []


def test_k_must_be_positive(document: DocumentFactory) -> None:
    with pytest.raises(InvalidInput, match="k must be at least 1, got 0"):
        _index(document("1", "x")).search("x", Reader.anonymous(), k=0)


def test_ties_break_by_corpus_order(document: DocumentFactory) -> None:
    index = _index(*(document(str(n), "identical words here") for n in (5, 3, 9, 1)))
    hits = index.search("identical", Reader.anonymous(), k=3)
    assert [hit.chunk.entity_id for hit in hits] == ["5", "3", "9"]


def test_titles_and_field_values_are_searchable(document: DocumentFactory) -> None:
    index = _index(
        document(
            "1",
            "",
            translations={"en": {"title": "Quantum Engineering", "content": ""}},
            fields={"degree": "MSc", "faculty": "Engineering", "ects": 120, "tags": ["new"]},
        ),
        document("2", "Unrelated text about engineering."),
    )
    hits = index.search("quantum msc", Reader.anonymous())
    assert _ids(hits) == ["node/1:en:0"]
    assert (hits[0].chunk.text, hits[0].chunk.start, hits[0].chunk.end) == ("", 0, 0)
    assert _ids(index.search("120 new", Reader.anonymous())) == ["node/1:en:0"]


def test_search_can_be_restricted_to_one_language(document: DocumentFactory) -> None:
    bilingual = document(
        "1",
        translations={
            "en": {"title": "Holidays", "content": "Holiday calendar for the office."},
            "de": {"title": "Urlaub", "content": "Urlaubskalender für das office."},
        },
    )
    index = _index(bilingual, document("2", "The office plan."))
    everywhere = index.search("office", Reader.anonymous(), k=10)
    assert {hit.chunk.langcode for hit in everywhere} == {"en", "de"}
    german = index.search("office", Reader.anonymous(), k=10, langcode="de")
    assert _ids(german) == ["node/1:de:0"]
    assert index.search("office", Reader.anonymous(), langcode="fr") == []
    assert index.languages == ["en", "de"]


def test_restricted_chunks_never_displace_readable_ones(document: DocumentFactory) -> None:
    # Ten restricted documents match far better than the six public ones: a reader without
    # access must still get five public results, not the leftovers of a top five.
    secret = {"public": False, "roles": ["staff"]}
    restricted = [document(f"r{n}", "zebra zebra zebra", access=secret) for n in range(10)]
    public = [document(f"p{n}", f"zebra and {n} other words in a longer text") for n in range(6)]
    index = _index(*restricted, *public)
    anonymous = index.search("zebra", Reader.anonymous(), k=5)
    assert len(anonymous) == 5
    assert all(hit.chunk.entity_id.startswith("p") for hit in anonymous)
    staff = index.search("zebra", Reader(user_id="u", roles=frozenset({"staff"})), k=5)
    assert all(hit.chunk.entity_id.startswith("r") for hit in staff)


def test_chunk_positions_round_trip(document: DocumentFactory) -> None:
    index = _index(document("1", "One.\n\nTwo."), document("2", "Three."), max_chars=8)
    assert len(index) == 3
    assert [index.chunk(i).chunk_id for i in range(3)] == [
        "node/1:en:0",
        "node/1:en:1",
        "node/2:en:0",
    ]
    assert index.vocabulary_size > 0


def test_an_index_without_any_term_returns_nothing() -> None:
    empty = SearchIndex.build(Corpus([]))
    assert len(empty) == 0
    assert empty.search("anything", Reader.anonymous()) == []
    only_stopwords = _index(make_document("1", "", translations={"en": {"title": "the"}}))
    assert only_stopwords.search("the", Reader.anonymous()) == []


# -- access filtering is exact: compare with an oracle ------------------------------------

_USERS = ["u1", "u2", "u3"]
_ROLES = ["staff", "hr", "finance"]
_WORDS = ["river", "stone", "maple", "harbor", "lantern", "meadow"]


def _access(n: int) -> dict[str, Any]:
    if n % 4 == 0:
        return {"public": True}
    return {"public": False, "users": [_USERS[n % 3]], "roles": [_ROLES[(n // 3) % 3]]}


def _documents(public: bool) -> list[Document]:
    docs = []
    for n in range(60):
        words = " ".join(_WORDS[(n * k) % len(_WORDS)] for k in range(1, 2 + n % 5))
        access = {"public": True} if public else _access(n)
        docs.append(make_document(str(n), f"{words}. Entry {n}.", access=access))
    return docs


_GUARDED = SearchIndex.build(Corpus(_documents(public=False)))
# Access does not change BM25 scores, so an all-public twin ranks every chunk the same way.
_OPEN = SearchIndex.build(Corpus(_documents(public=True)))


@settings(max_examples=60, deadline=None)
@given(
    user=st.sampled_from([None, *_USERS]),
    roles=st.frozensets(st.sampled_from(_ROLES)),
    query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join),
    k=st.integers(min_value=1, max_value=30),
)
def test_hits_are_exactly_the_best_readable_chunks(
    user: str | None, roles: frozenset[str], query: str, k: int
) -> None:
    reader = Reader(user_id=user, roles=roles)
    everything = _OPEN.search(query, Reader.anonymous(), k=len(_OPEN))
    readable = [
        (hit.chunk.chunk_id, hit.bm25_score)
        for hit in everything
        if _GUARDED.corpus.get("node", hit.chunk.entity_id).readable_by(reader)  # type: ignore[union-attr]
    ]
    hits = _GUARDED.search(query, reader, k=k)
    assert [(h.chunk.chunk_id, h.bm25_score) for h in hits] == readable[:k]
    assert all(hit.document.readable_by(reader) for hit in hits)
