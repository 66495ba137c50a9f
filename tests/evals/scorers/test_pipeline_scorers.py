"""Hand-worked cases for the pipeline scorers."""

from citelab.evals import GoldTurn
from citelab.evals.records import (
    RestrictedEntity,
    RoundRecord,
)
from citelab.evals.scorers import (
    anchor_validity,
    cross_turn_stability,
    dangling_markers,
    first_citation_order,
    gold_sources,
    no_answer,
    numbering_stability,
    source_leakage,
    uncited_dropping,
)

from .._builders import message, record, source

GOLD = GoldTurn(question="When are fees due?")
FEES, LIBRARY, PARKING = "entity:page/fees", "entity:page/library", "entity:page/parking"


def _hits(score: object) -> list[bool]:
    return [bool(row["hit"]) for row in score.rows]  # type: ignore[attr-defined]


def _anchor(uri: str, text: str, start: int, end: int) -> dict[str, object]:
    return {"sourceUri": uri, "citedText": text[start:end], "startIndex": start, "endIndex": end}


def test_anchor_validity_checks_slice_uri_and_marker() -> None:
    text = "Tuition fees are due in May [1]. The library opens at 8 am [2]."
    good = _anchor(FEES, text, 0, text.index(" [1]"))
    with_marker = _anchor(LIBRARY, text, text.index("The"), text.index(" [2]"))
    wrong_slice = {**good, "citedText": "Tuition fees"}
    out_of_bounds = {**good, "endIndex": 500}
    not_a_link = {**good, "sourceUri": PARKING}
    wrong_marker = _anchor(
        LIBRARY, text, 0, text.index(" [1]")
    )  # the marker after it cites [1], not [2]
    anchors = [good, with_marker, wrong_slice, out_of_bounds, not_a_link, wrong_marker]
    score = anchor_validity()(record(text, anchors=anchors), GOLD)
    assert [row["problem"] for row in score.rows] == [
        None,
        None,
        "slice_mismatch",
        "out_of_bounds",
        "uri_not_a_source",
        "no_marker",
    ]
    assert score.value == 2 / 6


def test_anchor_offsets_are_code_points() -> None:
    text = "Café 🎓 fees are due in May [1]."
    anchor = _anchor(FEES, text, 0, text.index(" [1]"))
    assert anchor["citedText"] == "Café 🎓 fees are due in May"
    assert anchor_validity()(record(text, ("fees",), anchors=[anchor]), GOLD).value == 1.0


def test_uncited_dropping_wants_exactly_the_cited_sources_kept() -> None:
    raw = "Tuition fees are due in May [1]. Permits cost 30 euros [3]."
    final = "Tuition fees are due in May [1]. Permits cost 30 euros [2]."
    held = ("fees", "library", "parking")
    right = record(final, ("fees", "parking"), raw_text=raw, candidates=held)
    assert _hits(uncited_dropping()(right, GOLD)) == [True, True, True]
    kept_uncited = record(final, ("fees", "library", "parking"), raw_text=raw, candidates=held)
    assert _hits(uncited_dropping()(kept_uncited, GOLD)) == [True, False, True]
    lost_cited = record(
        "Tuition fees are due in May [1].", ("fees",), raw_text=raw, candidates=held
    )
    assert _hits(uncited_dropping()(lost_cited, GOLD)) == [True, True, False]


def test_first_citation_order_and_falling_priorities() -> None:
    in_order = record("Permits cost 30 euros [1]. Fees are due [2].", ("parking", "fees"))
    assert first_citation_order()(in_order, GOLD).value == 1.0
    swapped = record("Permits cost 30 euros [2]. Fees are due [1].", ("fees", "parking"))
    assert _hits(first_citation_order()(swapped, GOLD)) == [False, False]
    flat = in_order.model_copy(
        update={
            "message": {
                **in_order.message,
                "content": [
                    block
                    if block["type"] == "text"
                    else {**block, "annotations": {"priority": 0.5}}
                    for block in in_order.message["content"]
                ],
            }
        }
    )
    assert _hits(first_citation_order()(flat, GOLD)) == [True, False]


def _follow_up(text: str, numbered: dict[int, str], *, keep: int = 0, **fields: object) -> object:
    """A follow-up turn whose final sources carry the given numbers, in that order."""
    final = [source(number, page) for number, page in numbered.items()]
    return record(text, **fields).model_copy(
        update={"sources": final, "message": message(text, final), "keep": keep}
    )


def test_first_citation_order_at_conversation_scope() -> None:
    # Turn 1 gave out [1] and [2]; this turn cites [2] again and one new source as [3].
    kept = _follow_up("Again [2]. New [3].", {2: "fees", 3: "parking"}, keep=2)
    assert _hits(first_citation_order()(kept, GOLD)) == [True, True]
    # A new source must continue the count: [4] after keep=2 skips 3.
    skipped = _follow_up("Again [2]. New [4].", {2: "fees", 4: "parking"}, keep=2)
    assert _hits(first_citation_order()(skipped, GOLD)) == [True, False]
    # At turn scope the same text is wrong: numbers must be 1..k.
    turn_scope = _follow_up("Again [2]. New [3].", {2: "fees", 3: "parking"})
    assert _hits(first_citation_order()(turn_scope, GOLD)) == [False, False]


