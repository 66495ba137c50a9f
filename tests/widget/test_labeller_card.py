"""A judge card reads the labelling widget's file as it is, in Python and on the command line.

The labels are taken through the widget (as its buttons do), then ``judge_card`` and
``citelab judges card FILE --json`` read the file: the pairs, the skips left out, the
three-way mapping, and the lexical judge's accuracy, computed here without the card's reader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import citelab.evals
from citelab import Labeller
from citelab.cli import main
from citelab.evals import LexicalJudge
from citelab.evals.labels import LabelItem, LabelPassage

if not hasattr(citelab.evals, "judge_card"):  # the card lives on main, merged after labeller
    pytest.skip(
        "citelab.evals.judge_card is not in this tree (the judge card branch is not merged)",
        allow_module_level=True,
    )

PASSAGE = "Tuition fees are due in May. Late payment costs 50 euros."
DECISIONS = {
    "Tuition fees are due in May.": "supported",
    "Late payment costs 50 euros.": "supported",
    "Tuition fees are due in June.": "not_supported",
    "Fees are due in May and cost 50 euros.": "partially_supported",
    "The library opens at 8 am.": "not_supported",
    "Late fees of 50 euros apply after May.": "skip",
}


def labelled(tmp_path: Path) -> Path:
    items = [
        LabelItem(id=f"pair-{i}", claim=claim, passages=(LabelPassage(text=PASSAGE, number=1),))
        for i, claim in enumerate(DECISIONS)
    ]
    path = tmp_path / "labels.jsonl"
    labeller = Labeller(items, path, sample=None)
    while labeller.current is not None:
        labeller.label(DECISIONS[labeller.current.claim])  # type: ignore[arg-type]
    return path


def expected_accuracy() -> float:
    """The lexical judge against the decisions (partly counts as no, skip is left out)."""
    judge = LexicalJudge()
    decided = {claim: label for claim, label in DECISIONS.items() if label != "skip"}
    right = sum(
        judge.supports(claim, PASSAGE) == (label == "supported") for claim, label in decided.items()
    )
    return right / len(decided)


def test_judge_card_reads_the_widget_file(tmp_path: Path) -> None:
    path = labelled(tmp_path)
    card = citelab.evals.judge_card(path, "lexical", resamples=50)
    assert card.labels.pairs == 5, "the skipped pair is left out"
    assert card.labels.mapping["partially_supported"] == "no"
    assert card.metrics.supported == 2
    assert card.metrics.accuracy.value == pytest.approx(expected_accuracy())


def test_citelab_judges_card_reads_the_widget_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = labelled(tmp_path)
    args = ["judges", "card", str(path), "--judge", "lexical", "--resamples", "50", "--json"]
    assert main(args) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["labels"]["pairs"] == 5
    assert payload["labels"]["skipped"] == {"skip": 1}
    [card] = payload["cards"]
    assert card["metrics"]["accuracy"]["value"] == pytest.approx(expected_accuracy())
