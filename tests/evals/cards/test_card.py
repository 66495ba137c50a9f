"""Judge cards: figures checked against an independent computation (scikit-learn, on WiCE's
dev split read here with plain ``json``), bootstrap intervals over claims, threshold sweeps,
categories, reference judges side by side, the LLM judge over real HTTP, JSON, HTML, plots.

WiCE's dev split is third-party data read from ``../shared/testdata/wice/`` (the tests that
need it skip when it is absent).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    roc_auc_score,
)

from citelab import ConfigError, InvalidInput
from citelab.evals import (
    JudgeCard,
    LabelSet,
    LexicalJudge,
    Reference,
    judge_card,
    load_label_set,
)
from citelab.evals.cards import CARDS_DIR
from citelab.evals.judges import DEFAULT_JUDGE, JudgeModel
from citelab.evals.labels import LabelledPair
from citelab.models import serve_in_thread

ROOT = Path(__file__).resolve().parents[3]
WICE = ROOT.parent / "shared" / "testdata" / "wice"
T5 = WICE / "dev_scores_t5-3b-anli.json"
needs_wice = pytest.mark.skipif(
    not (WICE / "oracle_claim_dev.jsonl").is_file(),
    reason=f"WiCE's dev split is not in {WICE} (third-party data kept outside the repository)",
)


def independent_claims(path: Path) -> dict[str, dict[str, Any]]:
    """WiCE read with plain json: per claim id, its label, the lexical judge's verdict (any
    chunk) and its overlap (the highest), asked of the judge directly."""
    judge = LexicalJudge()
    claims: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"verdict": False, "score": -1.0, "label": None}
    )
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        claim = claims[row["meta"]["id"]]
        evidence = "\n".join(row["evidence"])
        claim["label"] = row["label"] == "supported"
        claim["verdict"] |= judge.supports(row["claim"], evidence)
        claim["score"] = max(claim["score"], judge.overlap(row["claim"], evidence))
    return dict(claims)


def sklearn_figures(truth: list[bool], verdict: list[bool], score: list[float]) -> dict[str, float]:
    return {
        "accuracy": accuracy_score(truth, verdict),
        "macro_f1": f1_score(truth, verdict, average="macro"),
        "kappa": cohen_kappa_score(truth, verdict),
        "auc": roc_auc_score(truth, score),
    }


def card_figures(card: JudgeCard) -> dict[str, float | None]:
    m = card.metrics
    assert m.auc is not None
    return {
        "accuracy": m.accuracy.value,
        "macro_f1": m.macro_f1.value,
        "kappa": m.kappa.value,
        "auc": m.auc.value,
    }


@needs_wice
@pytest.mark.parametrize("name", ["oracle_claim_dev.jsonl", "claim_dev.jsonl"])
def test_the_card_on_wice_equals_an_independent_computation(name: str) -> None:
    claims = independent_claims(WICE / name)
    truth = [c["label"] for c in claims.values()]
    verdict = [c["verdict"] for c in claims.values()]
    expected = sklearn_figures(truth, verdict, [c["score"] for c in claims.values()])
    card = judge_card(WICE / name, "lexical", resamples=200)
    assert card.metrics.claims == len(claims) == 349
    assert card_figures(card) == pytest.approx(expected, abs=1e-12)
    tn, fp, fn, tp = confusion_matrix(truth, verdict).ravel()
    confusion = card.metrics.confusion
    assert (confusion.true_yes, confusion.false_yes, confusion.false_no, confusion.true_no) == (
        tp, fp, fn, tn
    )  # fmt: skip
    assert card.metrics.sensitivity.value == pytest.approx(tp / (tp + fn))
    assert (card.metrics.sensitivity.count, card.metrics.sensitivity.of) == (tp, tp + fn)
    assert card.metrics.specificity.value == pytest.approx(tn / (tn + fp))
    assert (card.metrics.specificity.count, card.metrics.specificity.of) == (tn, tn + fp)
    assert card.metrics.ppv.value == pytest.approx(tp / (tp + fp))
    assert card.metrics.npv.value == pytest.approx(tn / (tn + fn))
    assert card.metrics.says_yes.value == pytest.approx(np.mean(verdict))


@needs_wice
def test_references_sit_beside_the_judge_on_the_claims_they_cover() -> None:
    claims = independent_claims(WICE / "oracle_claim_dev.jsonl")
    published: dict[str, float] = json.loads(T5.read_text(encoding="utf-8"))
    covered = [key for key in claims if key in published]
    truth = [claims[k]["label"] for k in covered]
    t5 = sklearn_figures(
        truth, [published[k] >= 0.5 for k in covered], [published[k] for k in covered]
    )
    ours = sklearn_figures(
        truth, [claims[k]["verdict"] for k in covered], [claims[k]["score"] for k in covered]
    )
    reference = Reference.load("T5-3B (ANLI)", T5)
    card = judge_card(
        WICE / "oracle_claim_dev.jsonl", "lexical", references=[reference], resamples=200
    )
    [side] = card.references
    assert side.claims == len(covered) == 100
    assert side.not_in_labels == 0
    assert side.threshold == 0.5
    assert side.file == T5.name
    for figures, expected in ((side.reference, t5), (side.judge, ours)):
        assert figures.claims == 100
        assert figures.accuracy.value == pytest.approx(expected["accuracy"])
        assert figures.kappa.value == pytest.approx(expected["kappa"])
        assert figures.auc is not None
        assert figures.auc.value == pytest.approx(expected["auc"])
    difference = ours["kappa"] - t5["kappa"]
    assert side.kappa_difference.value == pytest.approx(difference)
    assert side.kappa_difference.low is not None
    assert side.kappa_difference.high is not None
    assert side.kappa_difference.low <= difference <= side.kappa_difference.high
    table = card.comparison_table()
    assert list(table["judge"]) == [card.judge.label, "T5-3B (ANLI)", card.judge.label]
    assert list(table["claims"]) == [349, 100, 100]


def pairs_of(claims: list[tuple[str, bool, list[str]]]) -> list[LabelledPair]:
    """One pair per (claim id, label, chunk) chunk; the claim text names its words."""
    return [
        LabelledPair(id=f"{ident}#{n}", claim=f"alpha {ident}", evidence=[chunk], label=label,
                     claim_id=ident)
        for ident, label, chunks in claims
        for n, chunk in enumerate(chunks)
    ]  # fmt: skip


def test_a_claims_verdict_is_the_best_over_its_chunks_and_resampling_draws_claims() -> None:
    # Claims "y*" are supported (their words occur in one chunk of three), "n*" are not.
    one_chunk = [(f"y{i}", True, [f"alpha y{i}"]) for i in range(6)]
    one_chunk += [(f"n{i}", False, ["beta"]) for i in range(5)]
    one_chunk += [(f"m{i}", False, [f"alpha m{i}"]) for i in range(3)]  # judged wrongly: yes
    chunked = [(i, label, ["gamma", *chunks, "delta"]) for i, label, chunks in one_chunk]
    flat = judge_card(LabelSet.of(pairs_of(one_chunk)), "lexical", resamples=300, seed=3)
    folded = judge_card(LabelSet.of(pairs_of(chunked)), "lexical", resamples=300, seed=3)
    assert folded.labels.pairs == 3 * flat.labels.pairs
    assert folded.labels.claims == flat.labels.claims == 14
    # Same claims, same verdicts, same seed: resampling claims gives the very same intervals
    # (resampling chunks would not).
    assert folded.metrics == flat.metrics
    assert folded.metrics.confusion.false_yes == 3
    assert folded.metrics.accuracy.value == pytest.approx(11 / 14)


class Scored:
    """A judge with a score of its own: the share of the claim's words in the evidence."""

    name = "scored"
    threshold = 0.9

    def score(self, statement: str, evidence: str) -> float:
        words = statement.split()
        return sum(w in evidence.split() for w in words) / len(words)

    def supports(self, statement: str, evidence: str) -> bool:
        return self.score(statement, evidence) >= self.threshold

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "threshold": self.threshold}


