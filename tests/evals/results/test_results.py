import math

import numpy as np
import pandas as pd
import pytest

from citelab import InvalidInput
from citelab.evals import (
    Case,
    CaseRecord,
    GoldTurn,
    build_scorers,
    score_records,
)
from citelab.evals.results import (
    ScoredRows,
    bootstrap_interval,
    result_of,
    score_record,
    score_rows,
)

from .._builders import record

GOOD = "Tuition fees are due in May [1]."
BAD = "Tuition fees are due in May [1]. Parking is cheap."


def _case(case_id: str, turns: int = 1, tags: tuple[str, ...] = ()) -> Case:
    return Case(
        id=case_id, turns=[GoldTurn(question=f"q{i}") for i in range(turns)], tags=list(tags)
    )


def _records(variant: str, texts: list[str]) -> list[CaseRecord]:
    return [
        CaseRecord(
            key=f"{variant}/c{i}",
            variant=variant,
            model="m",
            dataset="d",
            case_id=f"c{i}",
            turns=[record(text, ("fees",))],
        )
        for i, text in enumerate(texts)
    ]


def _result(**kwargs: object):  # type: ignore[no-untyped-def]
    cases = {("d", f"c{i}"): _case(f"c{i}") for i in range(4)}
    scorers = build_scorers(["citation_recall", {"name": "citation_recall", "alce_compat": True}])
    records = _records("a", [GOOD, GOOD, BAD, BAD]) + _records("b", [BAD, BAD, BAD, BAD])
    return score_records(records, cases, scorers, seed=3, **kwargs)  # type: ignore[arg-type]


def test_every_level_is_a_dataframe_with_the_keys() -> None:
    result = _result()
    cases = result.to_pandas("case")
    assert len(cases) == 8
    assert {"variant", "case_id", "turn", "citation_recall", "citation_recall_alce"} <= set(cases)
    statements = result.to_pandas("statement")
    # Variant a has 1+1+2+2 statements, b has 4×2; both scorers write one row per statement.
    assert len(statements) == 2 * (6 + 8)
    assert set(statements["metric"]) == {"citation_recall", "citation_recall_alce"}
    assert result.to_pandas("citation").empty
    with pytest.raises(InvalidInput, match="unknown level 'turn'"):
        result.to_pandas("turn")  # type: ignore[arg-type]


def test_micro_pools_statements_and_macro_averages_answers() -> None:
    summary = _result().to_pandas("variant").set_index(["variant", "metric"])
    # Variant a: statements 1,1,(1,0),(1,0) → micro 4/6; per answer 1,1,.5,.5 → macro .75.
    assert summary.loc[("a", "citation_recall"), "value"] == pytest.approx(4 / 6)
    assert summary.loc[("a", "citation_recall_alce"), "value"] == pytest.approx(0.75)
    assert summary.loc[("b", "citation_recall"), "value"] == pytest.approx(0.5)
    assert summary.loc[("a", "citation_recall"), "cases"] == 4
    assert summary.loc[("a", "citation_recall"), "units"] == 6


def test_intervals_are_seeded_and_contain_the_value() -> None:
    first = _result().to_pandas("variant")
    again = _result().to_pandas("variant")
    pd.testing.assert_frame_equal(first, again)
    assert (first["ci_low"] <= first["value"]).all()
    assert (first["value"] <= first["ci_high"]).all()
    # Every resample the same: too few units, and Wilson's interval, never a zero-width one.
    constant = first[first["variant"] == "b"]
    assert constant["too_few"].all()
    assert (constant["interval"] == "wilson").all()
    assert (constant["ci_low"] < constant["ci_high"]).all()


def test_bootstrap_interval_of_a_known_ratio() -> None:
    rng = np.random.default_rng(0)
    numerators = np.array([1.0] * 50 + [0.0] * 50)
    low, high = bootstrap_interval(numerators, np.ones(100), rng, resamples=2000)
    assert low == pytest.approx(0.4, abs=0.03)
    assert high == pytest.approx(0.6, abs=0.03)
    empty = bootstrap_interval(np.array([]), np.array([]), rng)
    assert all(math.isnan(bound) for bound in empty)  # no cases, no interval


def test_subsets_select_turns_by_rounds_and_tags() -> None:
    result = _result()
    assert result.summary(subset="multi_round").empty
    assert len(result.summary(subset="single_round")) == 4
    assert result.summary(subset="tag:restricted").empty
    with pytest.raises(InvalidInput, match="unknown subset"):
        result.summary(subset="some")


def test_a_record_without_its_case_is_an_error() -> None:
    scorers = build_scorers(["no_answer"])
    with pytest.raises(InvalidInput, match="no case c0 in d"):
        score_records(_records("a", [GOOD]), {}, scorers)


