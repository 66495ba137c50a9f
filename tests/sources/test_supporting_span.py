"""The part of a passage a claim rests on (``supporting_span``) and the source quotes built
from it: a sentence, not the whole retrieved chunk."""

from __future__ import annotations

from citelab.contract import Anchor
from citelab.sources import Source, source_quotes, supporting_span

PASSAGE = (
    "The Data Science MSc admits 45 students per year.  Applications close on 31 May.\n"
    "The semester fee is 312 euros. Teaching is in English."
)


def _span(claim: str, passage: str = PASSAGE) -> str:
    start, end = supporting_span(claim, passage)
    return passage[start:end]


def test_a_claim_rests_on_the_sentence_sharing_its_words() -> None:
    assert _span("Every student pays a semester fee of 312 euros") == (
        "The semester fee is 312 euros."
    )
    assert _span("Courses are taught in English") == "Teaching is in English."


def test_a_claim_drawn_from_two_adjacent_sentences_gets_both() -> None:
    assert _span("The MSc admits 45 students and applications close on 31 May") == (
        "The Data Science MSc admits 45 students per year.  Applications close on 31 May."
    )


def test_case_accents_and_plurals_do_not_hide_a_match() -> None:
    passage = "Le café ouvre à huit heures. Les étudiants paient cinq euros."
    assert _span("ETUDIANT paie 5 euro", passage) == "Les étudiants paient cinq euros."


def test_without_a_shared_word_the_whole_passage_is_the_span() -> None:
    assert supporting_span("Dogs may swim", PASSAGE) == (0, len(PASSAGE))
    assert supporting_span("", PASSAGE) == (0, len(PASSAGE))
    assert supporting_span("anything", "") == (0, 0)


def test_source_quotes_carry_the_supporting_sentence_with_its_offsets() -> None:
    document = "Intro line.\n" + PASSAGE
    start = document.index(PASSAGE)
    source = Source(
        number=1,
        uri="entity:page/ds",
        title="Data Science",
        content=document,
        passage=PASSAGE,
        passage_start=start,
        passage_end=start + len(PASSAGE),
    )
    text = "The fee is 312 euros per semester [1]. It is taught in English [1]."
    anchors = [
        Anchor(source_uri=source.uri, cited_text=text[0:33], start_index=0, end_index=33),
        Anchor(source_uri=source.uri, cited_text=text[39:62], start_index=39, end_index=62),
    ]
    quotes = source_quotes(anchors, [source])
    assert [q.text for q in quotes] == ["The semester fee is 312 euros.", "Teaching is in English."]
    for quote in quotes:
        assert quote.start_index is not None
        assert quote.end_index is not None
        assert document[quote.start_index : quote.end_index] == quote.text
    unplaced = source.model_copy(update={"passage_start": None, "passage_end": None})
    [first, _] = source_quotes(anchors, [unplaced])
    assert (first.text, first.start_index, first.end_index) == (quotes[0].text, None, None)
