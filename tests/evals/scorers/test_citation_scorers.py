"""Hand-worked cases for citation recall and precision (ALCE definitions) and gold claims."""

import pytest

from citelab.evals import (
    GoldClaim,
    GoldTurn,
    LexicalJudge,
    build_scorer,
)
from citelab.evals.scorers import (
    citation_precision,
    citation_recall,
    claim_attribution,
    claim_recall,
)

from .._builders import record

GOLD = GoldTurn(question="When are fees due?")


def _hits(score: object) -> list[bool]:
    return [bool(row["hit"]) for row in score.rows]  # type: ignore[attr-defined]


def test_recall_counts_cited_and_supported_statements() -> None:
    text = "Tuition fees are due in May [1]. The library opens at 8 am [1]. Parking is cheap."
    score = citation_recall()(record(text), GOLD)
    assert _hits(score) == [True, False, False]
    assert [row["reason"] for row in score.rows] == ["supported", "unsupported", "uncited"]
    assert (score.numerator, score.denominator) == (1, 3)
    assert score.value == pytest.approx(1 / 3)


def test_recall_concatenates_the_cited_sources() -> None:
    text = "Tuition fees are due in May and the library opens at 8 am [1][2]."
    score = citation_recall()(record(text), GOLD)
    assert _hits(score) == [True]


def test_precision_keeps_a_redundant_citation() -> None:
    # Source 2 alone supports the statement, as does source 1: neither is irrelevant.
    text = "Tuition fees are due in May [1][2]."
    score = citation_precision()(record(text, ("fees", "fees-copy")), GOLD)
    assert _hits(score) == [True, True]


def test_precision_flags_a_citation_that_adds_nothing() -> None:
    # [2] alone does not support it, and [1] without [2] still does: [2] is irrelevant.
    text = "Tuition fees are due in May [1][2]."
    score = citation_precision()(record(text), GOLD)
    assert _hits(score) == [True, False]
    assert score.value == 0.5


def test_precision_keeps_citations_that_are_only_jointly_sufficient() -> None:
    text = "Tuition fees are due in May and the library opens at 8 am [1][2]."
    score = citation_precision()(record(text), GOLD)
    assert _hits(score) == [True, True]


def test_every_citation_of_an_unsupported_statement_is_imprecise() -> None:
    text = "Parking permits cost 30 euros per term [1][2]."
    score = citation_precision()(record(text), GOLD)
    assert _hits(score) == [False, False]
    assert all(row["statement_supported"] is False for row in score.rows)


def test_turns_that_should_not_be_answered_are_left_to_the_no_answer_scorer() -> None:
    refuse = GoldTurn(question="Who won the cup?", expect_answer=False)
    turn = record("I could not find an answer.", (), no_answer=True)
    assert citation_recall()(turn, refuse).value is None
    assert citation_precision()(turn, refuse).value is None
    # On an answerable question the substituted message counts against recall.
    assert citation_recall()(turn, GOLD).value == 0.0
    assert citation_precision()(turn, GOLD).value is None


def test_alce_mode_reads_only_the_first_line_and_its_marker_grammar() -> None:
    text = "Tuition fees are due in May [1, 2].\nThe library opens at 8 am [2]."
    native = citation_recall()(record(text), GOLD)
    alce = citation_recall(alce_compat=True)(record(text), GOLD)
    assert native.denominator == 2
    assert native.value == 1.0
    assert alce.denominator == 1
    assert alce.rows[0]["citations"] == [1]  # ALCE reads "[1, 2]" as a citation of 1 only


def test_alce_mode_caps_citations_at_three_and_keeps_repeats() -> None:
    text = "Tuition fees are due in May [2][2][2][1]."
    alce = citation_precision(alce_compat=True)(record(text), GOLD)
    assert [row["number"] for row in alce.rows] == [2, 2, 2]
    assert alce.value == 0.0  # the capped citations do not support the statement
    native = citation_precision()(record(text), GOLD)
    assert [row["number"] for row in native.rows] == [2, 1]


def test_alce_mode_gives_an_uncited_answer_zero_precision() -> None:
    alce = citation_precision(alce_compat=True)(record("Fees are due in May."), GOLD)
    assert alce.value == 0.0
    assert citation_precision()(record("Fees are due in May."), GOLD).value is None


def test_alce_mode_averages_per_answer() -> None:
    scorer = citation_recall(alce_compat=True)
    assert scorer.aggregate == "macro"
    assert scorer.metric == "citation_recall_alce"
    assert citation_recall().aggregate == "micro"


def test_alce_mode_rejects_out_of_range_citations_without_counting_them() -> None:
    text = "Tuition fees are due in May [1][9]."
    assert citation_recall(alce_compat=True)(record(text), GOLD).rows[0]["reason"] == "out_of_range"
    assert citation_precision(alce_compat=True)(record(text), GOLD).value == 0.0


def test_scorers_rebuild_from_their_configuration() -> None:
    scorer = citation_precision(judge={"name": "lexical", "threshold": 0.5}, alce_compat=True)
    rebuilt = build_scorer(scorer.config())
    assert rebuilt.config() == scorer.config()
    assert rebuilt.config()["max_citations"] == 3
    judge = rebuilt.judge  # type: ignore[attr-defined]
    assert isinstance(judge, LexicalJudge)
    assert judge.threshold == 0.5


def test_claim_recall_and_attribution_tell_stating_from_citing_the_right_entity() -> None:
    gold = GoldTurn(
        question="When are fees due?",
        claims=[
            GoldClaim(text="Tuition fees are due in May", supported_by=["entity:page/fees"]),
            GoldClaim(text="Late payment costs 50 euros", supported_by=["entity:page/fees"]),
        ],
    )
    # The first claim is stated and cited to the fees page; the second is stated but cited to
    # the library page (the same-label mistake).
    text = "Tuition fees are due in May [1]. Late payment costs a fee of 50 euros [2]."
    assert _hits(claim_recall()(record(text), gold)) == [True, True]
    attribution = claim_attribution()(record(text), gold)
    assert _hits(attribution) == [True, False]
    assert attribution.rows[1]["stated"] is True
    refused = record("No answer.", (), no_answer=True)
    assert claim_recall()(refused, gold).value == 0.0


def test_alce_mode_reads_conversation_numbers_as_the_numbers_they_are() -> None:
    # A follow-up under conversation-wide numbering cites [3] and [5] only (1, 2, 4 belong to
    # earlier turns). ALCE's docs list for it is numbered 1..5 with holes: [3] is source 3,
    # [0] the last one (5), and a hole ([2]) is out of range, as in citelab's own mode.
    base = record("x")
    fees, library = base.sources
    turn = base.model_copy(
        update={
            "sources": [
                fees.model_copy(update={"number": 3}),
                library.model_copy(update={"number": 5}),
            ],
        }
    )
    for text, reason in [
        ("Tuition fees are due in May [3].", "supported"),
        ("The library opens at 8 am on weekdays [0].", "supported"),
        ("Tuition fees are due in May [2].", "out_of_range"),
    ]:
        scored = turn.model_copy(update={"text": text})
        assert citation_recall(alce_compat=True)(scored, GOLD).rows[0]["reason"] == reason
        own = citation_recall()(scored, GOLD).rows[0]["reason"]
        assert own == (reason if "[0]" not in text else "out_of_range")