def test_cross_turn_stability_checks_numbers_against_earlier_turns() -> None:
    earlier = {1: "entity:page/library", 2: "entity:page/fees"}
    stable = _follow_up("Fees [2]. Parking [3].", {2: "fees", 3: "parking"}, earlier=earlier)
    score = cross_turn_stability()(stable, GOLD)
    assert _hits(score) == [True, True]
    assert score.rows[0]["earlier_number"] == 2
    # Per-turn numbering: fees is [1] now, but [1] was the library and fees was [2].
    renumbered = _follow_up("Fees [1]. Parking [2].", {1: "fees", 2: "parking"}, earlier=earlier)
    score = cross_turn_stability()(renumbered, GOLD)
    assert _hits(score) == [False, False]
    assert (score.rows[0]["earlier_number"], score.rows[0]["earlier_uri"]) == (
        2,
        "entity:page/library",
    )
    assert score.value == 0.0
    first_turn = record("Fees [1].", ("fees",))
    assert cross_turn_stability()(first_turn, GOLD).value is None


def _two_rounds(second_visible: dict[int, str]) -> list[RoundRecord]:
    return [
        RoundRecord(index=0, text="", visible={1: FEES}, searches=1),
        RoundRecord(
            index=1,
            text="Fees are due in May [1]. Permits cost 30 euros [2].",
            visible=second_visible,
            searches=0,
        ),
    ]


def test_numbering_stability_compares_the_visible_meaning_with_the_resolution() -> None:
    text = "Fees are due in May [1]. Permits cost 30 euros [2]."
    rewritten = _two_rounds({1: FEES, 2: PARKING})
    stable = record(text, ("fees", "parking"), rounds=rewritten)
    assert _hits(numbering_stability()(stable, GOLD)) == [True, True]
    # Without the rewrite the model saw the second search's results numbered by position:
    # it meant the parking page by [1] and [2], the turn held fees as [1].
    by_position = _two_rounds({1: PARKING, 2: LIBRARY})
    held = ("fees", "parking", "library")
    unstable = record(text, ("fees", "parking"), candidates=held, rounds=by_position)
    score = numbering_stability()(unstable, GOLD)
    assert [(row["meant"], row["resolved"]) for row in score.rows] == [
        (PARKING, FEES),
        (LIBRARY, PARKING),
    ]
    assert score.value == 0.0


def test_numbering_stability_skips_numbers_the_model_never_saw() -> None:
    rounds = [RoundRecord(index=0, text="Fees are due in May [1][9].", visible={1: FEES})]
    score = numbering_stability()(
        record("Fees are due in May [1].", ("fees",), rounds=rounds), GOLD
    )
    assert [row["number"] for row in score.rows] == [1]


def test_content_meaning_catches_a_number_that_never_meant_the_quoted_source() -> None:
    text = "Tuition fees are due in May [2]. Permits cost 30 euros per term [2]."
    rounds = [RoundRecord(index=0, text=text, visible={1: FEES, 2: PARKING})]
    turn = record(text, ("fees", "parking"), rounds=rounds)
    assert _hits(numbering_stability()(turn, GOLD)) == [True, True]
    content = numbering_stability(meaning="content")
    assert content.metric == "numbering_stability_content"
    assert _hits(content(turn, GOLD)) == [False, True]


def test_dangling_markers_count_numbers_without_a_held_source() -> None:
    raw = "Fees are due in May [1]. Permits cost 30 euros [7, 2]."
    turn = record(
        "Fees are due in May [1]. Permits cost 30 euros [2].", ("fees", "parking"), raw_text=raw
    )
    score = dangling_markers()(turn, GOLD)
    assert _hits(score) == [False, True, False]
    assert score.value == 1 / 3
    assert not dangling_markers().higher_is_better


def test_no_answer_names_each_outcome() -> None:
    refuse = GoldTurn(question="Who won the cup?", expect_answer=False)
    substituted = record("Sorry, no answer.", (), no_answer=True)
    uncited = record("I could not find an answer to that in the sources I have.", ())
    grounded = record("Fees [1].", ("fees",))
    outcomes = [
        no_answer()(substituted, refuse).rows[0]["outcome"],
        no_answer()(uncited, refuse).rows[0]["outcome"],
        no_answer()(grounded, refuse).rows[0]["outcome"],
        no_answer()(uncited, GOLD).rows[0]["outcome"],
        no_answer()(grounded, GOLD).rows[0]["outcome"],
    ]
    assert outcomes == [
        "correct_no_answer",
        "correct_no_answer",
        "answered_without_grounds",
        "wrongly_declined",
        "answered",
    ]
    assert no_answer()(uncited, refuse).rows[0]["substituted"] is False


def test_source_leakage_finds_restricted_entities_everywhere() -> None:
    secret = RestrictedEntity(uri=PARKING, titles=["Parking"], phrases=["30 euros per term"])
    clean = record("Fees are due in May [1].", ("fees",), restricted=[secret])
    assert source_leakage()(clean, GOLD).value == 0.0
    leaked = record("Permits cost 30 euros per term [2].", ("fees", "parking"), restricted=[secret])
    score = source_leakage()(leaked, GOLD)
    assert score.value == 1.0
    assert {row["where"] for row in score.rows} == {
        "references",
        "sources",
        "resource_links",
        "text",
    }
    in_references_only = record(
        "Fees are due [1].", ("fees",), candidates=("fees", "parking"), restricted=[secret]
    )
    assert [row["where"] for row in source_leakage()(in_references_only, GOLD).rows] == [
        "references"
    ]


def test_gold_sources_require_and_forbid_entities() -> None:
    gold = GoldTurn(question="q", must_cite=[FEES], must_not_cite=[LIBRARY])
    assert gold_sources()(record("Fees [1].", ("fees",)), gold).value == 1.0
    assert _hits(gold_sources()(record("Library [1].", ("library",)), gold)) == [False, False]
    assert gold_sources()(record("x", ("fees",)), GOLD).value is None


def test_a_failed_turn_is_not_scored() -> None:
    failed = record("", (), error="model timed out")
    for scorer in (anchor_validity(), dangling_markers(), no_answer(), source_leakage()):
        assert scorer(failed, GOLD).value is None
