"""Judges against human labels, the improved lexical judge, and the concurrent LLM judge."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from citelab import InvalidInput
from citelab.cli import main
from citelab.evals import (
    DEFAULT_JUDGE,
    LLMJudge,
    calibration_table,
    category_accuracy,
    judge_card,
    score_answers,
)
from citelab.evals.cards import (
    ALCE_PUBLISHED_AGREEMENT,
    load_labels,
    metrics_row,
)
from citelab.evals.judges import JudgeModel
from citelab.evals.labels import LabelledPair, LabelSet
from citelab.models import (
    serve_in_thread,
)

from .._judge_models import YesNoModel


def test_our_labelled_set_is_large_enough_and_covers_every_hazard() -> None:
    pairs = load_labels()
    assert len(pairs) >= 200
    categories = {p.category for p in pairs}
    assert {"paraphrase", "negation", "numbers", "partial", "multi_passage"} <= categories
    assert 0.3 < sum(p.label for p in pairs) / len(pairs) < 0.6
    assert all(p.evidence and p.claim for p in pairs)


class Oracle:
    """Knows the labels: a perfect judge, to pin the figures' definitions."""

    name = "oracle"

    def __init__(self, answers: dict[str, bool]) -> None:
        self.answers = answers

    def supports(self, statement: str, evidence: str) -> bool:
        return self.answers[statement]

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


class Always:
    name = "always"

    def supports(self, statement: str, evidence: str) -> bool:
        return True

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def write_labels(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_figures_are_accuracy_macro_f1_and_kappa(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "claim": "c1", "evidence": "e", "label": 1},
        {"id": "b", "claim": "c2", "evidence": ["e"], "label": 0},
        {"id": "c", "claim": "c3", "evidence": "e", "label": True},
        {"id": "d", "claim": "c4", "evidence": "e", "label": False},
    ]
    path = write_labels(tmp_path, rows)
    oracle = Oracle({"c1": True, "c2": False, "c3": True, "c4": False})
    cards = [judge_card(path, judge, resamples=200) for judge in (oracle, Always())]
    perfect, yes = (metrics_row(card) for card in cards)
    assert (perfect["accuracy"], perfect["macro_f1"], perfect["kappa"]) == (1.0, 1.0, 1.0)
    # Always "yes" on 2 yes / 2 no: accuracy 0.5; F1(yes) 2/3, F1(no) 0 → macro 1/3; κ 0.
    assert yes["accuracy"] == 0.5
    assert yes["macro_f1"] == pytest.approx(1 / 3)
    assert yes["kappa"] == pytest.approx(0.0)
    assert yes["accuracy_low"] <= 0.5 <= yes["accuracy_high"]
    table = calibration_table(cards)
    assert list(table["judge"]) == ["oracle", "always", *list(ALCE_PUBLISHED_AGREEMENT["judge"])]
    assert list(table["kappa"].head(2)) == [1.0, pytest.approx(0.0)]
    assert list(table["pairs"].head(2)) == [4, 4]
    assert list(table["source"].head(2)) == ["this labelled set"] * 2
    assert list(table["kappa"].tail(2)) == [0.698, 0.525]
    assert len(ALCE_PUBLISHED_AGREEMENT) == 2


def test_bad_labels_are_named_by_line_and_field(tmp_path: Path) -> None:
    path = write_labels(
        tmp_path,
        [
            {"id": "a", "claim": "c", "evidence": "e", "label": True},
            {"id": "b", "claim": "c", "evidence": "e", "label": "maybe"},
            {"id": "a", "claim": "c", "evidence": "e", "label": False},
        ],
    )
    with pytest.raises(InvalidInput) as caught:
        load_labels(path)
    assert "labels.jsonl:2" in str(caught.value)
    assert "label" in str(caught.value)
    assert "labels.jsonl:3: id 'a' was already used on line 1" in str(caught.value)


def test_the_default_judge_does_better_where_the_plain_one_is_weak() -> None:
    cards = [judge_card(None, judge, resamples=200) for judge in (DEFAULT_JUDGE, "lexical")]
    by_category = category_accuracy(cards)
    assert [card.judge.name for card in cards] == ["lexical_trained", "lexical"]
    trained, plain = (card.judge.label for card in cards)
    for hazard in ("numbers", "negation", "paraphrase"):
        assert by_category.loc[hazard, trained] > by_category.loc[hazard, plain], hazard
    trained_f1, plain_f1 = (card.metrics.macro_f1.value for card in cards)
    assert trained_f1 is not None
    assert plain_f1 is not None
    assert trained_f1 > plain_f1


