"""``citelab score`` and ``citelab eval`` name the judge of every judged metric, with its
card and κ, show citation recall and precision corrected for the judge's error, take the
user's card (``--judge-card``), and warn loudly on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citelab.cli import main
from citelab.evals.cards import judge_card

FEES = "Tuition fees are due in May. A late payment costs 50 euros."
ANSWERS = {
    "data": [
        {
            "question": "When are fees due?",
            "docs": [{"title": "Fees", "text": FEES}],
            "output": "Tuition fees are due in May [1]. Parking is free [1].",
        }
    ]
}


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(ANSWERS), encoding="utf-8")
    return path


def test_score_names_the_shipped_judge_card_and_warns(
    answers: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", str(answers), "--judge", "lexical"]) == 0
    out, err = capsys.readouterr()
    assert "citation_recall_alce: judged by lexical (threshold=0.75) (κ 0.34" in out
    assert "WiCE dev" in out
    assert "corrected for the judge's error" in out
    assert "WARNING: LOW AGREEMENT" in err
    assert "WARNING: NOT COMPARABLE: citation_recall_alce" in err
    # The default judge's shipped card is its out-of-fold card on WiCE dev (κ above 0.4).
    assert main(["score", str(answers)]) == 0
    out, err = capsys.readouterr()
    assert "citation_recall_alce: judged by lexical_trained (threshold=0.412513) (κ 0.46" in out
    assert "out of fold" in out
    assert "LOW AGREEMENT" not in err
    assert "WARNING: NOT COMPARABLE: citation_recall_alce" in err


def test_score_with_an_uncalibrated_judge_says_so(
    answers: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge = json.dumps({"name": "lexical", "threshold": 0.5})
    assert main(["score", str(answers), "--judge", judge, "--json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["judges"][0]["card"] is None
    assert data["corrected"]["citation_recall_alce"]["corrected"] is None
    assert "WARNING: UNCALIBRATED" in err


def test_score_takes_the_users_card(
    answers: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = judge_card(None, {"name": "lexical", "threshold": 0.5}, resamples=100)
    path = card.save(tmp_path / "card.json")
    judge = json.dumps({"name": "lexical", "threshold": 0.5})
    code = main(["score", str(answers), "--judge", judge, "--judge-card", str(path), "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["judges"][0]["card_source"] == "given"
    assert data["judges"][0]["kappa"] == pytest.approx(card.metrics.kappa.value)
    corrected = data["corrected"]["citation_recall_alce"]
    assert corrected["sensitivity"] == pytest.approx(card.metrics.sensitivity.value)
    assert corrected["corrected"] is not None


def test_a_card_of_another_judge_or_a_bad_file_exits_2(
    answers: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = judge_card(None, {"name": "lexical", "threshold": 0.5}, resamples=100)
    path = card.save(tmp_path / "card.json")
    assert main(["score", str(answers), "--judge-card", str(path)]) == 2
    assert "describes none of the run's judges" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    assert main(["score", str(answers), "--judge-card", str(bad)]) == 2
    assert "is not a citelab judge card" in capsys.readouterr().err


def test_a_card_on_the_judges_own_training_labels_says_so_and_is_refused(
    answers: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # citelab's own set is part of lexical_trained's training data (its sha256 is in the
    # provenance of support_model.json): a card on it flatters the judge.
    assert main(["judges", "card", "--resamples", "50", "--out", str(tmp_path / "cards")]) == 0
    out = capsys.readouterr().out
    assert "judge: lexical_trained" in out  # the default judge, as eval and score use
    assert "IN SAMPLE: lexical_trained was trained on these very labels" in out
    saved = json.loads(next((tmp_path / "cards").glob("*.card.json")).read_text("utf-8"))
    assert saved["in_sample"].startswith("lexical_trained was trained on these very labels")
    page = next((tmp_path / "cards").glob("*.card.html")).read_text("utf-8")
    assert "IN SAMPLE" in page
    path = next((tmp_path / "cards").glob("*.card.json"))
    assert main(["score", str(answers), "--judge-card", str(path)]) == 2
    assert "is in sample" in capsys.readouterr().err
    assert main(["score", str(answers), "--judge-card", str(path), "--allow-in-sample"]) == 0
    assert "WARNING: IN SAMPLE: lexical_trained was trained" in capsys.readouterr().err
    # Another judge on the same labels was not trained on them.
    assert judge_card(None, "lexical", resamples=20).in_sample is None


def test_a_card_on_three_labels_says_too_few_units(tmp_path: Path) -> None:
    rows = [
        {"id": f"p{i}", "claim": claim, "evidence": [FEES], "label": label}
        for i, (claim, label) in enumerate(
            [("Fees are due in May.", "supported"), ("Parking is free.", "not_supported"),
             ("A late payment costs 50 euros.", "supported")]
        )
    ]  # fmt: skip
    path = tmp_path / "three.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    card = judge_card(path, "lexical", resamples=200)
    assert card.metrics.kappa.value == pytest.approx(1.0)
    assert "[1.000, 1.000]" not in card.summary()
    assert "too few units (3; an interval needs 30)" in card.summary()
    assert "[1.000, 1.000]" not in card.to_html()
    assert "Wilson (too few units to resample: 3)" in card.to_html()
