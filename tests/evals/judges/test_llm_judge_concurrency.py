"""The LLM judge asks concurrently, bounded and cached, in citelab score, eval and rescore.

The judge is citelab's offline yes/no judge model served over real HTTP (``serve_in_thread``)
and slowed down, so several questions are in flight at once; the real ``openai`` SDK asks it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from citelab import ModelError
from citelab.evals import (
    DEFAULT_JUDGE,
    LLMJudge,
    load_suite,
    rescore,
    run,
    score_answers,
)
from citelab.evals.judges import JudgeModel, VerdictPending
from citelab.models import (
    RunningServer,
    serve_in_thread,
)

from .._judge_models import YesNoModel


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[YesNoModel, RunningServer]]:
    # The yes/no judge model (the default offline judge inside), 50 ms per call.
    model = YesNoModel(pause=0.05, inner=JudgeModel())
    with serve_in_thread(model) as server:
        yield model, server


def _answers(count: int) -> dict[str, object]:
    docs = [
        {"title": "Fees", "text": "Tuition fees are due in May. Late fees cost 50 euros."},
        {"title": "Library", "text": "The library opens at 8 am on weekdays."},
    ]
    outputs = [
        f"Tuition fees are due in May [1]. The library opens at {n} am [2][1]. Late fees cost "
        f"{40 + n} euros [1]."
        for n in range(count)
    ]
    return {"data": [{"question": "Q?", "docs": docs, "output": out} for out in outputs]}


def test_score_answers_asks_concurrently_within_the_bound_and_matches_the_judge_in_process(
    served: tuple[YesNoModel, RunningServer],
) -> None:
    model, server = served
    model.reset()
    judge = LLMJudge("judge", base_url=server.base_url, concurrency=4)
    result = score_answers(_answers(12), "alce", judge=judge)
    assert 2 <= model.peak <= 4
    # The served judge model is the default offline judge: the verdicts, hence the figures,
    # agree.
    expected = score_answers(_answers(12), "alce", judge=DEFAULT_JUDGE)
    assert result.summary()["value"].tolist() == expected.summary()["value"].tolist()
    assert result.to_pandas("statement")["hit"].tolist() == (
        expected.to_pandas("statement")["hit"].tolist()
    )
    asked = model.calls
    again = score_answers(_answers(12), "alce", judge=judge)
    assert model.calls == asked  # every verdict is remembered
    assert again.summary()["value"].tolist() == result.summary()["value"].tolist()


def test_a_reply_that_is_no_verdict_fails_the_scoring_and_writes_nothing(
    served: tuple[YesNoModel, RunningServer], tmp_path: Path
) -> None:
    model, server = served
    model.reset()
    model.refuse = "euros"
    try:
        judge = LLMJudge("judge", base_url=server.base_url, concurrency=4)
        with pytest.raises(ModelError, match=r"expected 'yes' or 'no', got 'Maybe\.'"):
            score_answers(_answers(6), "alce", judge=judge, out_dir=tmp_path / "report")
    finally:
        model.refuse = None
    assert not (tmp_path / "report").exists()
    assert model.active == 0


def test_a_verdict_pending_passes_through_a_scorer_that_catches_errors() -> None:
    assert not issubclass(VerdictPending, Exception)  # ``except Exception`` cannot swallow it


def test_a_lone_question_from_inside_an_event_loop_is_answered(
    served: tuple[YesNoModel, RunningServer],
) -> None:
    _, server = served
    judge = LLMJudge("judge", base_url=server.base_url)

    async def in_a_notebook() -> bool:
        return judge.supports("the library opens at 8", "The library opens at 8 am.")

    assert asyncio.run(in_a_notebook()) is True


SUITE = """
name = "judged"
datasets = ["university"]
models = ["extractive"]
concurrency = 4
scorers = ["citation_recall", "citation_precision",
           {{ name = "citation_recall", alce_compat = true }}]
judge = {judge}
"""


def _suite(folder: Path, judge: str) -> Path:
    path = folder / "judged.toml"
    path.write_text(SUITE.format(judge=judge), encoding="utf-8")
    return path


@pytest.mark.slow  # several processes or a server: not in make test-quick
def test_eval_and_rescore_ask_the_llm_judge_concurrently_and_cached(
    served: tuple[YesNoModel, RunningServer], tmp_path: Path
) -> None:
    model, server = served
    offline = run(
        _suite(tmp_path, f'"{DEFAULT_JUDGE}"'), out_dir=tmp_path / "offline", progress=False
    )
    cache = tmp_path / "verdicts"
    llm = (
        f'{{ name = "llm", model = "judge", base_url = "{server.base_url}", '
        f'concurrency = 3, cache_dir = "{cache.as_posix()}" }}'
    )
    suite = _suite(tmp_path, llm)
    model.reset()
    judged = run(suite, out_dir=tmp_path / "llm", progress=False)
    assert 2 <= model.peak <= 3
    asked = model.calls
    # One judge for the three scorers: the question recall and precision share is asked once.
    assert asked == len(list(cache.glob("judge/*/*.json")))
    assert judged.summary()["value"].tolist() == offline.summary()["value"].tolist()

    model.reset()
    again = rescore(tmp_path / "llm", load_suite(suite))
    assert model.calls == 0  # read from the judge's cache
    assert again.summary()["value"].tolist() == judged.summary()["value"].tolist()

    fresh = _suite(tmp_path, llm.replace("concurrency = 3", "concurrency = 2").replace(
        cache.as_posix(), (tmp_path / "other").as_posix()))  # fmt: skip
    model.reset()
    rescored = rescore(tmp_path / "llm", load_suite(fresh))
    assert model.calls == asked
    assert 2 <= model.peak <= 2
    assert rescored.summary()["value"].tolist() == judged.summary()["value"].tolist()
