"""Judged metrics: the judge of each metric, its card and warnings, and the metrics
corrected for the judge's error (Rogan–Gladen with answer and label uncertainty)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from citelab import InvalidInput
from citelab.evals import score_answers
from citelab.evals.cards import JudgeCard, judge_card, shipped_card
from citelab.evals.results import LOW_KAPPA, card_view, rogan_gladen
from citelab.evals.results._judged import corrected_interval

FEES = "Tuition fees are due in May. A late payment costs 50 euros."
LIBRARY = "The library opens at 8 am on weekdays."
ANSWERS = [
    {
        "question": "When are fees due?",
        "docs": [{"title": "Fees", "text": FEES}, {"title": "Library", "text": LIBRARY}],
        "output": "Tuition fees are due in May [1]. The library opens at 8 am [2][1]. "
        "Parking is free.",
    },
    {
        "question": "When does the library open?",
        "docs": [{"title": "Library", "text": LIBRARY}],
        "output": "The library opens at 9 pm [1]. Late payment costs 50 euros [1].",
    },
    {
        "question": "Fees?",
        "docs": [{"title": "Fees", "text": FEES}],
        "output": "A late payment costs 50 euros [1]. Fees are due in May [3].",
    },
]


@pytest.fixture(scope="module")
def own_card() -> JudgeCard:
    """The default lexical judge's card on citelab's own labelled set (written and labelled
    by the project: enough for testing the plumbing, not a measure of the judge)."""
    return judge_card(None, "lexical", resamples=200)


def _answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"data": ANSWERS}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("truth", "share", "sensitivity", "specificity"),
    [(0.6, 1.0, 0.8, 0.9), (0.3, 0.7, 0.55, 0.95), (0.9, 0.5, 0.99, 0.6), (0.0, 1.0, 0.7, 0.7)],
)
def test_rogan_gladen_inverts_the_judges_error(
    truth: float, share: float, sensitivity: float, specificity: float
) -> None:
    # Forward: the judge says yes to a true unit with probability se, to a false one with
    # 1 - sp; only the judged share of the units can be hits.
    says_yes = sensitivity * truth + (1 - specificity) * (1 - truth)
    judged = share * says_yes
    assert rogan_gladen(judged, share, sensitivity, specificity) == pytest.approx(share * truth)


def test_rogan_gladen_clips_and_refuses_a_chance_judge() -> None:
    assert rogan_gladen(0.05, 1.0, 0.8, 0.8) == 0.0  # below the false-yes rate
    assert rogan_gladen(0.95, 0.6, 0.8, 0.8) == 0.6  # at most the judged share
    assert rogan_gladen(0.5, 1.0, 0.5, 0.5) is None
    assert rogan_gladen(0.5, 1.0, 0.3, 0.6) is None


def _per_case(count: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    denominators = rng.integers(1, 6, size=count).astype(float)
    judged = np.minimum(denominators, rng.integers(0, 6, size=count)).astype(float)
    numerators = np.floor(judged * rng.random(count))
    return numerators, denominators, judged


def _width(confusion: tuple[int, int, int, int], per_case: tuple[np.ndarray, ...]) -> float:
    n, d, j = per_case
    low, high = corrected_interval((n, d, j), confusion, np.random.default_rng(0), 2000)
    return high - low


def test_the_corrected_interval_widens_with_fewer_labels() -> None:
    per_case = _per_case()
    many = _width((800, 100, 200, 900), per_case)
    few = _width((8, 1, 2, 9), per_case)
    assert few > 1.5 * many


def test_the_corrected_interval_widens_with_fewer_answers_and_holds_the_point() -> None:
    n, d, j = _per_case(400)
    confusion = (80, 10, 20, 90)
    se, sp = 80 / 100, 90 / 100
    point = rogan_gladen(n.sum() / d.sum(), j.sum() / d.sum(), se, sp)
    low, high = corrected_interval((n, d, j), confusion, np.random.default_rng(0), 2000)
    assert point is not None
    assert low < point < high
    assert _width(confusion, (n[:40], d[:40], j[:40])) > _width(confusion, (n, d, j))


def test_corrected_metrics_match_an_independent_computation(
    tmp_path: Path, own_card: JudgeCard
) -> None:
    result = score_answers(
        _answers(tmp_path), "alce", scorers=["citation_recall", "citation_precision"],
        judge="lexical", judge_cards=[own_card],
    )  # fmt: skip
    table = card_view(result.corrected()).set_index("metric")
    c = own_card.metrics.confusion
    se, sp = c.true_yes / (c.true_yes + c.false_no), c.true_no / (c.true_no + c.false_yes)
    statements = result.to_pandas("statement")
    recall = statements[statements["metric"] == "citation_recall"]
    judged = recall["reason"].isin(["supported", "unsupported"])
    assert not judged.all()  # uncited and out-of-range statements: misses by rule
    v, j = recall["hit"].mean(), judged.mean()
    expected = min(max((v - (1 - sp) * j) / (se + sp - 1), 0.0), j)
    row = table.loc["citation_recall"]
    assert row["value"] == pytest.approx(v)
    assert row["judged_share"] == pytest.approx(j)
    assert row["corrected"] == pytest.approx(expected)
    assert row["sensitivity"] == pytest.approx(se)
    assert row["specificity"] == pytest.approx(sp)
    assert row["corrected_low"] <= row["corrected"] <= row["corrected_high"]
    citations = result.to_pandas("citation")
    precision = citations[citations["metric"] == "citation_precision"]
    statements_of = precision.groupby(["case_id", "statement"])["uri"]
    in_range = statements_of.transform(lambda uris: uris.notna().all())
    pv, pj = precision["hit"].mean(), in_range.mean()
    expected_p = min(max((pv - (1 - sp) * pj) / (se + sp - 1), 0.0), pj)
    assert table.loc["citation_precision", "corrected"] == pytest.approx(expected_p)


def test_every_judged_metric_names_its_judge_card_and_kappa(
    tmp_path: Path, own_card: JudgeCard
) -> None:
    result = score_answers(_answers(tmp_path), "alce", judge="lexical", judge_cards=[own_card])
    judges = {judge.metric: judge for judge in result.judges()}
    assert set(judges) == {"citation_recall_alce", "citation_precision_alce"}
    recall = judges["citation_recall_alce"]
    assert recall.judge == "lexical (threshold=0.75)"
    assert recall.card_source == "given"
    assert recall.kappa == own_card.metrics.kappa.value
    assert recall.kappa_low == own_card.metrics.kappa.low
    assert recall.weak_categories == own_card.weak_categories
    # ALCE's tables were made by ALCE's NLI judge, not by this one.
    assert any("NOT COMPARABLE" in w and "citation_recall_alce" in w for w in recall.warnings)


def test_a_judge_without_a_card_is_uncalibrated_and_cannot_be_corrected(tmp_path: Path) -> None:
    result = score_answers(_answers(tmp_path), "alce", judge={"name": "lexical", "threshold": 0.5})
    judge = result.judges()[0]
    assert judge.card is None
    assert judge.card_source == "none"
    assert any(w.startswith("UNCALIBRATED") for w in judge.warnings)
    assert card_view(result.corrected())["corrected"].isna().all()


def test_the_shipped_card_belongs_to_its_judge_with_its_settings_only() -> None:
    card = shipped_card("lexical")
    if card is None:
        pytest.fail("citelab ships a card for the lexical judge (scripts/make_judge_cards.py)")
    assert card.judge.config == {"name": "lexical", "threshold": 0.75}
    assert "WiCE" in card.labels.name or "wice" in card.labels.name.lower()
    assert shipped_card({"name": "lexical", "threshold": 0.6}) is None


def test_a_low_kappa_card_warns(tmp_path: Path) -> None:
    card = shipped_card("lexical")
    assert card is not None
    assert card.metrics.kappa.value is not None
    assert card.metrics.kappa.value < LOW_KAPPA  # the measured κ on WiCE dev (0.34)
    result = score_answers(_answers(tmp_path), "alce", judge="lexical")
    judge = result.judges()[0]
    assert judge.card_source == "shipped"
    assert any(w.startswith("LOW AGREEMENT") for w in judge.warnings)


def test_a_card_for_another_judge_is_refused(tmp_path: Path, own_card: JudgeCard) -> None:
    with pytest.raises(InvalidInput, match=r"describes none of the run's judges"):
        score_answers(
            _answers(tmp_path), "alce", judge={"name": "lexical", "threshold": 0.5},
            judge_cards=[own_card],
        )  # fmt: skip


def test_run_json_and_the_report_carry_the_judges(tmp_path: Path, own_card: JudgeCard) -> None:
    out = tmp_path / "report"
    score_answers(_answers(tmp_path), "alce", judge="lexical", out_dir=out, judge_cards=[own_card])
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert [j["metric"] for j in run["judges"]] == [
        "citation_recall_alce",
        "citation_precision_alce",
    ]
    assert run["judges"][0]["kappa"] == own_card.metrics.kappa.value
    assert {row["metric"] for row in run["corrected"]} == {
        "citation_recall_alce",
        "citation_precision_alce",
    }
    corrected = pd.read_csv(out / "corrected.csv")
    assert (
        list(corrected["metric"]) == ["citation_recall_alce"] * 2 + ["citation_precision_alce"] * 2
    )
    assert list(corrected["method"]) == ["judged", "card"] * 2
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns) == [
        "variant", "model", "metric", "value", "ci_low", "ci_high", "units", "cases",
        "aggregate", "higher_is_better", "too_few", "interval",
    ]  # fmt: skip
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Judges: who decided the judged numbers" in page
    assert "judged by lexical (threshold=0.75)" in page
    assert "Judged and corrected for the judge" in page
    assert "NOT COMPARABLE" in page


def test_the_report_escapes_what_a_card_says(tmp_path: Path, own_card: JudgeCard) -> None:
    hostile = "<script>alert(1)</script>"
    labels = own_card.labels.model_copy(update={"name": hostile})
    card = own_card.model_copy(update={"labels": labels, "weak_categories": [hostile]})
    result = score_answers(_answers(tmp_path), "alce", judge="lexical", judge_cards=[card])
    page = result.report_html()
    assert hostile not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