def test_judges_calibrate_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judges", "calibrate", "--json", "--judge", "lexical_trained"]) == 0
    payload = json.loads(capsys.readouterr().out)
    (figures,) = payload["judges"]
    assert figures["pairs"] >= 200
    assert 0.0 <= figures["kappa_low"] <= figures["kappa"] <= figures["kappa_high"] <= 1.0
    assert [row["kappa"] for row in payload["alce_published"]] == [0.698, 0.525]
    assert main(["judges", "list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == ["lexical", "lexical_trained", "llm", "nli"]


def test_the_llm_judge_asks_concurrently_but_never_more_than_its_bound() -> None:
    model = YesNoModel("slow", pause=0.1, reply="yes")
    with serve_in_thread(model) as server:
        judge = LLMJudge("slow", base_url=server.base_url, concurrency=4)
        judge.supports("warm", "up")  # the SDK's import and first connection are not timed
        model.peak = 0
        pairs = [(f"claim {i}", "evidence") for i in range(16)]
        began = time.perf_counter()
        assert judge.supports_many(pairs) == [True] * 16
        seconds = time.perf_counter() - began
    assert model.peak == 4
    assert seconds < 16 * 0.1  # sequential calls would take 1.6 s at least


def test_score_answers_runs_the_llm_judge_on_served_judge_model() -> None:
    data = {
        "data": [
            {
                "question": "Q?",
                "docs": [{"title": "Fees", "text": "Tuition fees are due in May."}],
                "output": f"Tuition fees are due in May [1]. Rooms open at {n} [1].",
            }
            for n in range(8)
        ]
    }
    with serve_in_thread(JudgeModel()) as server:
        judge = {"name": "llm", "model": "judge", "base_url": server.base_url, "concurrency": 4}
        result = score_answers(data, "alce", judge=judge)
    summary = result.summary().set_index("metric")
    assert summary.loc["citation_recall_alce", "value"] == 0.5
    assert result.config["judge"]["concurrency"] == 4


ALCE_SAMPLE = Path(__file__).parents[3] / "fixtures" / "judges" / "alce_human_eval_sample.json"


def test_alce_human_eval_citations_become_recall_and_citation_pairs() -> None:
    pairs = {pair.id: pair for pair in load_labels(ALCE_SAMPLE)}
    record = "asqa/sample-model-shot2-ndoc3.json/q-river-bridge"
    joint = pairs[f"{record}/s0"]
    assert joint.claim == "The old river bridge in Tallow opened in 1874."  # markers removed
    assert joint.evidence[0].startswith("Title: Tallow bridges\nThe old river bridge")
    assert len(joint.evidence) == 2
    assert joint.label
    assert joint.category == "alce_recall"
    # One pair per citation: supported only when the annotator rated it 2 (full support).
    assert [pairs[f"{record}/s0/c{n}"].label for n in (0, 1)] == [True, False]
    assert pairs[f"{record}/s1/c0"].label is False  # 1.0: partial support
    assert pairs[f"{record}/s2/c0"].label is True  # 2.0 written as a float
    # A sentence without citations gives no pair; overall_results is no record.
    choir = "asqa/sample-model-shot2-ndoc3.json/q-choir"
    assert f"{choir}/s0" in pairs
    assert f"{choir}/s1" not in pairs
    assert not any("overall_results" in ident for ident in pairs)
    assert len(pairs) == 14
    assert load_labels(ALCE_SAMPLE, "alce") == list(pairs.values())


def test_the_command_line_calibrates_on_alce_human_eval_labels(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["judges", "calibrate", str(ALCE_SAMPLE), "--json", "--by-category"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [row["pairs"] for row in payload["judges"]] == [14, 14]
    assert set(payload["by_category"]["lexical (threshold=0.75)"]) == {
        "alce_citation",
        "alce_recall",
    }


def _alce(tmp_path: Path, data: object, name: str = "human_eval.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _record(**sentence: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "text": "Rooms open at 9 [1].",
        "citations": [
            {"title": "Rooms", "text": "Rooms open at 9.", "citation_precision_score": 2}
        ],
        "sentence_recall_score": 1,
    }
    return {"id": "q1", "sentences": [{**base, **sentence}]}


@pytest.mark.parametrize(
    ("sentence", "problem"),
    [
        (
            {"sentence_recall_score": 3},
            r"record asqa › m\.json › q1: field sentences\.0\.sentence_recall_score: "
            r"Value error, must be 0 or 1",
        ),
        (
            {"citations": [{"title": "Rooms", "text": "x", "citation_precision_score": 5}]},
            r"record asqa › m\.json › q1: field "
            r"sentences\.0\.citations\.0\.citation_precision_score: Value error, must be 0, 1 or 2",
        ),
        (
            {"citations": [{"title": "Rooms", "citation_precision_score": 2}]},
            r"record asqa › m\.json › q1: field sentences\.0\.citations\.0\.text: Field required",
        ),
    ],
)
def test_bad_alce_human_eval_labels_name_file_record_and_field(
    tmp_path: Path, sentence: dict[str, Any], problem: str
) -> None:
    path = _alce(tmp_path, {"asqa": {"m.json": {"q1": _record(**sentence)}}})
    with pytest.raises(InvalidInput, match=r"human_eval\.json: " + problem):
        load_labels(path)


def test_alce_human_eval_labels_that_are_no_nested_object_or_no_json_are_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(InvalidInput, match=r"h\.json: record asqa: expected an object"):
        load_labels(_alce(tmp_path, {"asqa": ["not", "models"]}, "h.json"))
    broken = tmp_path / "broken.json"
    broken.write_text('{"asqa": {', encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"broken\.json:1: invalid JSON .*ALCE's human-eval"):
        load_labels(broken)
    uncited = _alce(tmp_path, {"asqa": {"m.json": {"q1": _record(citations=[])}}}, "u.json")
    with pytest.raises(InvalidInput, match="no cited sentence"):
        load_labels(uncited)
    with pytest.raises(InvalidInput, match="unknown labels format 'xml'"):
        load_labels(uncited, "xml")  # type: ignore[arg-type]


def _pair(ident: str, label: bool, claim: str = "", category: str = "c") -> LabelledPair:
    return LabelledPair(id=ident, claim=f"rooms open at nine {ident}", evidence=["rooms"],
                        label=label, category=category, claim_id=claim)  # fmt: skip


class Says:
    """Says yes to the pairs named (by the claim's last word)."""

    name = "says"

    def __init__(self, *yes: str) -> None:
        self.yes = set(yes)

    def supports(self, statement: str, evidence: str) -> bool:
        return statement.rsplit(maxsplit=1)[-1] in self.yes

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def test_category_accuracy_counts_a_claims_chunks_once() -> None:
    # Claim x: two chunks, one says yes: the claim is judged yes (right); y is wrong.
    chunked = [_pair("x0", True, "x"), _pair("x1", True, "x"), _pair("y", False, "y")]
    card = judge_card(LabelSet.of(chunked), Says("x1", "y"), resamples=20)
    assert category_accuracy([card]).loc["c", "says"] == 0.5
    # Without claim ids every pair is its own claim.
    flat = [_pair("x0", True), _pair("x1", True), _pair("y", False)]
    card = judge_card(LabelSet.of(flat), Says("x1", "y"), resamples=20)
    assert category_accuracy([card]).loc["c", "says"] == pytest.approx(1 / 3)


def test_category_accuracy_has_a_column_per_card_and_one_row_without_categories() -> None:
    pairs = [_pair("a", True, category="one"), _pair("b", False, category="two")]
    cards = [judge_card(LabelSet.of(pairs), Says("a"), resamples=20),
             judge_card(LabelSet.of(pairs), Always(), resamples=20)]  # fmt: skip
    table = category_accuracy(cards)
    assert table.to_dict() == {"always": {"one": 1.0, "two": 0.0},
                               "says": {"one": 1.0, "two": 1.0}}  # fmt: skip
    plain = [_pair("a", True, category=""), _pair("b", False, category="")]
    card = judge_card(LabelSet.of(plain), Always(), resamples=20)
    assert category_accuracy([card]).to_dict() == {"always": {"(none)": 0.5}}