def test_failed_turns_are_grouped_by_cause_most_frequent_first() -> None:
    from citelab.evals.results._results import error_cause, error_summary

    assert error_cause("ModelError: case 'a' took 12.5 s") == error_cause(
        "ModelError: case 'b' took 3 s"
    )
    turns = pd.DataFrame(
        {
            "variant": ["v", "v", "w", "w"],
            "model": ["m"] * 4,
            "dataset": ["d"] * 4,
            "case_id": ["c1", "c2", "c3", "c4"],
            "turn": [0, 0, 0, 1],
            "error": [
                None,
                "ModelError: no answer from 'http://x' within 60 s",
                "ModelError: no answer from 'http://y' within 30 s",
                "not run: an earlier turn of the case failed",
            ],
        }
    )
    summary = error_summary(turns)
    assert summary["count"].tolist() == [2, 1]
    assert summary.loc[0, "first_message"] == "ModelError: no answer from 'http://x' within 60 s"
    assert summary.loc[0, "case_id"] == "c2"
    assert summary.loc[1, "first_message"].startswith("not run")
    assert error_summary(turns[turns["error"].isna()]).empty


@pytest.mark.parametrize("count", [1, 7, 1_000, 3_001])
@pytest.mark.parametrize("block", [1, 2_000, 250_000])
def test_bootstrap_interval_drawn_in_blocks_equals_one_whole_draw(
    count: int, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Drawing the resamples a block at a time gives the interval of one whole draw."""
    from citelab.evals import _stats

    rng = np.random.default_rng(count)
    numerators = rng.integers(0, 3, count).astype(float)
    denominators = rng.integers(0, 4, count).astype(float)

    monkeypatch.setattr(_stats, "_BLOCK", 10**12)  # one whole draw, as before
    expected = bootstrap_interval(numerators, denominators, np.random.default_rng(7), resamples=300)
    assert all(math.isfinite(bound) for bound in expected)

    monkeypatch.setattr(_stats, "_BLOCK", block)
    got = bootstrap_interval(numerators, denominators, np.random.default_rng(7), resamples=300)
    assert got == expected


def _rows(columns: dict[str, list[object]]) -> list[tuple[object, ...]]:
    return list(zip(*columns.values(), strict=True))


def _row_frames(table: ScoredRows) -> dict[str, pd.DataFrame]:
    """The table's frames built the plain way: one mapping per row, as pandas reads them."""
    turns = [dict(zip(table.turns, row, strict=True)) for row in _rows(table.turns)]
    scores = [dict(zip(table.scores, row, strict=True)) for row in _rows(table.scores)]
    return {
        "turns": pd.DataFrame(turns, columns=list(table.turns)),
        "scores": pd.DataFrame(scores, columns=list(table.scores)),
    }


def test_scored_rows_of_many_records_are_their_rows_one_record_at_a_time() -> None:
    cases = {("d", f"c{i}"): _case(f"c{i}") for i in range(4)}
    scorers = build_scorers(["citation_recall", "citation_precision", "no_answer"])
    records = _records("a", [GOOD, BAD, "No citations here.", GOOD])
    together = score_rows(records, cases, scorers)
    one_by_one = ScoredRows.concat(score_record(r, cases, scorers) for r in records)
    assert together == one_by_one
    assert together.keys == [r.key for r in records]
    assert len(together.scores["metric"]) == len(records) * len(scorers)
    assert together.details["citation"], "the precision scorer wrote no citation rows"
    # Split anywhere and put back together: the same table.
    halves = ScoredRows.concat(
        [score_rows(records[:1], cases, scorers), score_rows(records[1:], cases, scorers)]
    )
    assert halves == together

    result = result_of(together, records, cases, scorers)
    plain = _row_frames(together)
    pd.testing.assert_frame_equal(result.turns, plain["turns"])
    pd.testing.assert_frame_equal(result.scores, plain["scores"])
    assert result.scores["value"].dtype == float
    expected_citations = pd.DataFrame(together.details["citation"])
    pd.testing.assert_frame_equal(result.to_pandas("citation"), expected_citations)


def test_rows_of_other_records_are_refused() -> None:
    cases = {("d", f"c{i}"): _case(f"c{i}") for i in range(2)}
    scorers = build_scorers(["citation_recall"])
    records = _records("a", [GOOD, BAD])
    scored = score_rows(records, cases, scorers)
    with pytest.raises(ValueError, match="not those of the records"):
        result_of(scored, records[::-1], cases, scorers)
    with pytest.raises(ValueError, match="not those of the records"):
        result_of(scored, records[:1], cases, scorers)
