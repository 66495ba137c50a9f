"""``citelab compare``: two run folders read back, matched by case id, B against A."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from citelab.cli import main
from citelab.evals import Case, CaseRecord, GoldTurn, build_scorers, score_records, write_outputs
from citelab.evals.report import compare_runs, load_run

from .._builders import record

GOOD = "Tuition fees are due in May [1]."
BAD = "Tuition fees are due in May [1]. Parking is cheap."


def _write_run(folder: Path, model: str, texts: dict[str, str]) -> None:
    cases = {("d", cid): Case(id=cid, turns=[GoldTurn(question=f"q {cid}?")]) for cid in texts}
    records = [
        CaseRecord(
            key=f"baseline|{model}|d|{cid}|x",
            variant="baseline",
            model=model,
            dataset="d",
            case_id=cid,
            turns=[record(text, ("fees",), question=f"q {cid}?")],
        )
        for cid, text in texts.items()
    ]
    scorers = build_scorers(["citation_recall", "dangling_markers"])
    config = {"suite": {"name": folder.name, "seed": 2}, "scorers": [s.config() for s in scorers]}
    result = score_records(records, cases, scorers, config=config, seed=2)
    write_outputs(result, folder, [], title=folder.name)
    (folder / "records.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8"
    )


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "before", tmp_path / "after"
    ids = [f"c{i:02d}" for i in range(8)]
    _write_run(a, "m1", dict.fromkeys(ids, GOOD))
    # After the change: every case worse, one case gone, one new.
    _write_run(b, "m2", {**dict.fromkeys(ids[1:], BAD), "c99": GOOD})
    return a, b


def test_a_run_reads_back_as_the_result_it_was(runs: tuple[Path, Path]) -> None:
    loaded = load_run(runs[0])
    assert (
        loaded.summary()["value"].tolist() == pd.read_csv(runs[0] / "summary.csv")["value"].tolist()
    )
    assert sorted(loaded.cases) == [("d", f"c{i:02d}") for i in range(8)]
    assert len(loaded.records) == 8
    assert loaded.turns["case_id"].iloc[0] == "c00"  # ids stay text


def test_compare_matches_cases_by_id_and_pairs_the_differences(runs: tuple[Path, Path]) -> None:
    comparison = compare_runs(*runs)
    assert comparison.labels == ("before", "after")
    assert (comparison.matched, comparison.only) == (7, (1, 1))
    diffs = comparison.result.differences().set_index("metric")
    recall = diffs.loc["citation_recall"]
    assert recall["baseline"] == "before"
    assert recall["variant"] == "after"
    assert recall["model"] == "baseline"  # matched by the variant both runs have (one model)
    assert int(recall["cases"]) == 7
    assert recall["difference"] == pytest.approx(-0.5)
    assert (recall["ci_low"], recall["ci_high"]) == pytest.approx((-0.5, -0.5))
    # Every resample the same (and 14 units): too few units, so not a difference that
    # "excludes 0" however far from 0 it is.
    assert bool(recall["too_few"]) is True
    assert bool(recall["excludes_zero"]) is False


def test_the_command_writes_a_comparison_report(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cmp"
    assert main(["compare", str(runs[0]), str(runs[1]), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "7 cases matched; 1 only in before, 1 only in after" in printed
    assert "* baseline" not in printed
    assert "-0.500 — too few units  7 cases" in printed
    assert "[-0.500, -0.500]" not in printed
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Runs compared" in page
    assert "Differences from the baseline, before" in page
    assert json.loads((out / "compare.json").read_text())["matched_cases"] == 7
    data = page.split('id="citelab-cases-data">', 1)[1].split("</script>", 1)[0]
    entries = json.loads(data)["cases"]
    assert len(entries) == 8 + 8
    changed = [e["c"] for e in entries if e["diff"]]
    assert sorted(changed) == [f"c{i:02d}" for i in range(1, 8)]


def test_a_folder_that_is_not_a_run_is_a_clear_error(
    tmp_path: Path, runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(tmp_path / "nowhere"), str(runs[1])]) == 2
    err = capsys.readouterr().err
    assert "not a run folder written by citelab eval" in err
    assert "run.json" in err
    assert main(["compare", str(runs[0]), str(runs[1]), "--labels", "x", "x"]) == 2
    assert "--labels needs two different names" in capsys.readouterr().err


def test_runs_that_share_a_variant_and_model_pair_are_matched_by_that_pair(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    ids = [f"c{i}" for i in range(4)]
    _write_run(a, "m1", dict.fromkeys(ids, GOOD))
    _write_run(b, "m1", dict.fromkeys(ids, GOOD))
    extra = tmp_path / "extra"
    _write_run(extra, "m2", dict.fromkeys(ids, BAD))
    # Run B holds two models: m1 (as in A) and m2.
    for name in ("scores.csv", "cases.csv", "statements.csv", "citations.csv"):
        both = pd.concat([pd.read_csv(b / name), pd.read_csv(extra / name)])
        both.to_csv(b / name, index=False)
    with (b / "records.jsonl").open("a", encoding="utf-8") as sink:
        sink.write((extra / "records.jsonl").read_text(encoding="utf-8"))
    comparison = compare_runs(a, b)
    diffs = comparison.result.differences()
    assert set(diffs["model"]) == {"baseline · m1"}
    assert (diffs["difference"] == 0).all()
    models = set(comparison.result.turns["model"])
    assert models == {"baseline · m1", "baseline · m2"}
