"""The judge's agreement on injected faults: each citation of a perturbed turn is intact or
faulted by its recorded injections, the judge's verdict is its single-source statement's
citation_precision row, and the figures carry their units and "too few units"."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from citelab.evals.cards import wilson_interval
from citelab.evals.records import CaseRecord, TurnRecord
from citelab.evals.report._judges import faults_html
from citelab.evals.results import (
    FAULT_COLUMNS,
    MIN_FAULT_UNITS,
    EvalResult,
    fault_agreement,
    fault_truth,
)
from citelab.evals.scorers import build_scorers


def _wrong(original: int, injected: int) -> dict[str, Any]:
    return {"kind": "wrong", "marker_index": 0, "original": original, "injected": injected}


def _turn(raw: str, mapping: dict[int, int], injections: list[dict[str, Any]]) -> TurnRecord:
    return TurnRecord(
        raw_text=raw, text=raw, mapping=mapping, injections=injections, perturbed=True
    )


def _row(case: str, statement: int, number: int, hit: bool, **extra: Any) -> dict[str, Any]:
    return {
        "variant": "baseline",
        "model": "perturbed",
        "dataset": "d",
        "case_id": case,
        "turn": 0,
        "metric": "citation_precision",
        "statement": statement,
        "number": number,
        "uri": f"u{number}",
        "hit": hit,
        "judgeable": True,
        **extra,
    }


def _result(records: list[CaseRecord], citations: list[dict[str, Any]]) -> EvalResult:
    return EvalResult(
        scores=pd.DataFrame(),
        turns=pd.DataFrame(),
        details={"citation": pd.DataFrame(citations)},
        scorers=build_scorers(["citation_precision"]),
        records=records,
    )


def _record(case: str, turn: TurnRecord, model: str = "perturbed") -> CaseRecord:
    return CaseRecord(
        key=f"baseline/{model}/d/{case}",
        variant="baseline",
        model=model,
        dataset="d",
        case_id=case,
        turns=[turn],
    )


def test_truth_follows_the_injections_through_the_mapping() -> None:
    # Held 4 written by the model, held 7 put in by a fault; finalize renumbers 4→1, 7→2.
    turn = _turn("A [4]. B [7]. C [9].", {4: 1, 7: 2}, [_wrong(4, 7)])
    assert fault_truth(turn) == {1: False, 2: True}  # 9 did not survive finalize
    # A number cited intact once and faulted once has no single truth: left out.
    both = _turn("A [4]. B [4].", {4: 1}, [_wrong(3, 4)])
    assert fault_truth(both) == {}


def _known_run(cases: int) -> EvalResult:
    """Per case: statement 0 cites an intact source, statement 1 a faulted one, statement 2
    cites both (two sources: no single verdict). The judge calls intact citations of even
    cases supported (odd ones not), and faulted citations of cases divisible by 3 supported."""
    records, rows = [], []
    for i in range(cases):
        case = f"c{i}"
        turn = _turn("A [1]. B [2]. C [1][3].", {1: 1, 2: 2, 3: 3}, [_wrong(1, 2)])
        records.append(_record(case, turn))
        rows += [
            _row(case, 0, 1, i % 2 == 0),
            _row(case, 1, 2, i % 3 == 0),
            _row(case, 2, 1, True),
            _row(case, 2, 3, True),
        ]
    # A clean model's rows and an unjudgeable statement are not counted.
    clean = TurnRecord(raw_text="A [1].", text="A [1].", mapping={1: 1})
    records.append(_record("c0", clean, model="extractive"))
    rows.append({**_row("c0", 0, 1, False), "model": "extractive"})
    rows.append(_row("c1", 3, 1, False, judgeable=False))
    return _result(records, rows)


def test_sensitivity_and_specificity_are_the_known_shares() -> None:
    plain = fault_agreement(_known_run(60))
    assert list(plain.columns) == FAULT_COLUMNS
    table = plain.set_index("measure")
    assert list(table.index) == ["sensitivity", "specificity"]
    sensitivity, specificity = table.loc["sensitivity"], table.loc["specificity"]
    # Intact: 60 units, 30 called supported; faulted: 60 units, 20 called supported.
    assert (sensitivity["agreed"], sensitivity["units"]) == (30, 60)
    assert sensitivity["value"] == pytest.approx(0.5)
    assert (specificity["agreed"], specificity["units"]) == (40, 60)
    assert specificity["value"] == pytest.approx(40 / 60)
    # Wilson's interval, as the cards compute it.
    assert (sensitivity["ci_low"], sensitivity["ci_high"]) == pytest.approx(wilson_interval(30, 60))
    assert not sensitivity["too_few"]
    assert not specificity["too_few"]
    assert table["model"].unique().tolist() == ["perturbed"]
    # Beside them, the card's figures (the default judge's shipped card).
    assert 0 < sensitivity["card_value"] < 1
    assert "WiCE" in sensitivity["card"]
    assert specificity["card_low"] <= specificity["card_value"] <= specificity["card_high"]


def test_too_few_units_says_so_in_the_table_and_the_report() -> None:
    table = fault_agreement(_known_run(5))
    assert table["units"].tolist() == [5, 5]
    assert MIN_FAULT_UNITS > 5
    assert table["too_few"].all()
    page = faults_html(table)
    assert page.count("(too few units)") == 2
    assert "<b>" not in page
    assert "✔" not in page
    assert "✓" not in page
    assert "3 of 5" in page  # intact: cases 0, 2, 4 called supported


def test_a_run_without_a_perturbing_model_has_no_table() -> None:
    clean = TurnRecord(raw_text="A [1].", text="A [1].", mapping={1: 1})
    result = _result([_record("c0", clean, "extractive")], [_row("c0", 0, 1, True)])
    assert fault_agreement(result).empty
    assert faults_html(fault_agreement(result)) == ""


def test_the_report_shows_the_section() -> None:
    table = fault_agreement(_known_run(60))
    page = faults_html(table)
    assert "Judge agreement on injected faults" in page
    assert "known rates" in page
    assert "30 of 60" in page
    assert "40 of 60" in page
    assert "0.500 [" in page
    assert "too few units</" not in page