def verdicts_only(statement: str, evidence: str) -> bool:
    return statement in evidence


SMALL = [
    LabelledPair(id="a", claim="rooms open at nine", evidence=["rooms open at nine"], label=True,
                 category="times"),
    LabelledPair(id="b", claim="rooms open at ten", evidence=["rooms open at nine"], label=False,
                 category="times"),
    LabelledPair(id="c", claim="fees due in may", evidence=["fees are due in may"], label=True,
                 category="dates"),
    LabelledPair(id="d", claim="fees due in june", evidence=["fees due in may"], label=False,
                 category="dates"),
    LabelledPair(id="e", claim="the bus stops here", evidence=["a bus stops"], label=True,
                 category="dates"),
]  # fmt: skip


def test_a_judge_with_a_score_gets_an_auc_and_a_threshold_sweep() -> None:
    card = judge_card(SMALL, Scored(), resamples=100)
    scores = [Scored().score(p.claim, p.evidence[0]) for p in SMALL]
    assert card.judge.score == "score"
    assert card.metrics.auc is not None
    assert card.metrics.auc.value == pytest.approx(roc_auc_score([p.label for p in SMALL], scores))
    sweep = card.threshold
    assert sweep is not None
    assert sweep.operating == 0.9
    assert sweep.verdicts_follow_score
    at_operating = next(p for p in sweep.points if p.threshold == 0.9)
    assert at_operating.accuracy == card.metrics.accuracy.value
    assert at_operating.kappa == card.metrics.kappa.value
    assert {p.threshold for p in sweep.points} == set(scores) | {0.9}
    assert sweep.best.kappa is not None
    assert all(p.kappa is None or p.kappa <= sweep.best.kappa for p in sweep.points)
    assert any("optimistic" in note for note in card.notes)
    assert not card.sweep_table().empty


