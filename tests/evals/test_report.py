import json
import re
from pathlib import Path

import pandas as pd
import pytest

from citelab.evals import (
    Case,
    CaseRecord,
    Finding,
    GoldTurn,
    RoundRecord,
    build_scorers,
    evaluate_findings,
    score_records,
    write_outputs,
)

from ._builders import record

EVIL = '<script>alert("x")</script>'
FEES, PARKING = "entity:page/fees", "entity:page/parking"
TEXT = "Tuition fees are due in May [1]. Permits cost 30 euros per term [2]."


def _rounds(second: dict[int, str]) -> list[RoundRecord]:
    return [
        RoundRecord(index=0, visible={1: FEES}, searches=1),
        RoundRecord(index=1, text=TEXT, visible=second),
    ]


def _result():  # type: ignore[no-untyped-def]
    cases = {("d", f"c{i}"): Case(id=f"c{i}", turns=[GoldTurn(question=EVIL)]) for i in range(6)}
    records = []
    for i in range(6):
        for variant, second in (("baseline", {1: FEES, 2: PARKING}), (EVIL, {1: PARKING, 2: FEES})):
            turn = record(TEXT, ("fees", "parking"), rounds=_rounds(second), question=EVIL)
            records.append(
                CaseRecord(
                    key=f"{variant}{i}",
                    variant=variant,
                    model="m",
                    dataset="d",
                    case_id=f"c{i}",
                    turns=[turn],
                )
            )
    scorers = build_scorers(["citation_recall", "numbering_stability", "dangling_markers"])
    return score_records(records, cases, scorers, config={"suite": {"name": EVIL}}, seed=1)


def test_findings_compare_intervals_in_the_predicted_direction() -> None:
    result = _result()
    falls = Finding(
        title="t",
        metric="numbering_stability",
        baseline="baseline",
        variant=EVIL,
        subset="multi_round",
        expect="lower",
    )
    rises = falls.model_copy(update={"expect": "higher"})
    missing = falls.model_copy(update={"variant": "nope"})
    checked = evaluate_findings(result, [falls, rises, missing])
    assert [c.holds for c in checked] == [True, False, False]
    assert checked[0].values["baseline · m"][0] == 1.0
    assert checked[0].values[f"{EVIL} · m"][0] == 0.0
    assert "as predicted" in checked[0].sentence
    assert "no value for 'nope'" in checked[2].sentence


def test_threshold_findings_check_one_or_every_variant() -> None:
    result = _result()
    holds = Finding(
        title="t",
        metric="numbering_stability",
        variant="baseline",
        expect="at_least",
        threshold=1.0,
    )
    every = Finding(
        title="t", metric="dangling_markers", variant="*", expect="at_most", threshold=0.0
    )
    fails = Finding(
        title="t", metric="numbering_stability", variant="*", expect="at_least", threshold=0.5
    )
    assert [c.holds for c in evaluate_findings(result, [holds, every, fails])] == [
        True,
        True,
        False,
    ]


def test_findings_must_be_complete() -> None:
    with pytest.raises(ValueError, match="give variant and baseline"):
        Finding(title="t", metric="m", variant="v", expect="lower")
    with pytest.raises(ValueError, match="needs a threshold"):
        Finding(title="t", metric="m", variant="*", expect="at_most")


def test_outputs_are_written_and_the_report_is_self_contained_and_escaped(tmp_path: Path) -> None:
    finding = Finding(
        title=EVIL,
        metric="numbering_stability",
        baseline="baseline",
        variant=EVIL,
        subset="multi_round",
    )
    written = write_outputs(_result(), tmp_path, [finding])
    for name in ("summary", "cases", "statements", "citations"):
        assert (tmp_path / f"{name}.csv").is_file()
        assert (tmp_path / f"{name}.parquet").is_file()
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert set(summary["metric"]) == {"citation_recall", "numbering_stability", "dangling_markers"}
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "cases.parquet")[["case_id"]],
        pd.read_csv(tmp_path / "cases.csv")[["case_id"]],
    )
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["findings"][0]["holds"] is True
    assert run["findings"][0]["finding"]["title"] == EVIL
    page = written["report.html"].read_text()
    assert "<script" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert len(re.findall(r'<img alt="[^"]*" src="data:image/svg\+xml;base64,', page)) == 2
    assert not re.search(r'(src|href)="(?!data:)', page)  # no external assets
    assert "Numbering stability per round" in page


def test_writing_a_report_leaves_the_matplotlib_backend_alone(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("svg")  # a backend the report must not replace with Agg
    before = (matplotlib.get_backend(), matplotlib.rcParams["svg.hashsalt"])
    written = write_outputs(_result(), tmp_path, [])
    assert "data:image/svg+xml;base64," in written["report.html"].read_text()
    assert (matplotlib.get_backend(), matplotlib.rcParams["svg.hashsalt"]) == before
