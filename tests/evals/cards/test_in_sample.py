"""In-sample cards found by content (#32): a card whose claims are in the trained judge's
training data says how many, whatever file they come in (re-ordered, subset, re-spelt, other
evidence), and more than a tenth of them makes it in sample (refused for corrections).

The training data is citelab's own labelled set (in the repository) and WiCE's dev split
(``../shared/testdata/wice/``; its tests skip when it is absent).
"""

from __future__ import annotations

import importlib.util
import json
import random
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from citelab import ConfigError, InvalidInput
from citelab.cli import main
from citelab.evals.cards import IN_SAMPLE_SHARE, judge_card, training_overlap
from citelab.evals.judges import TrainedLexicalJudge, claim_key
from citelab.evals.judges._support_model import DEFAULT_MODEL
from citelab.evals.judges._training_data import fingerprint_path
from citelab.evals.labels import load_label_set
from citelab.evals.results import check_cards
from citelab.evals.scorers import build_scorers

ROOT = Path(__file__).resolve().parents[3]
OWN = ROOT / "fixtures" / "judges" / "support_labels.jsonl"
WICE = ROOT.parent / "shared" / "testdata" / "wice"
needs_wice = pytest.mark.skipif(
    not (WICE / "oracle_claim_dev.jsonl").is_file(),
    reason=f"WiCE's dev split is not in {WICE} (third-party data kept outside the repository)",
)
HARBOUR = "The harbour museum opens at 10 am from Tuesday to Sunday; entry is 6 euros."


def own_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in OWN.read_text(encoding="utf-8").splitlines()]


def unrelated_rows(count: int) -> list[dict[str, Any]]:
    """Pairs written here, about a harbour museum: no claim of them is a training claim."""
    return [
        {
            "id": f"museum-{i}",
            "claim": f"The harbour museum's room {i} shows {i + 2} old ferry models.",
            "evidence": [f"Room {i} of the harbour museum shows {i + 2} ferry models. {HARBOUR}"],
            "label": i % 2 == 0,
        }
        for i in range(count)
    ]


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_reordered_respelt_subset_of_the_training_file_is_in_sample(tmp_path: Path) -> None:
    # Not the training file (another sha256): 60 of its pairs, shuffled, with other ids,
    # other capitals and spacing in the claims — the same claims to the judge.
    rows = random.Random(0).sample(own_rows(), 60)
    for i, row in enumerate(rows):
        row["id"] = f"mine-{i}"
        row["claim"] = "  " + row["claim"].upper().replace(" ", "   ") + " "
    path = write(tmp_path / "mine.jsonl", rows)
    card = judge_card(path, "lexical_trained", resamples=20)
    assert card.in_sample is not None
    assert card.in_sample.startswith("60 of these 60 claims (100%) are in lexical_trained's")
    assert card.summary().startswith("IN SAMPLE: 60 of these 60 claims")
    assert f"IN SAMPLE: {card.in_sample}" in card.notes
    # Refused as a card for corrections unless the user insists.
    scorers = build_scorers([{"name": "citation_recall", "judge": "lexical_trained"}])
    with pytest.raises(InvalidInput, match="is in sample: 60 of these 60 claims"):
        check_cards(scorers, [card])
    check_cards(scorers, [card], allow_in_sample=True)
    # A judge that was trained on nothing is not in sample on the same file.
    assert judge_card(path, "lexical", resamples=20).in_sample is None


def test_an_unrelated_file_is_not_in_sample(tmp_path: Path) -> None:
    path = write(tmp_path / "museum.jsonl", unrelated_rows(40))
    card = judge_card(path, "lexical_trained", resamples=20)
    assert card.in_sample is None
    assert not any("training data" in note for note in card.notes)
    label_set = load_label_set(path)
    overlap = training_overlap(TrainedLexicalJudge(), label_set)
    assert (overlap.shared, overlap.claims) == (0, 40)