def test_a_judge_with_verdicts_only_gets_neither_auc_nor_sweep() -> None:
    card = judge_card(SMALL, f"{__name__}:verdicts_only", resamples=100)
    assert card.judge.name == f"{__name__}:verdicts_only"
    assert card.judge.score is None
    assert card.metrics.auc is None
    assert card.threshold is None
    assert "auc" not in set(card.table()["figure"])
    assert any("verdicts only" in note for note in card.notes)
    figure = card.plot()
    assert len(figure.axes) == 1  # the ROC plane with the judge's one point


def test_the_lexical_judges_overlap_serves_as_its_score_and_the_card_says_so() -> None:
    card = judge_card(SMALL, {"name": "lexical", "threshold": 0.75}, resamples=100)
    assert card.judge.score == "overlap"
    assert card.judge.config == {"name": "lexical", "threshold": 0.75}
    assert any("word overlap" in note for note in card.notes)
    assert card.threshold is not None
    assert card.threshold.verdicts_follow_score
    assert len(card.plot().axes) == 2


def test_intervals_are_seeded() -> None:
    first = judge_card(None, "lexical", resamples=200, seed=1)
    again = judge_card(None, "lexical", resamples=200, seed=1)
    other = judge_card(None, "lexical", resamples=200, seed=2)
    assert first.metrics == again.metrics
    assert first.bootstrap.seed == 1
    assert first.bootstrap.resamples == 200
    assert first.metrics.accuracy.low is not None
    assert first.metrics.accuracy.low <= first.metrics.accuracy.value
    assert other.metrics != first.metrics
    with pytest.raises(InvalidInput, match="resamples must be at least 1"):
        judge_card(SMALL, Scored(), resamples=0)
    with pytest.raises(InvalidInput, match="seed must be 0 or more"):
        judge_card(SMALL, Scored(), seed=-1)


def test_categories_are_measured_and_the_weak_ones_named() -> None:
    card = judge_card(None, "lexical", resamples=300)
    overall = card.metrics.accuracy.value
    assert overall is not None
    by_name = {c.category: c for c in card.categories}
    assert set(by_name) == {p.category for p in load_label_set().pairs}
    for category in card.categories:
        high = category.figures.accuracy.high
        assert category.weak == (high is not None and high < overall)
    assert card.weak_categories == [c.category for c in card.categories if c.weak]
    # The plain lexical judge cannot see a paraphrase: people say yes, it says no.
    assert "paraphrase" in card.weak_categories
    assert by_name["paraphrase"].figures.sensitivity.value is not None
    assert by_name["paraphrase"].figures.sensitivity.value < 0.5
    assert any("written and labelled by citelab's developers" in n for n in card.notes)
    table = card.categories_table()
    assert list(table["category"]) == [c.category for c in card.categories]


@needs_wice
def test_says_yes_is_shown_per_written_grade() -> None:
    card = judge_card(WICE / "claim_dev.jsonl", "lexical", resamples=100)
    grades = {g.grade: g for g in card.grades}
    assert list(grades) == ["supported", "partially_supported", "not_supported"]
    assert sum(g.claims for g in card.grades) == 349
    supported = grades["supported"].says_yes
    assert supported.value == card.metrics.sensitivity.value
    assert card.categories == []  # WiCE's claims have no categories


