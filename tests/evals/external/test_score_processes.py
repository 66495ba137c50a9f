"""``score_answers`` in several worker processes (the ``processes`` executor): the same tables
as one process, errors as raised here."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from citelab import ConfigError, InvalidInput
from citelab.cli import main
from citelab.evals import EvalResult, LexicalJudge, LLMJudge, build_judge, execution, score_answers
from citelab.evals.execution import cpus

_WORDS = [f"w{n}" for n in range(40)]
_MARKS = ["[1]", "[2]", "[1][2]", "[2][1][3]", "[1][1]", "[0]", "[9]", "", "[1][2][3][4]"]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 7))).capitalize()


def _data(count: int, seed: int = 3) -> dict[str, Any]:
    """ALCE items with the cases the scorers tell apart: support, repeats, ``[0]``, out of
    range, uncited sentences, more than three citations, ``<|im_end|>``, empty outputs."""
    rng = random.Random(seed)
    data = []
    for index in range(count):
        docs = [{"title": f"D{n}", "text": _sentence(rng) + ". " + _sentence(rng) + "."}
                for n in range(rng.randint(1, 4))]  # fmt: skip
        parts = []
        for _ in range(rng.randint(0, 3)):
            body = docs[0]["text"].split(".")[0] if rng.random() < 0.4 else _sentence(rng)
            parts.append(f"{body} {rng.choice(_MARKS)}.")
        output = " ".join(parts) + ("<|im_end|>" if rng.random() < 0.1 else "")
        data.append({"id": str(index), "question": _sentence(rng) + "?", "docs": docs,
                     "output": output})  # fmt: skip
    return {"data": data}


def _tables(result: EvalResult) -> list[pd.DataFrame]:
    return [result.scores, result.turns, *result.details.values(), result.summary()]


def _assert_same(one: EvalResult, other: EvalResult) -> None:
    for mine, theirs in zip(_tables(one), _tables(other), strict=True):
        pd.testing.assert_frame_equal(mine, theirs)


@pytest.mark.parametrize("processes", [2, 3])
def test_several_processes_give_the_tables_of_one(processes: int) -> None:
    data = _data(90)
    scorers: list[Any] = [
        {"name": "citation_recall", "alce_compat": True},
        {"name": "citation_precision", "alce_compat": True},
        "citation_recall",
        "citation_precision",
    ]
    one = score_answers(data, "alce", scorers=scorers, processes=1)
    several = score_answers(data, "alce", scorers=scorers, processes=processes)
    _assert_same(one, several)
    assert len(several.turns) == 90
    assert several.scores["value"].notna().any()


def test_worker_processes_record_the_judges_scores_when_the_run_has_labels() -> None:
    from citelab.evals import label_pairs
    from citelab.evals.labels import LabelledPair, LabelSet

    data = _data(90)
    plain = score_answers(data, "alce", processes=1)
    # Pairs of statements the ALCE-compatible recall judged, cut by its splitter.
    statements = plain.to_pandas("statement")
    judged = statements[
        statements["reason"].isin(["supported", "unsupported"])
        & (statements["metric"] == "citation_recall_alce")
    ]
    kept = {
        (str(row.case_id), int(row.statement)): {int(n) for n in str(row.citations).split()}
        for row in judged.itertuples()
    }
    cut = label_pairs(plain, statements=plain.scorers[0].statements).items  # type: ignore[attr-defined]
    pairs = [
        i for i in cut
        if set(i.origin["citations"]) <= kept.get((i.origin["case"], i.origin["statement"]), set())
    ][:30]  # fmt: skip
    labels = LabelSet.of(
        [
            LabelledPair(id=i.id, claim=i.claim, evidence=[p.text for p in i.passages],
                         label=n % 3 == 0)
            for n, i in enumerate(pairs)
        ]
    )  # fmt: skip
    one = score_answers(data, "alce", processes=1, labels=labels)
    several = score_answers(data, "alce", processes=2, labels=labels)
    _assert_same(one, several)
    scored = several.to_pandas("statement")
    assert scored[scored["reason"].isin(["supported", "unsupported"])]["judge_score"].notna().all()
    assert "judge_score" not in statements


def _chosen(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The executors score_answers scores with, as it builds them."""
    chosen: list[str] = []
    real = execution.scoring_executor

    def spy(*args: Any) -> Any:
        executor = real(*args)
        chosen.append(executor.name)
        return executor

    monkeypatch.setattr("citelab.evals.external._score.scoring_executor", spy)
    return chosen


def test_many_answers_take_several_processes_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_data(1200)), encoding="utf-8")
    chosen = _chosen(monkeypatch)
    several = score_answers(path, "alce")
    assert chosen == (["processes"] if cpus() > 1 else ["local"])
    _assert_same(several, score_answers(path, "alce", processes=1))
    assert chosen[-1] == "local"
    score_answers({"data": _data(1200)["data"][:999]}, "alce")  # few: one process
    assert chosen[-1] == "local"


class Counting:
    """A user's judge that keeps state: scoring it in other processes would lose its calls."""

    name = "counting"

    def __init__(self) -> None:
        self.inner = LexicalJudge()
        self.seen: set[str] = set()

    def supports(self, statement: str, evidence: str) -> bool:
        self.seen.add(statement)
        return self.inner.supports(statement, evidence)

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def test_a_users_judge_stays_in_this_process_unless_asked() -> None:
    data = _data(1200)
    judge = Counting()
    score_answers(data, "alce", judge=judge)
    alone = Counting()
    score_answers({"data": data["data"][-40:]}, "alce", judge=alone)
    assert alone.seen
    assert alone.seen <= judge.seen  # the last answers were judged in this process too


def test_an_error_in_another_process_is_raised_here_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    data = _data(40)
    data["data"][-1]["output"] = "Poison words here [1]."  # the last slice's answer
    judge = build_judge({"name": "tests.evals.external.test_score_processes:poisoned"})
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match=r"the judge broke on 'Poison words here\.'"):
        score_answers(data, "alce", judge=judge, processes=2, out_dir=out)
    assert list(tmp_path.iterdir()) == []


def poisoned(statement: str, evidence: str) -> bool:
    if statement.startswith("Poison"):
        raise ConfigError(f"the judge broke on {statement!r}")
    return LexicalJudge().supports(statement, evidence)


def test_bad_process_counts_are_refused() -> None:
    data = _data(4)
    with pytest.raises(ConfigError, match="processes must be at least 1, got 0"):
        score_answers(data, "alce", processes=0)
    judge = LLMJudge("judge", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match=r"a model judge \(llm\) scores in one process"):
        score_answers(data, "alce", judge=judge, processes=2)


def test_citelab_score_takes_processes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_data(30)), encoding="utf-8")
    assert main(["score", str(path), "--json", "--processes", "2"]) == 0
    several = json.loads(capsys.readouterr().out)
    assert main(["score", str(path), "--json", "--processes", "1"]) == 0
    assert json.loads(capsys.readouterr().out) == several
    assert main(["score", str(path), "--processes", "0"]) == 2
    assert "processes must be at least 1" in capsys.readouterr().err


def test_bad_input_is_named_before_any_process_starts(tmp_path: Path) -> None:
    data = _data(1200)
    data["data"][700]["output"] = 7
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"results\.json: data\[700\]: field output"):
        score_answers(path, "alce")
