"""Citation recall asked to record the judge's score (a run with labels): each judged
statement's ``judge_score`` is the judge's score on the cited passages joined, agrees with
its verdict, and nothing changes when it is not asked."""

from __future__ import annotations

import random
from typing import Any

import pytest

from citelab.evals import GoldTurn, build_scorer
from citelab.evals.judges import build_judge
from citelab.evals.scorers import (
    CitationRecall,
    citation_precision,
    citation_recall,
    with_judge_scores,
)

from .._builders import PAGES, record

GOLD = GoldTurn(question="When are fees due?")
TEXT = (
    "Tuition fees are due in May [1]. The library opens at 8 am [1]. Parking is cheap. "
    "Tuition fees are due in May and the library opens at 8 am [1][2]. Fees are due [3]."
)


def test_recall_records_the_judges_score_of_each_judged_statement() -> None:
    judge = build_judge("lexical_trained")
    scorer = citation_recall(judge, judge_scores=True)
    rows = scorer(record(TEXT), GOLD).rows
    assert [row["reason"] for row in rows] == [
        "supported", "unsupported", "uncited", "supported", "out_of_range",
    ]  # fmt: skip
    # The rules decide an uncited statement and one out of range: no judge call, no score.
    assert ["judge_score" in row for row in rows] == [True, True, False, True, False]
    joined = "\n".join(record(TEXT).sources[n - 1].evidence for n in (1, 2))
    assert rows[3]["judge_score"] == judge.score(rows[3]["claim"], joined)  # type: ignore[attr-defined]
    for row in rows[:2]:
        assert (row["judge_score"] >= judge.threshold) == row["hit"]  # type: ignore[attr-defined]


def test_without_being_asked_the_rows_and_configuration_are_as_before() -> None:
    judge = build_judge("lexical_trained")
    plain = citation_recall(judge)
    asked = citation_recall(judge, judge_scores=True)
    rows, scored = plain(record(TEXT), GOLD).rows, asked(record(TEXT), GOLD).rows
    assert all("judge_score" not in row for row in rows)
    assert [{k: v for k, v in row.items() if k != "judge_score"} for row in scored] == list(rows)
    assert "judge_scores" not in plain.config()
    assert asked.config()["judge_scores"] is True
    # A worker process rebuilds the scorer from its configuration: the flag goes with it.
    assert build_scorer(asked.config()).judge_scores  # type: ignore[attr-defined]
    assert not build_scorer(plain.config()).judge_scores  # type: ignore[attr-defined]


def test_with_judge_scores_sets_recall_whose_judge_has_a_score_only() -> None:
    trained = citation_recall("lexical_trained")
    counting = citation_recall({"name": "lexical"})  # a judge without a score method
    precision = citation_precision("lexical_trained")
    chosen = with_judge_scores([trained, counting, precision])
    assert isinstance(chosen[0], CitationRecall)
    assert chosen[0].judge_scores
    assert chosen[0].judge is trained.judge
    assert chosen[1] is counting
    assert chosen[2] is precision
    # Precision's verdict combines several judge calls: its rows carry no score.
    assert all("judge_score" not in row for row in precision(record(TEXT), GOLD).rows)


@pytest.mark.parametrize("alce_compat", [False, True])
def test_the_score_agrees_with_the_verdict_on_many_statements(alce_compat: bool) -> None:
    """``score >= threshold`` exactly when the statement is a hit, on statements citing one
    to three passages (the lexical judge's shortcut decides the verdict without the score)."""
    judge = build_judge("lexical_trained")
    scorer = citation_recall(judge, alce_compat=alce_compat, judge_scores=True)
    rng = random.Random(5)
    pages = list(PAGES)
    words = [w for _, text in PAGES.values() for w in text.rstrip(".").lower().split()]
    sentences = [s.strip() for _, text in PAGES.values() for s in text.split(".") if s.strip()]
    judged, hits = 0, 0
    for _ in range(150):
        claims = []
        for _ in range(rng.randint(1, 3)):
            claim = (
                rng.choice(sentences)
                if rng.random() < 0.4
                else " ".join(rng.choice(words) for _ in range(rng.randint(3, 9))).capitalize()
            )
            numbers = rng.sample(range(1, len(pages) + 1), rng.randint(1, 3))
            cited = "".join(f"[{n}]" for n in numbers)
            claims.append(f"{claim} {cited}.")
        for row in scorer(record(" ".join(claims), pages), GOLD).rows:
            if row["reason"] in ("supported", "unsupported"):
                judged, hits = judged + 1, hits + row["hit"]
                assert (row["judge_score"] >= judge.threshold) == row["hit"], row  # type: ignore[attr-defined]
    assert judged > 200
    assert 0 < hits < judged


def test_an_nli_judges_score_is_read_from_its_verdicts_memo(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Scored concurrently (the NLI judge defers, its questions batched), each judged
    statement's score is the one its verdict thresholded: no question is asked twice."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from citelab.evals import NLIJudge, score_answers

    from ..judges._tiny_nli import build_true_t5, tiny_answers

    folder = build_true_t5(tmp_path_factory.mktemp("t5"))
    data = tiny_answers()
    asked: dict[str, int] = {}
    tables = {}
    for name in ("verdicts", "scores"):
        judge = NLIJudge(str(folder), threshold=0.5, batch_size=4)
        runtime = judge._loaded()
        run = runtime.run

        def counting(pairs: Any, run: Any = run, name: str = name) -> Any:
            asked[name] = asked.get(name, 0) + len(pairs)
            return run(pairs)

        runtime.run = counting  # type: ignore[method-assign]
        chosen = [citation_recall(judge, alce_compat=True, judge_scores=name == "scores")]
        tables[name] = score_answers(data, "alce", scorers=chosen).to_pandas("statement")
    assert asked["scores"] == asked["verdicts"]  # every question once, for both
    rows = tables["scores"]
    judged = rows[rows["reason"].isin(["supported", "unsupported"])]
    assert len(judged) >= 5
    assert ((judged["judge_score"] >= 0.5) == judged["hit"].astype(bool)).all()
    assert tables["verdicts"].equals(rows.drop(columns="judge_score"))
