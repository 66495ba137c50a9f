"""A suite with a perturbing model: every turn records what was injected, and that record is
the truth (it agrees with the answers, also when the inner model's calls come from the cache)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from citelab._errors import ConfigError
from citelab.contract import parse_markers
from citelab.evals import CaseRecord, rescore, run
from citelab.evals.records import read_records

SUITE = """
name = "faults"
datasets = ["{dataset}"]
seed = 0
concurrency = 4
scorers = ["citation_precision"]

[[models]]
spec = "extractive"

[[models]]
spec = "perturbed"
label = "perturbed"
limit = 6
options = {{ seed = 5, rates = {{ wrong = 0.5, dropped = 0.2 }} }}

[[variants]]
name = "baseline"
"""


def _numbers(text: str) -> list[int]:
    return [n for marker in parse_markers(text) for n in marker.numbers]


def _records(out: Path) -> dict[tuple[str, str], CaseRecord]:
    return {(r.model, r.case_id): r for r in read_records(out / "records.jsonl").values()}


def _injections(records: dict[tuple[str, str], CaseRecord]) -> dict[object, object]:
    return {
        key: [(t.perturbed, t.raw_text, t.injections) for t in record.turns]
        for key, record in records.items()
    }


def _run(tmp_path: Path, out: Path) -> dict[tuple[str, str], CaseRecord]:
    dataset = Path(__file__).parents[3] / "fixtures" / "datasets" / "university.jsonl"
    suite = tmp_path / "faults.toml"
    suite.write_text(SUITE.format(dataset=dataset.as_posix()), encoding="utf-8")
    run(suite, out_dir=out, progress=False)
    return _records(out)


def test_each_perturbed_turn_records_its_injections_and_they_are_the_truth(
    tmp_path: Path,
) -> None:
    records = _run(tmp_path, tmp_path / "out")
    perturbed = {case: r for (model, case), r in records.items() if model == "perturbed"}
    assert len(perturbed) == 6
    injected = 0
    for case, record in perturbed.items():
        inner = records[("extractive", case)]
        for turn, clean in zip(record.turns, inner.turns, strict=True):
            assert turn.perturbed
            assert not clean.perturbed
            assert clean.injections == []
            original, written = _numbers(clean.raw_text), _numbers(turn.raw_text)
            dropped = {i["marker_index"] for i in turn.injections if i["kind"] == "dropped"}
            replaced = {i["marker_index"]: i["injected"] for i in turn.injections}
            # Applying the recorded faults to the inner model's answer gives the answer seen.
            expected = [
                replaced.get(index, number)
                for index, number in enumerate(original)
                if index not in dropped
            ]
            assert written == expected, case
            for injection in turn.injections:
                assert original[injection["marker_index"]] == injection["original"]
                assert (
                    injection["kind"] != "wrong" or injection["injected"] != injection["original"]
                )
            injected += len(turn.injections)
    assert injected >= 5


def test_injections_are_recorded_when_the_inner_answers_come_from_the_cache(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    first = _run(tmp_path, out)
    (out / "records.jsonl").unlink()  # the model cache stays: every call is a hit
    again = _run(tmp_path, out)
    assert _injections(again) == _injections(first)
    assert any(turn.injections for r in again.values() for turn in r.turns)


def test_rescoring_a_limited_run_scores_the_cases_that_run_answered(tmp_path: Path) -> None:
    """A model's seeded sample is drawn from the cases the run had (here the first 8 of the
    dataset): rescoring plans with the run's limit, so it draws the same sample and scores
    the same answers, not the recorded ones a full-dataset sample happens to hit."""
    dataset = Path(__file__).parents[3] / "fixtures" / "datasets" / "university.jsonl"
    suite = tmp_path / "faults.toml"
    suite.write_text(SUITE.format(dataset=dataset.as_posix()), encoding="utf-8")
    out = tmp_path / "out"
    ran = run(suite, out_dir=out, progress=False, limit=8)
    again = rescore(out, suite)
    cases = again.to_pandas("case")
    assert set(cases[cases.model == "perturbed"].case_id) == set(
        ran.to_pandas("case").query("model == 'perturbed'").case_id
    )
    pd.testing.assert_frame_equal(again.summary(), ran.summary())
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["datasets"] == {
        "university": 8
    }


def test_rescoring_a_run_given_other_models_scores_those_models(tmp_path: Path) -> None:
    dataset = Path(__file__).parents[3] / "fixtures" / "datasets" / "university.jsonl"
    suite = tmp_path / "faults.toml"
    suite.write_text(SUITE.format(dataset=dataset.as_posix()), encoding="utf-8")
    out = tmp_path / "out"
    ran = run(suite, out_dir=out, progress=False, limit=3, models=["perturbed"])
    again = rescore(out, suite)
    assert set(again.summary().model) == {"perturbed"}
    pd.testing.assert_frame_equal(again.summary(), ran.summary())


def test_rescoring_a_folder_with_an_unreadable_run_log_says_which_file(tmp_path: Path) -> None:
    dataset = Path(__file__).parents[3] / "fixtures" / "datasets" / "university.jsonl"
    suite = tmp_path / "faults.toml"
    suite.write_text(SUITE.format(dataset=dataset.as_posix()), encoding="utf-8")
    out = tmp_path / "out"
    run(suite, out_dir=out, progress=False, limit=2)
    log = out / "run.json"
    log.write_text(log.read_text(encoding="utf-8").replace('"limit": 2', '"limit": "two"'))
    with pytest.raises(ConfigError, match=r"run\.json: limit must be a number of cases"):
        rescore(out, suite)
