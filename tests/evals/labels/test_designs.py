"""Labelling designs: each records its sampling chances (and strata) in the labels it
writes, the reader brings them back, and the estimate weighs by them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from citelab import InvalidInput
from citelab.evals import LexicalJudge
from citelab.evals._stats import labels_only
from citelab.evals.labels import LabelItem, label_queue, load_label_set, pair_estimate

STRICT = LexicalJudge(threshold=1.0)


def _pairs(yes: int, no: int) -> list[LabelItem]:
    """``yes`` pairs the strict judge supports (the claim is the passage), ``no`` it does not."""
    items = [
        LabelItem.of(f"Fees number {i} are due in May.", f"Fees number {i} are due in May.",
                     id=f"run/v/m/d/yes-{i}/turn-0/statement-0/citation-1", variant="v", model="m")
        for i in range(yes)
    ] + [
        LabelItem.of(f"Fees number {i} are due in June.", "The library opens at 8 am.",
                     id=f"run/v/m/d/no-{i}/turn-0/statement-0/citation-1", variant="v", model="m")
        for i in range(no)
    ]  # fmt: skip
    return items


def test_uniform_gives_every_pair_one_chance() -> None:
    queue = label_queue(_pairs(30, 70), sample=20, seed=1)
    assert queue.design == "uniform"
    assert {queue.sampling(i.id)["probability"] for i in queue.items} == {0.2}


def test_stratified_takes_equal_shares_in_turn_and_records_the_chances() -> None:
    queue = label_queue(_pairs(10, 90), sample=20, seed=1, judges=[STRICT], design="stratified")
    first = queue.items[:20]
    strata = [queue.strata[i.id] for i in first]
    assert strata.count("v/m/yes") == 10
    assert strata.count("v/m/no") == 10
    assert strata[:2] in (["v/m/yes", "v/m/no"], ["v/m/no", "v/m/yes"])  # taken in turn
    yes = next(i for i in first if queue.strata[i.id] == "v/m/yes")
    no = next(i for i in first if queue.strata[i.id] == "v/m/no")
    assert queue.sampling(yes.id) == {
        "design": "stratified",
        "stratum": "v/m/yes",
        "probability": 1.0,
    }
    assert queue.sampling(no.id)["probability"] == pytest.approx(10 / 90)


def test_disagreement_first_records_its_two_strata() -> None:
    lenient = LexicalJudge(threshold=0.3)
    queue = label_queue(_pairs(10, 40), sample=15, seed=2, disagree=[STRICT, lenient])
    assert queue.design == "disagreement"
    assert set(queue.strata.values()) <= {"agree", "disagree"}
    for item in queue.items[: queue.disagreements]:
        assert queue.strata[item.id] == "disagree"


def test_a_design_needs_its_judges() -> None:
    with pytest.raises(InvalidInput, match="stratified design"):
        label_queue(_pairs(2, 2), design="stratified")
    with pytest.raises(InvalidInput, match="unknown design"):
        label_queue(_pairs(2, 2), design="clever")  # type: ignore[arg-type]


def test_the_labels_file_carries_the_design_and_the_estimate_weighs_by_it(tmp_path: Path) -> None:
    queue = label_queue(_pairs(10, 90), sample=40, seed=3, judges=[STRICT], design="stratified")
    path = tmp_path / "labels.jsonl"
    lines = []
    for item in queue.items[:40]:
        truth = item.id.split("/")[4].startswith("yes")
        line = item.line(
            "supported" if truth else "not_supported", sampling=queue.sampling(item.id)
        )
        lines.append(line.to_bytes().decode())
    path.write_text("".join(lines), encoding="utf-8")
    pairs = load_label_set(path).pairs
    assert {p.stratum for p in pairs} == {"v/m/yes", "v/m/no"}
    # Unweighted, the sample says a quarter are supported (all 10 yes, 30 of 90 no);
    # weighted, one in ten (the truth).
    assert np.mean([p.label for p in pairs]) == pytest.approx(0.25)
    weighted = labels_only([float(p.label) for p in pairs], [p.probability for p in pairs])
    assert weighted.value == pytest.approx(0.1)
    shown = pair_estimate(queue, pairs)
    assert shown["method"] == "ppi"
    assert shown["value"] == pytest.approx(0.1)
    assert shown["labels"] == 40
    assert json.dumps(shown)  # the widget's trait carries it
