"""Citations of sources without a passage are not judgeable, and span-level statements.

A source whose ``content`` is empty (a vendor's url_citation, an AnswerMessage's
resource_link) gives the judge nothing to read: citelab's recall and precision leave such
statements and citations out of their units and count them as ``judgeable: False`` rows,
instead of scoring them 0. ALCE-compatible mode keeps ALCE's rule (the title is judged).
"""

from __future__ import annotations

import pytest

from citelab import ConfigError
from citelab.evals import GoldTurn
from citelab.evals.records import SourceRecord, TurnRecord
from citelab.evals.scorers import citation_precision, citation_recall, split_statements_by_span

from .._builders import message, source

GOLD = GoldTurn(question="When are fees due?")
BARE = SourceRecord(number=2, uri="https://uni.example/bare", title="Fees page")


def _record(text: str, sources: list[SourceRecord], anchors: tuple[dict, ...] = ()) -> TurnRecord:
    return TurnRecord(
        text=text,
        raw_text=text,
        sources=sources,
        candidates=sources,
        message=message(text, sources, anchors),
    )


def test_a_statement_citing_only_sources_without_passage_is_not_a_unit() -> None:
    text = "Tuition fees are due in May [1]. The library opens at 8 am [2]."
    score = citation_recall()(_record(text, [source(1, "fees"), BARE]), GOLD)
    assert (score.numerator, score.denominator, score.value) == (1, 1, 1.0)
    assert [row.get("judgeable", True) for row in score.rows] == [True, False]
    assert score.rows[1]["reason"] == "no_passage"


def test_every_statement_unjudgeable_is_no_value_not_zero() -> None:
    text = "Tuition fees are due in May [2]."
    for scorer in (citation_recall(), citation_precision()):
        score = scorer(_record(text, [source(1, "fees"), BARE]), GOLD)
        assert score.value is None, scorer.metric
        assert score.denominator == 0
        assert [row["judgeable"] for row in score.rows] == [False]


def test_a_mixed_statement_counts_when_the_readable_passages_support_it() -> None:
    text = "Tuition fees are due in May [1][2]."
    recall = citation_recall()(_record(text, [source(1, "fees"), BARE]), GOLD)
    assert (recall.numerator, recall.denominator) == (1, 1)
    precision = citation_precision()(_record(text, [source(1, "fees"), BARE]), GOLD)
    # [1] is judged (needed: it supports the statement); [2] has no passage to judge.
    assert (precision.numerator, precision.denominator) == (1, 1)
    assert [row.get("judgeable", True) for row in precision.rows] == [True, False]


def test_a_mixed_statement_the_readable_passages_do_not_support_is_unjudgeable() -> None:
    # The library page does not say when fees are due, but the bare page might: no verdict.
    text = "Tuition fees are due in May [1][2]."
    sources = [source(1, "library"), BARE]
    recall = citation_recall()(_record(text, sources), GOLD)
    assert (recall.denominator, recall.rows[0]["reason"]) == (0, "no_passage")
    precision = citation_precision()(_record(text, sources), GOLD)
    assert precision.denominator == 0
    assert [row["judgeable"] for row in precision.rows] == [False, False]


def test_alce_compatible_mode_keeps_alces_rule() -> None:
    text = "Tuition fees are due in May [2]."
    score = citation_recall(alce_compat=True)(_record(text, [source(1, "fees"), BARE]), GOLD)
    assert (score.numerator, score.denominator) == (0, 1)


# --- span granularity ---------------------------------------------------------------------

SPAN_TEXT = "Tuition fees are due in May and the canteen serves free lunch on Fridays."
SPAN = {
    "sourceUri": "entity:page/fees",
    "citedText": "Tuition fees are due in May",
    "startIndex": 0,
    "endIndex": 27,
}


def test_a_cited_span_is_its_own_statement_under_span_granularity() -> None:
    marked = "Tuition fees are due in May[1] and the canteen serves free lunch on Fridays."
    record = TurnRecord(
        text=marked,
        raw_text=SPAN_TEXT,
        sources=[source(1, "fees")],
        candidates=[source(1, "fees")],
        message=message(SPAN_TEXT, [source(1, "fees")], [SPAN]),
    )
    # Per sentence, the uncited claim about lunch sinks the cited one.
    assert citation_recall()(record, GOLD).value == 0.0
    span = citation_recall(granularity="span")(record, GOLD)
    assert span.metric == "citation_recall_span"
    assert span.value == 1.0
    assert [row["claim"] for row in span.rows] == ["Tuition fees are due in May"]
    assert citation_precision(granularity="span")(record, GOLD).value == 1.0


def test_span_statements_add_the_sentences_no_span_touches() -> None:
    text = "Fees are due in May. Parking is free. The library opens at 8 am."
    statements = split_statements_by_span(text, [(0, 19, (1,)), (38, 63, (2,)), (0, 19, (1,))])
    assert [(s.claim, s.citations) for s in statements] == [
        ("Fees are due in May", (1,)),
        ("Parking is free.", ()),
        ("The library opens at 8 am", (2,)),
    ]
    assert [s.index for s in statements] == [0, 1, 2]


def test_span_granularity_is_citelabs_mode_only() -> None:
    with pytest.raises(ConfigError, match="granularity"):
        citation_recall(granularity="span", alce_compat=True)
    with pytest.raises(ConfigError, match="granularity must be sentence or span"):
        citation_precision(granularity="word")  # type: ignore[arg-type]