def test_references_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "ref.json"
    path.write_text(json.dumps({"zz": 0.9}), encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"none of its 1 ids is a claim .*'zz'.*'a'"):
        judge_card(SMALL, Scored(), references=[Reference.load("R", path)])
    path.write_text(json.dumps({"a": "high"}), encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"reference R .*ref\.json: 'a': expected a number"):
        Reference.load("R", path)
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InvalidInput, match="expected a JSON object"):
        Reference.load("R", path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(InvalidInput, match="not JSON"):
        Reference.load("R", path)
    with pytest.raises(InvalidInput, match="cannot read reference R"):
        Reference.load("R", tmp_path / "missing.json")


def test_a_reference_of_verdicts_has_no_threshold_and_no_auc(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps({"a": True, "b": True, "c": False, "x": True}), encoding="utf-8")
    card = judge_card(SMALL, Scored(), references=[Reference.load("V", path)], resamples=50)
    [side] = card.references
    assert side.threshold is None
    assert side.reference.auc is None
    assert side.auc_difference is None
    assert side.claims == 3
    assert side.not_in_labels == 1
    assert side.reference.confusion.false_yes == 1  # b: people say no, V says yes


def test_a_card_is_saved_and_loaded_as_json(tmp_path: Path) -> None:
    card = judge_card(SMALL, Scored(), resamples=50)
    path = card.save(tmp_path / "cards" / "scored.card.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "citelab-judge-card/1"
    for key in ("judge", "labels", "metrics", "bootstrap", "weak_categories", "references"):
        assert key in data
    assert data["metrics"]["confusion"] == {
        "true_yes": 2, "false_yes": 0, "false_no": 1, "true_no": 2
    }  # fmt: skip
    assert data["metrics"]["sensitivity"]["count"] == 2
    assert data["metrics"]["sensitivity"]["of"] == 3
    assert JudgeCard.load(path) == card
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**data, "metrics": {"claims": "many"}}), encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"broken\.json: field metrics\.claims"):
        JudgeCard.load(broken)
    (tmp_path / "text.json").write_text("not json", encoding="utf-8")
    with pytest.raises(InvalidInput, match="not JSON"):
        JudgeCard.load(tmp_path / "text.json")


def test_an_undefined_figure_is_none_not_nan(tmp_path: Path) -> None:
    all_yes = [p for p in SMALL if p.label]
    card = judge_card(all_yes, Scored(), resamples=50)
    assert card.metrics.specificity.value is None  # no unsupported claim
    assert card.metrics.specificity.of == 0
    assert card.metrics.auc is not None
    assert card.metrics.auc.value is None
    text = card.model_dump_json()
    assert "NaN" not in text
    assert JudgeCard.load(card.save(tmp_path / "c.json")) == card


class Hostile:
    """A judge whose name and configuration are markup."""

    name = "<script>alert('judge')</script>"

    def supports(self, statement: str, evidence: str) -> bool:
        return True

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "prompt": "<img src=x onerror=alert(1)>"}


def test_the_html_card_is_self_contained_and_escapes_every_text(tmp_path: Path) -> None:
    pairs = [
        LabelledPair(id="a", claim="x", evidence=["x"], label=True,
                     category="<b onmouseover=alert(2)>cat</b>"),
        LabelledPair(id="b", claim="y", evidence=["z"], label=False, category="plain"),
    ]  # fmt: skip
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"a": 0.9, "b": 0.2}), encoding="utf-8")
    reference = Reference.load("<i>ref</i>", path)
    card = judge_card(pairs, Hostile(), references=[reference], resamples=20)
    page = card.to_html()
    assert page.startswith("<!doctype html>")
    for raw in ("<script>", "<img src=x", "<b onmouseover", "<i>ref</i>"):
        assert raw not in page
    assert "&lt;script&gt;alert(&#x27;judge&#x27;)&lt;/script&gt;" in page
    assert "&lt;i&gt;ref&lt;/i&gt;" in page
    # No request leaves the page: the picture is inline, no script or stylesheet is linked.
    assert not re.search(r"(src|href)=\"(?!data:)", page)
    assert "<script" not in page
    assert "data:image/svg+xml;base64," in page
    fragment = card._repr_html_()
    assert fragment.startswith("<style>")
    assert "<script>" not in fragment