def test_a_small_overlap_is_a_note_with_its_count_and_a_larger_one_is_in_sample(
    tmp_path: Path,
) -> None:
    training = own_rows()
    small = write(tmp_path / "small.jsonl", unrelated_rows(37) + training[:3])
    card = judge_card(small, "lexical_trained", resamples=20)
    assert IN_SAMPLE_SHARE >= 3 / 40
    assert card.in_sample is None
    note = "3 of these 40 claims (8%) are in lexical_trained's training data"
    assert any(line.startswith(note) for line in card.notes)
    larger = write(tmp_path / "larger.jsonl", unrelated_rows(35) + training[:5])
    card = judge_card(larger, "lexical_trained", resamples=20)
    assert IN_SAMPLE_SHARE < 5 / 40
    assert card.in_sample is not None
    assert card.in_sample.startswith("5 of these 40 claims (12%)")


def test_the_cli_card_on_a_subset_says_in_sample_and_score_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subset = write(tmp_path / "subset.jsonl", own_rows()[::-3])
    cards = tmp_path / "cards"
    assert main(["judges", "card", str(subset), "--resamples", "20", "--out", str(cards)]) == 0
    out = capsys.readouterr().out
    assert "IN SAMPLE: 70 of these 70 claims (100%) are in lexical_trained's training data" in out
    answers = tmp_path / "answers.json"
    item = {"question": "Q?", "docs": [{"title": "T", "text": HARBOUR}], "output": "It opens [1]."}
    answers.write_text(json.dumps({"data": [item]}), encoding="utf-8")
    [card] = cards.glob("*.card.json")
    assert main(["score", str(answers), "--judge-card", str(card)]) == 2
    assert "is in sample" in capsys.readouterr().err


def test_a_fingerprint_of_other_parameters_is_refused(tmp_path: Path) -> None:
    model = tmp_path / "model.json"
    shutil.copyfile(DEFAULT_MODEL, model)
    fingerprint = json.loads(fingerprint_path(DEFAULT_MODEL).read_text(encoding="utf-8"))
    # Without a fingerprint the judge knows no training claims (only the file's sha256).
    assert TrainedLexicalJudge(model=str(model)).parameters.training_keys == frozenset()
    stale = tmp_path / "stale.json"  # another path: parameter files are read once each
    shutil.copyfile(DEFAULT_MODEL, stale)
    fingerprint["parameters"] = "0123456789abcdef"
    fingerprint_path(stale).write_text(json.dumps(fingerprint), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"stale\.training\.json: belongs to parameters "):
        TrainedLexicalJudge(model=str(stale))


def load_training_script() -> ModuleType:
    path = ROOT / "scripts" / "train_support_judge.py"
    spec = importlib.util.spec_from_file_location("train_support_judge", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@needs_wice
def test_the_shipped_fingerprint_is_that_of_the_training_files(tmp_path: Path) -> None:
    # What the training script writes beside a parameter file, from the files the shipped
    # parameters were trained on, is the shipped fingerprint (no text in it, only keys).
    pytest.importorskip("sklearn")
    script = load_training_script()
    model = tmp_path / "support_model.json"
    shutil.copyfile(DEFAULT_MODEL, model)
    written = script.write_fingerprint(model, WICE, OWN)
    shipped = json.loads(fingerprint_path(DEFAULT_MODEL).read_text(encoding="utf-8"))
    assert json.loads(written.read_text(encoding="utf-8")) == shipped
    claims = [json.loads(line)["claim"] for line in OWN.read_text(encoding="utf-8").splitlines()]
    wice = (WICE / "oracle_claim_dev.jsonl").read_text(encoding="utf-8").splitlines()
    claims += [json.loads(line)["claim"] for line in wice]
    assert set(shipped["claims"]) == {claim_key(claim) for claim in claims}
    assert not any(claim in json.dumps(shipped) for claim in claims)


@needs_wice
def test_wices_claims_in_another_file_are_in_sample() -> None:
    # claim_dev.jsonl: the same 349 claims with their whole cited pages, not the oracle
    # chunks the judge was trained on (another file, another sha256).
    card = judge_card(WICE / "claim_dev.jsonl", "lexical_trained", resamples=20)
    assert card.in_sample is not None
    assert card.in_sample.startswith("349 of these 349 claims (100%)")
