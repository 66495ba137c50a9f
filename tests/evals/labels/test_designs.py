"""Labelling designs: each records its sampling chances (and strata) in the labels it
writes, the reader brings them back, and the estimate weighs by them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from citelab import InvalidInput
from citelab.evals import LexicalJudge
from citelab.evals._stats import labels_only, ppi_mean
from citelab.evals.labels import (
    LabelItem,
    LabelledPair,
    LabelSet,
    label_queue,
    load_label_set,
    pair_estimate,
)
from citelab.evals.labels._allocation import allocate, bin_count, predicted_spreads, score_bins

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


def test_stratified_without_a_score_takes_verdict_strata_in_proportion() -> None:
    # The strict lexical judge gives verdicts only: strata by verdict, shares in proportion
    # to size (2 and 18 of 20), each stratum raised to the minimum of 5 labels.
    queue = label_queue(_pairs(10, 90), sample=20, seed=1, judges=[STRICT], design="stratified")
    assert queue.scores == {}
    first = queue.items[:20]
    strata = [queue.strata[i.id] for i in first]
    assert strata.count("v/m/yes") == 5
    assert strata.count("v/m/no") == 15
    assert "v/m/yes" in strata[:4]  # the strata take turns by their shares
    yes = next(i for i in first if queue.strata[i.id] == "v/m/yes")
    no = next(i for i in first if queue.strata[i.id] == "v/m/no")
    assert queue.sampling(yes.id) == {
        "design": "stratified",
        "stratum": "v/m/yes",
        "size": 10,
        "strata": 2,  # v/m/yes and v/m/no
        "probability": 0.5,
    }
    assert queue.sampling(no.id)["probability"] == pytest.approx(15 / 90)
    assert {queue.strata[i.id] for i in queue.items[20:]} == {"v/m/yes", "v/m/no"}


class Scored:
    """A judge with a score: the number the claim ends with, in hundredths."""

    name = "scored"

    def score(self, statement: str, evidence: str) -> float:
        return int(statement.rsplit(" ", 1)[1]) / 100

    def supports(self, statement: str, evidence: str) -> bool:
        return self.score(statement, evidence) >= 0.5

    def config(self) -> dict[str, object]:
        return {"name": self.name}


def _scored(hundredths: list[int], variant: str = "v") -> list[LabelItem]:
    return [
        LabelItem.of(f"Claim {i} scores {h}", "Some passage.", id=f"run/{variant}/m/d/c{i}",
                     variant=variant, model="m")
        for i, h in enumerate(hundredths)
    ]  # fmt: skip


def test_stratified_by_scores_shares_the_sample_by_neyman() -> None:
    # 30 pairs the judge is sure about (score 0.02), 30 it is not (0.5); 20 labels in 2 bins.
    # Predicted spreads √(0.02·0.98) = 0.140 and 0.5, shrunk 70% of the way from their mean
    # 0.320: 0.194 and 0.446, so Neyman gives 20·0.194/0.640 = 6.06 → 6 and 13.94 → 14.
    queue = label_queue(_scored([2] * 30 + [50] * 30), sample=20, seed=4, judges=[Scored()],
                        design="stratified")  # fmt: skip
    low, high = "v/m/score-1-of-2", "v/m/score-2-of-2"
    strata = [queue.strata[i.id] for i in queue.items[:20]]
    assert (strata.count(low), strata.count(high)) == (6, 14)
    assert strata[:10].count(low) == 3  # a shorter sample keeps the shares
    sure = next(i for i in queue.items if queue.strata[i.id] == low)
    assert queue.sampling(sure.id) == {
        "design": "stratified",
        "stratum": low,
        "size": 30,
        "strata": len({queue.strata[i.id] for i in queue.items}),
        "probability": pytest.approx(6 / 30),
    }
    assert queue.scores[sure.id] == {"scored": 0.02}
    assert queue.verdicts[sure.id] == {"scored": False}


def test_each_variant_gets_an_equal_share_and_its_own_bins() -> None:
    items = _scored([2] * 30 + [50] * 30, "a") + _scored([10, 90] * 10, "b")
    queue = label_queue(items, sample=40, seed=2, judges=[Scored()], design="stratified")
    chosen = [queue.strata[i.id] for i in queue.items[:40]]
    assert sum(name.startswith("a/") for name in chosen) == 20
    assert sum(name.startswith("b/") for name in chosen) == 20
    assert set(queue.strata.values()) == {
        "a/m/score-1-of-2", "a/m/score-2-of-2", "b/m/score-1-of-2", "b/m/score-2-of-2"
    }  # fmt: skip


def test_allocation_by_neyman_with_a_minimum_and_the_sizes_as_a_cap() -> None:
    assert allocate([100, 100, 100], [0.1, 0.5, 0.4], 50) == [5, 25, 20]
    assert allocate([100, 100, 100], None, 50) == [17, 17, 16]  # proportional
    assert allocate([100, 100], [0.01, 0.5], 50) == [5, 45]  # the minimum
    assert allocate([100, 10], [0.1, 0.9], 50) == [40, 10]  # a full stratum gives the rest
    assert allocate([3, 100], [0.5, 0.5], 50) == [3, 47]  # a small one gives all it has
    assert allocate([10, 90], None, 4) == [2, 2]  # too few for every minimum
    assert allocate([10, 90], None, 500) == [10, 90]
    assert score_bins([0.9, 0.1, 0.5, 0.5, 0.2, 0.7], 3) == [2, 0, 1, 1, 0, 2]
    spreads = predicted_spreads([0.0, 0.0, 0.5, 0.5], [0, 0, 1, 1], 2)
    assert spreads == pytest.approx([0.3 * 0.25, 0.7 * 0.5 + 0.3 * 0.25])
    assert bin_count(50, 1000) == 5
    assert bin_count(500, 1000) == 10
    assert bin_count(50, 12) == 2
    with pytest.raises(InvalidInput, match="probability in"):
        score_bins([0.5, 1.5], 2)


def test_the_estimate_reads_the_first_judges_score_where_it_gives_one() -> None:
    items = _scored([10, 20, 60, 90] * 10)
    queue = label_queue(items, sample=40, seed=0, judges=[Scored(), STRICT])
    labelled = [
        LabelledPair(id=i.id, claim=i.claim, evidence=i.evidence, label=n % 3 == 0)
        for n, i in enumerate(queue.items[:32])
    ]
    score = [queue.scores[i.id]["scored"] for i in queue.items]
    mine = [queue.scores[p.id]["scored"] for p in labelled]
    expected = ppi_mean([float(p.label) for p in labelled], mine, score, [1.0] * 32)
    assert pair_estimate(queue, labelled)["value"] == pytest.approx(expected.value)
    assert pair_estimate(queue, labelled)["high"] == pytest.approx(expected.high)


def test_a_score_that_is_no_probability_is_an_error_naming_the_judge() -> None:
    with pytest.raises(InvalidInput, match=r"judge scored: the stratified design needs scores"):
        label_queue(_scored([2, 150]), judges=[Scored()], design="stratified")
    kept = label_queue(_scored([2, 150]), judges=[Scored()])  # any number serves PPI
    assert sorted(s["scored"] for s in kept.scores.values()) == [0.02, 1.5]

    class Broken(Scored):
        def score(self, statement: str, evidence: str) -> float:
            return float("nan")

    with pytest.raises(InvalidInput, match=r"judge scored: score\(\) must return a number"):
        label_queue(_scored([2, 50]), judges=[Broken()])


def test_the_stratified_estimate_is_unbiased_and_covers_on_known_truth() -> None:
    # 400 pairs whose truth is drawn from the judge's own (calibrated) score; each seed is
    # another design's draw. The estimate from the first 60 labels, and from the first 35
    # (a sample stopped short), centres on the truth and its 95% interval holds it.
    rng = np.random.default_rng(3)
    hundredths = rng.choice([3, 10, 30, 50, 70, 90, 97], 400).tolist()
    items = _scored(hundredths)
    truth = {
        item.id: bool(rng.random() < h / 100) for item, h in zip(items, hundredths, strict=True)
    }
    target = np.mean(list(truth.values()))
    values: dict[int, list[float]] = {60: [], 35: []}
    held = {60: 0, 35: 0}
    for seed in range(200):
        queue = label_queue(items, sample=60, seed=seed, judges=[Scored()], design="stratified")
        for n, drawn in values.items():
            labelled = [
                LabelledPair(id=i.id, claim=i.claim, evidence=i.evidence, label=truth[i.id])
                for i in queue.items[:n]
            ]
            shown = pair_estimate(queue, labelled)
            drawn.append(shown["value"])
            held[n] += shown["low"] <= target <= shown["high"]
    for n, drawn in values.items():
        spread = np.std(drawn) / np.sqrt(len(drawn))
        assert abs(np.mean(drawn) - target) < 3 * spread, (n, np.mean(drawn), target)
        assert held[n] / 200 >= 0.93, (n, held[n])


def test_disagreement_first_records_its_two_strata() -> None:
    lenient = LexicalJudge(threshold=0.3)
    queue = label_queue(_pairs(10, 40), sample=15, seed=2, disagree=[STRICT, lenient])
    assert queue.design == "disagreement"
    assert set(queue.strata.values()) <= {"agree", "disagree"}
    for item in queue.items[: queue.disagreements]:
        assert queue.strata[item.id] == "disagree"


def test_a_disagreement_file_stopped_before_any_agree_pair_says_it_covers_one_stratum(
    tmp_path: Path,
) -> None:
    lenient = LexicalJudge(threshold=0.3)
    near = [  # the lenient judge supports these, the strict one does not
        LabelItem.of(f"Fees number {i} are due in June.", f"Fees number {i} are due in May.",
                     id=f"run/v/m/d/near-{i}/turn-0/statement-0/citation-1", variant="v", model="m")
        for i in range(8)
    ]  # fmt: skip
    queue = label_queue(near + _pairs(10, 40), sample=30, seed=2, disagree=[STRICT, lenient])
    assert 0 < queue.disagreements < 30
    assert queue.strata_cut == {"": 2}
    path = tmp_path / "labels.jsonl"

    def write(items: list[LabelItem]) -> LabelSet:
        lines = [
            item.line("supported", sampling=queue.sampling(item.id)).to_bytes().decode()
            for item in items
        ]
        path.write_text("".join(lines), encoding="utf-8")
        return load_label_set(path)

    first = write(list(queue.items[: queue.disagreements]))
    assert {p.strata for p in first.pairs} == {2}
    assert first.uncovered() == {"": (1, 2)}
    assert pair_estimate(queue, first.pairs)["unlabelled_strata"] == ["agree"]
    whole = write(list(queue.items[: queue.disagreements + 1]))
    assert whole.uncovered() == {}
    assert pair_estimate(queue, whole.pairs)["unlabelled_strata"] == []


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
    # Unweighted, the sample says one in eight is supported (5 of 10 yes, 35 of 90 no);
    # weighted, one in ten (the truth).
    assert np.mean([p.label for p in pairs]) == pytest.approx(0.125)
    weighted = labels_only([float(p.label) for p in pairs], [p.probability for p in pairs])
    assert weighted.value == pytest.approx(0.1)
    shown = pair_estimate(queue, pairs)
    assert shown["method"] == "ppi"
    assert shown["value"] == pytest.approx(0.1)
    assert shown["labels"] == 40
    assert json.dumps(shown)  # the widget's trait carries it


def test_a_labels_file_stopped_short_weighs_each_label_by_its_strata_labelled_share(
    tmp_path: Path,
) -> None:
    # A stratified sample of 40 (5 of the 10 "yes" pairs, 35 of the 90 "no") stopped after
    # 12 labels: the prefix keeps the shares only roughly, and a skipped pair leaves its
    # stratum one label short. Each label's chance is its stratum's labelled share in the
    # file (labels in it over the pairs it holds, origin.sampling.size), so the labels'
    # estimate is the post-stratified mean, as the whole sample's would be.
    queue = label_queue(_pairs(10, 90), sample=40, seed=3, judges=[STRICT], design="stratified")
    kept = [item for item in queue.items[:13] if item is not queue.items[1]]  # one skipped
    path = tmp_path / "labels.jsonl"
    lines = []
    for n, item in enumerate(kept):
        # Not the judge's verdicts: within each stratum the truth alternates.
        line = item.line(
            "supported" if n % 2 else "not_supported", sampling=queue.sampling(item.id)
        )
        lines.append(line.to_bytes().decode())
    path.write_text("".join(lines), encoding="utf-8")
    labels = load_label_set(path)
    chances = labels.chances()
    strata = [p.stratum for p in labels.pairs]
    for pair in labels.pairs:
        assert pair.stratum_size == (10 if pair.stratum == "v/m/yes" else 90)
        assert chances[pair.id] == pytest.approx(strata.count(pair.stratum) / pair.stratum_size)
    by_stratum = {
        name: np.mean([p.label for p in labels.pairs if p.stratum == name]) for name in strata
    }
    post_stratified = 0.1 * by_stratum["v/m/yes"] + 0.9 * by_stratum["v/m/no"]
    y = [float(p.label) for p in labels.pairs]
    weighted = labels_only(y, [chances[p.id] for p in labels.pairs])
    assert weighted.value == pytest.approx(post_stratified)
    # The whole sample's recorded chances (5/10, 35/90) weigh this prefix wrongly.
    recorded = labels_only(y, [p.probability for p in labels.pairs])
    assert abs(recorded.value - post_stratified) > 0.01
    # The Labeller's live estimate reads the same chances.
    assert pair_estimate(queue, labels.pairs)["labels"] == 12


def test_a_stratum_size_that_is_no_count_or_two_sizes_for_one_stratum_is_an_error(
    tmp_path: Path,
) -> None:
    queue = label_queue(_pairs(4, 6), sample=6, seed=0, judges=[STRICT], design="stratified")
    one, two = queue.items[:2]
    path = tmp_path / "labels.jsonl"

    def write(*sizes: object) -> None:
        lines = []
        for item, size in zip((one, two), sizes, strict=True):
            sampling = {**queue.sampling(item.id), "stratum": "v/m/all", "size": size}
            lines.append(item.line("supported", sampling=sampling).to_bytes().decode())
        path.write_text("".join(lines), encoding="utf-8")

    write("many", 10)
    with pytest.raises(InvalidInput, match=r"origin.sampling.size: must be a whole number"):
        load_label_set(path)
    lines = [
        item.line("supported", sampling={**queue.sampling(item.id), "strata": 0})
        .to_bytes()
        .decode()
        for item in (one, two)
    ]
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"origin.sampling.strata: must be a whole number"):
        load_label_set(path)
    write(10, 12)
    with pytest.raises(InvalidInput, match=r"'v/m/all' is recorded with 10 and with 12 pairs"):
        load_label_set(path).chances()
    write(1, 1)
    with pytest.raises(InvalidInput, match=r"'v/m/all' has 2 labels but holds 1 pairs"):
        load_label_set(path).chances()