def test_the_llm_judge_gets_a_card_over_real_http() -> None:
    lexical = judge_card(SMALL, "lexical", resamples=50)
    with serve_in_thread(JudgeModel("lexical")) as server:
        spec = {"name": "llm", "model": "judge", "base_url": server.base_url, "concurrency": 2}
        card = judge_card(SMALL, spec, resamples=50)
    assert card.judge.name == "llm"
    assert card.judge.config["model"] == "judge"
    assert card.judge.label == "llm (model=judge)"
    assert "api_key" not in card.judge.config
    assert card.judge.score is None
    assert card.metrics.auc is None
    # The served model answers with the lexical judge: the verdicts are its verdicts.
    assert card.metrics.confusion == lexical.metrics.confusion


def test_a_judge_without_a_model_says_how_to_give_one() -> None:
    with pytest.raises(ConfigError) as caught:
        judge_card(SMALL, "llm")
    message = str(caught.value)
    assert "judge llm needs a model" in message
    assert """--judge '{"name": "llm", "model": "gpt-4o-mini"}'""" in message
    assert 'judge = {name = "llm", model = "gpt-4o-mini"}' in message
    for key in ("base_url", "api_key", "prompt", "cache_dir", "timeout", "concurrency"):
        assert key in message


def test_a_score_that_is_no_number_is_refused() -> None:
    class Wordy(Scored):
        def score(self, statement: str, evidence: str) -> float:
            return "high"  # type: ignore[return-value]

        def supports(self, statement: str, evidence: str) -> bool:
            return True

    with pytest.raises(ConfigError, match="score\\(\\) must return a number, got 'high'"):
        judge_card(SMALL, Wordy())


def readme_rows() -> dict[tuple[str, str], list[str]]:
    """The README's agreement table: (judge, labelled set) → its cells."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Support judges: how far they agree with people", 1)[1]
    rows: dict[tuple[str, str], list[str]] = {}
    table = section.split("\n| judge | labelled set |", 1)[1].split("\n\n", 1)[0]
    for line in table.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0], cells[1]] = cells[2:]
    return rows


def shown(figures: Any) -> list[str]:
    """A card's figures as the README's table writes them."""
    m = figures
    assert m.auc is not None
    return [
        str(m.claims),
        f"{m.says_yes.value:.2f}",
        f"{m.accuracy.value:.3f}",
        f"{m.macro_f1.value:.3f}",
        f"{m.kappa.value:.3f} [{m.kappa.low:.2f}, {m.kappa.high:.2f}]",
        f"{m.auc.value:.3f}",
        f"{m.sensitivity.value:.2f}",
        f"{m.specificity.value:.2f}",
    ]


@needs_wice
def test_the_readmes_agreement_figures_are_what_the_cards_say() -> None:
    rows = readme_rows()
    reference = Reference.load("T5-3B (ANLI)", T5)
    for judge in ("lexical",):
        card = judge_card(WICE / "oracle_claim_dev.jsonl", judge, references=[reference])
        assert rows[f"`{judge}`", "WiCE dev, oracle chunks"] == shown(card.metrics)
        [side] = card.references
        assert rows[f"`{judge}`, same 100 claims", ""] == shown(side.judge)
        t5 = "T5-3B trained on ANLI (WiCE's published outputs, yes at ≥ 0.5)"
        assert rows[t5, "the 100 of those claims with outputs"] == shown(side.reference)
        own = judge_card(None, judge)
        assert rows[f"`{judge}`", "citelab's own set"] == shown(own.metrics)


def test_the_readmes_default_judge_row_is_its_shipped_out_of_fold_card() -> None:
    """The default judge was trained on WiCE dev: its row is the out-of-fold card citelab
    ships (scripts/make_judge_cards.py --oof-scores), not a card made on its training data."""
    card = JudgeCard.load(CARDS_DIR / "lexical_trained.json")
    assert card.judge.name == DEFAULT_JUDGE
    assert "out of fold" in card.labels.name
    row = readme_rows()["`lexical_trained`, out of fold (shipped card)", "WiCE dev, oracle chunks"]
    assert row == shown(card.metrics)
