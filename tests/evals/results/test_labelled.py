"""Estimates from a run's own labels: labels attach to the units the metric scored (by pair
id, with the metric's splitter), and the ppi and labels rows are the estimators' figures."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from citelab import InvalidInput
from citelab.evals import EvalResult, label_pairs, score_answers
from citelab.evals._stats import labels_only, ppi_mean
from citelab.evals.labels import LabelItem, LabelledPair, LabelSet

ADVANCE = (
    "Additionally, Advance operates stores in Canada, Puerto Rico, the U.S. Virgin Islands, "
    "and Mexico [1]."
)


def _advance(tmp_path: Path) -> Path:
    answers = [
        {
            "question": "Where does Advance operate stores?",
            "output": ADVANCE,
            "docs": [{"title": "Advance", "text": ADVANCE.replace(" [1]", "")}],
        }
    ]
    path = tmp_path / "advance.json"
    path.write_text(json.dumps(answers), encoding="utf-8")
    return path


def _labelled(
    result: EvalResult, ids: dict[str, bool] | None = None, **options: object
) -> LabelSet:
    pairs = label_pairs(result, **options)  # type: ignore[arg-type]
    return LabelSet.of(
        [
            LabelledPair(
                id=item.id,
                claim=item.claim,
                evidence=[p.text for p in item.passages],
                label=True if ids is None else ids[item.id],
            )
            for item in pairs.items
        ]
    )


def test_pairs_of_an_alce_run_are_cut_as_its_metric_cuts(tmp_path: Path) -> None:
    result = score_answers(_advance(tmp_path), "alce")
    # The ALCE-compatible scorers split with punkt: one statement, number 0.
    ids = [item.id for item in label_pairs(result).items]
    assert ids == ["advance/answers/alce/advance/0/turn-0/statement-0/citation-1"]
    rows = result.corrected(labels=_labelled(result))
    assert set(rows["method"]) == {"judged", "card", "ppi", "labels"}


def test_a_label_cut_by_another_splitter_is_an_error_that_says_so(tmp_path: Path) -> None:
    from citelab.evals.scorers import split_statements

    result = score_answers(_advance(tmp_path), "alce")
    # citelab's own splitter cuts at "U.S." and numbers the cited sentence 1.
    other = _labelled(result, statements=lambda turn: split_statements(turn.text))
    assert [p.id.rsplit("/", 2)[1] for p in other.pairs] == ["statement-1"]
    with pytest.raises(
        InvalidInput, match=r"statement-1/citation-1.*another splitter|name no unit"
    ):
        result.corrected(labels=other)


def test_a_label_of_the_right_unit_with_another_claim_is_an_error(tmp_path: Path) -> None:
    result = score_answers(_advance(tmp_path), "alce")
    good = _labelled(result).pairs[0]
    wrong = LabelSet.of([good.model_copy(update={"claim": "Advance sells cars."})])
    with pytest.raises(InvalidInput, match="whose claim is"):
        result.corrected(labels=wrong)


def _many(tmp_path: Path, answers: int = 80) -> tuple[Path, dict[int, bool]]:
    """Answers of one cited sentence each, its source supporting it or about something else."""
    rng = np.random.default_rng(7)
    rows, truth = [], {}
    for index in range(answers):
        claim = f"The museum number {index} opens at {index % 12 + 1} o'clock on weekdays"
        supported = bool(rng.random() < 0.6)
        text = claim + "." if supported else f"The ferry number {index} leaves from pier {index}."
        rows.append(
            {"question": f"When does museum {index} open?", "output": f"{claim} [1].",
             "docs": [{"title": f"Page {index}", "text": text}]}
        )  # fmt: skip
        truth[index] = supported
    path = tmp_path / "many.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path, truth


def test_ppi_and_labels_rows_are_the_estimators_figures(tmp_path: Path) -> None:
    path, truth = _many(tmp_path)
    result = score_answers(path, "alce")
    pairs = label_pairs(result).items
    labelled = {item.id: truth[int(item.origin["case"])] for item in pairs[:40]}
    labels = LabelSet.of(
        [
            LabelledPair(
                id=i.id, claim=i.claim, evidence=[i.passages[0].text], label=labelled[i.id]
            )
            for i in pairs[:40]
        ]
    )
    table = result.corrected(labels=labels)
    recall = table[table["metric"] == "citation_recall_alce"].set_index("method")
    assert recall.loc["ppi", "labels"] == 40
    statements = result.to_pandas("statement")
    verdicts = statements.sort_values("case_id", key=lambda c: c.astype(int))["hit"].astype(float)
    y = np.array([truth[int(i.origin["case"])] for i in pairs[:40]], dtype=float)
    order = [int(i.origin["case"]) for i in pairs[:40]]
    f = verdicts.to_numpy()
    expected = ppi_mean(y, f[order], f)
    assert recall.loc["ppi", "value"] == pytest.approx(expected.value)
    assert recall.loc["ppi", "width"] == pytest.approx(expected.width)
    assert recall.loc["labels", "value"] == pytest.approx(labels_only(y).value)
    assert recall.loc["ppi", "width"] <= recall.loc["labels", "width"] + 1e-12
    assert not recall.loc["ppi", "too_few"]


def test_a_row_of_too_few_units_says_which_reason(tmp_path: Path) -> None:
    path, truth = _many(tmp_path)
    result = score_answers(path, "alce")
    pairs = label_pairs(result).items
    table = result.corrected(labels=_truly(pairs[:10]))
    rows = table[(table["metric"] == "citation_recall_alce") & (table["method"] == "ppi")]
    assert rows["note"].iloc[0].startswith("too few units: 10 labels, fewer than 30 (Wilson's")
    alike = [i for i in pairs if truth[int(i.origin["case"])]][:40]
    table = result.corrected(labels=_truly(alike))
    rows = table[(table["metric"] == "citation_recall_alce") & (table["method"] == "labels")]
    assert rows["note"].iloc[0].startswith("too few units: no spread among its 40 labels")


def test_a_stratified_file_stopped_short_gives_the_post_stratified_estimate(
    tmp_path: Path,
) -> None:
    # Two strata of 40 and 80 units whose sample was to be 10 and 20; the person stopped
    # after 3 of the first and 15 of the second. Each label weighs by its stratum's labelled
    # share (3/40, 15/80), not the chance recorded for the whole sample (10/40, 20/80).
    path, truth = _many(tmp_path, 120)
    result = score_answers(path, "alce")
    pairs = label_pairs(result).items
    stratum = {i.id: "a" if int(i.origin["case"]) < 40 else "b" for i in pairs}
    sizes, planned = {"a": 40, "b": 80}, {"a": 10, "b": 20}
    first = [i for i in pairs if stratum[i.id] == "a"][:3]
    second = [i for i in pairs if stratum[i.id] == "b"][:15]
    labels = LabelSet.of(
        [
            LabelledPair(
                id=i.id,
                claim=i.claim,
                evidence=[i.passages[0].text],
                label=truth[int(i.origin["case"])],
                stratum=stratum[i.id],
                stratum_size=sizes[stratum[i.id]],
                probability=planned[stratum[i.id]] / sizes[stratum[i.id]],
            )
            for i in first + second
        ]
    )
    table = result.corrected(labels=labels)
    recall = table[table["metric"] == "citation_recall_alce"].set_index("method")
    mean = {
        name: np.mean([truth[int(i.origin["case"])] for i in group])
        for name, group in (("a", first), ("b", second))
    }
    post_stratified = mean["a"] / 3 + 2 * mean["b"] / 3
    assert recall.loc["labels", "value"] == pytest.approx(post_stratified)
    assert recall.loc["labels", "labels"] == 18
    # The recorded chances are equal here, so they would give the plain mean, which the
    # prefix tilts towards the second stratum.
    plain = (3 * mean["a"] + 15 * mean["b"]) / 18
    assert abs(plain - post_stratified) > 0.02


def test_rows_say_when_the_labels_leave_a_stratum_of_the_design_unlabelled(
    tmp_path: Path,
) -> None:
    path, truth = _many(tmp_path)
    result = score_answers(path, "alce")
    pairs = label_pairs(result).items

    def labelled(items: list[LabelItem], strata: int | None) -> LabelSet:
        return _truly(items, truth, stratum="disagree", stratum_size=50, strata=strata)

    def note(labels: LabelSet) -> str:
        table = result.corrected(labels=labels)
        row = table[(table["metric"] == "citation_recall_alce") & (table["method"] == "ppi")]
        return str(row["note"].iloc[0])

    partial = "of the labelled strata only: the labels are in 1 of the design's 2 strata"
    assert partial in note(labelled(pairs[:40], strata=2))
    assert "strata" not in note(labelled(pairs[:40], strata=1))
    assert "strata" not in note(labelled(pairs[:40], strata=None))  # a file before `strata`


def test_score_json_gives_the_ppi_row(tmp_path: Path) -> None:
    path, truth = _many(tmp_path, 40)
    result = score_answers(path, "alce")
    lines = [
        json.dumps(
            {
                "id": i.id,
                "claim": i.claim,
                "evidence": [i.passages[0].text],
                "label": "supported" if truth[int(i.origin["case"])] else "not_supported",
            }
        )
        for i in label_pairs(result).items[:35]
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "citelab", "score", str(path), "--labels", str(labels),
               "--json", "--out", str(tmp_path / "out")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["estimates"]
    ppi = [r for r in rows if r["method"] == "ppi" and r["metric"] == "citation_recall_alce"]
    assert len(ppi) == 1
    assert ppi[0]["labels"] == 35
    assert ppi[0]["ci_low"] <= ppi[0]["value"] <= ppi[0]["ci_high"]
    assert "f: the judge's scores" in ppi[0]["note"]
    written = pd.read_csv(tmp_path / "out" / "corrected.csv")
    assert {"judged", "card", "ppi", "labels"} <= set(written["method"])
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Estimated from this run's own labels" in report
    assert "f: the judge&#x27;s scores" in report or "f: the judge's scores" in report


def test_a_label_file_that_names_no_unit_fails_the_command(tmp_path: Path) -> None:
    path, _ = _many(tmp_path, 5)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({"id": "many/answers/alce/many/0/turn-0/statement-3/citation-1",
                    "claim": "x", "evidence": ["y"], "label": "supported"}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    command = [sys.executable, "-m", "citelab", "score", str(path), "--labels", str(labels)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "name no unit the judge scored" in done.stderr
    assert "statement-3/citation-1" in done.stderr


def _attribution_labels(tmp_path: Path, path: Path, truth: dict[int, bool], typo: int = -1) -> Path:
    """AttributionBench's spelling of this run's first 35 pairs; line ``typo`` misspelt."""
    result = score_answers(path, "alce")
    lines = [
        json.dumps(
            {
                "id": i.id,
                "claim": i.claim,
                "evidence": [i.passages[0].text],
                "label": "attributable" if truth[int(i.origin["case"])] else "not attributable",
            }
            if n != typo
            else {"id": i.id, "claim": i.claim, "evidence": ["e"], "label": "atributable"}
        )
        for n, i in enumerate(label_pairs(result).items[:35])
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return labels


MAP = "attributable=supported,not attributable=not_supported"


def test_labels_in_their_own_spelling_read_with_a_label_map(tmp_path: Path) -> None:
    path, truth = _many(tmp_path, 40)
    labels = _attribution_labels(tmp_path, path, truth)
    with pytest.raises(InvalidInput, match='"attributable" is not a label'):
        score_answers(path, "alce", labels=labels)
    mapped = score_answers(
        path,
        "alce",
        labels=labels,
        label_map={"attributable": "supported", "not attributable": "not_supported"},
    )
    ppi = mapped.corrected().query("method == 'ppi' and metric == 'citation_recall_alce'")
    assert int(ppi["labels"].iloc[0]) == 35
    command = [sys.executable, "-m", "citelab", "score", str(path), "--labels", str(labels),
               "--label-map", MAP, "--json"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["estimates"]
    from_cli = [r for r in rows if r["method"] == "ppi" and r["metric"] == "citation_recall_alce"]
    assert from_cli[0]["value"] == pytest.approx(float(ppi["value"].iloc[0]))


def test_a_spelling_the_map_does_not_name_is_an_error_naming_it_and_its_line(
    tmp_path: Path,
) -> None:
    path, truth = _many(tmp_path, 40)
    labels = _attribution_labels(tmp_path, path, truth, typo=6)
    command = [sys.executable, "-m", "citelab", "score", str(path), "--labels", str(labels),
               "--label-map", MAP]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stderr
    assert 'labels.jsonl:7: field label: "atributable" is not a label' in done.stderr
    assert "1 problem(s)" in done.stderr


def _graded(tmp_path: Path, answers: int = 80) -> tuple[Path, dict[int, bool]]:
    """Answers of one cited sentence each, its source holding a random part of its words:
    the judge's scores spread between its verdicts; people call it supported when the
    source holds nine words in ten or more."""
    rng = np.random.default_rng(3)
    rows, truth = [], {}
    for index in range(answers):
        words = f"The museum number {index} opens at {index % 12 + 1} o'clock on weekdays".split()
        kept = [word for word in words if rng.random() < 0.8]
        text = " ".join(kept) + ". The ferry leaves from the pier."
        rows.append(
            {"question": f"When does museum {index} open?", "output": " ".join(words) + " [1].",
             "docs": [{"title": f"Page {index}", "text": text}]}
        )  # fmt: skip
        truth[index] = len(kept) >= 0.9 * len(words)
    path = tmp_path / "graded.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path, truth


def _labels_of(result: EvalResult, truth: dict[int, bool], count: int) -> LabelSet:
    return _truly(label_pairs(result).items[:count], truth)


def _truly(
    items: Sequence[LabelItem], truth: dict[int, bool] | None = None, **fields: Any
) -> LabelSet:
    """Labels of ``items``: each its case's ``truth`` (supported without one), with ``fields``
    (a design's stratum, its size…)."""
    return LabelSet.of(
        [
            LabelledPair(
                id=i.id,
                claim=i.claim,
                evidence=[i.passages[0].text],
                label=True if truth is None else truth[int(i.origin["case"])],
                **fields,
            )
            for i in items
        ]
    )


def test_a_run_with_labels_estimates_recall_from_the_judges_scores(tmp_path: Path) -> None:
    from citelab.evals.judges import build_judge
    from citelab.evals.results import PREDICTED_BY_SCORES, PREDICTED_BY_VERDICTS

    path, truth = _graded(tmp_path)
    labels = _labels_of(score_answers(path, "alce"), truth, 40)
    result = score_answers(path, "alce", labels=labels, out_dir=tmp_path / "labelled")
    statements = result.to_pandas("statement")
    recall = statements[statements["metric"] == "citation_recall_alce"]
    recall = recall.sort_values("case_id", key=lambda c: c.astype(int))
    f = recall["judge_score"].to_numpy(dtype=float)
    threshold = build_judge("lexical_trained").threshold  # type: ignore[attr-defined]
    assert ((f >= threshold) == recall["hit"].astype(bool)).all()
    assert 0 < recall["hit"].sum() < len(recall)
    assert len(set(f.round(6))) > 5  # a score, not the verdict again
    order = [int(i.origin["case"]) for i in label_pairs(result).items[:40]]
    y = np.array([truth[case] for case in order], dtype=float)
    expected = ppi_mean(y, f[order], f)
    table = result.corrected().set_index(["metric", "method"])
    ppi = table.loc[("citation_recall_alce", "ppi")]
    assert ppi["value"] == pytest.approx(expected.value)
    assert ppi["width"] == pytest.approx(expected.width)
    assert PREDICTED_BY_SCORES in ppi["note"]
    # Precision's verdict combines several judge calls: PPI++ reads the verdict, and says so.
    assert PREDICTED_BY_VERDICTS in table.loc[("citation_precision_alce", "ppi"), "note"]
    assert "f:" not in table.loc[("citation_recall_alce", "labels"), "note"]
    written = pd.read_csv(tmp_path / "labelled" / "corrected.csv")
    notes = written[(written["method"] == "ppi") & (written["metric"] == "citation_recall_alce")]
    assert PREDICTED_BY_SCORES in notes["note"].iloc[0]
    run = json.loads((tmp_path / "labelled" / "run.json").read_text(encoding="utf-8"))
    assert PREDICTED_BY_SCORES in json.dumps(run)


def test_a_run_without_labels_writes_the_tables_it_always_wrote(tmp_path: Path) -> None:
    from citelab.evals.results import PREDICTED_BY_VERDICTS

    path, truth = _graded(tmp_path, 60)
    plain = score_answers(path, "alce", out_dir=tmp_path / "plain")
    labels = _labels_of(plain, truth, 35)
    labelled = score_answers(path, "alce", labels=labels, out_dir=tmp_path / "labelled")
    # No new column; the labelled run's tables are the same but for the recorded scores.
    for name in ("statements.csv", "citations.csv", "scores.csv", "cases.csv"):
        before = pd.read_csv(tmp_path / "plain" / name)
        after = pd.read_csv(tmp_path / "labelled" / name)
        assert "judge_score" not in before.columns, name
        pd.testing.assert_frame_equal(before, after.drop(columns="judge_score", errors="ignore"))
    assert "judge_score" in pd.read_csv(tmp_path / "labelled" / "statements.csv").columns
    assert "judge_scores" not in json.dumps(plain.config["scorers"])
    # A result scored without labels, given labels afterwards: PPI++ reads the verdicts.
    ppi = plain.corrected(labels=labels).set_index(["metric", "method"])
    assert PREDICTED_BY_VERDICTS in ppi.loc[("citation_recall_alce", "ppi"), "note"]
    assert (
        ppi.loc[("citation_recall_alce", "ppi"), "value"]
        != labelled.corrected()
        .set_index(["metric", "method"])
        .loc[("citation_recall_alce", "ppi"), "value"]
    )
