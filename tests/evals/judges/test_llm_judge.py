"""The LLM judge over real HTTP: citelab serve-model serving a tiny yes/no model, the real SDK."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from citelab import ModelError
from citelab.evals import GoldTurn, LLMJudge, build_judge
from citelab.evals.judges import DEFAULT_JUDGE_PROMPT
from citelab.evals.scorers import citation_recall
from citelab.models import (
    RunningServer,
    serve_in_thread,
)

from .._builders import record
from .._judge_models import YesNoModel


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[YesNoModel, RunningServer]]:
    model = YesNoModel()
    with serve_in_thread(model) as server:
        yield model, server


def test_the_llm_judge_asks_the_model_and_reads_yes_or_no(
    served: tuple[YesNoModel, RunningServer],
) -> None:
    model, server = served
    model.reply = None
    judge = LLMJudge("judge", base_url=server.base_url)
    assert judge.supports("fees are due in may", "Title: Fees\nFees are due in May.")
    assert not judge.supports("fees are due in june", "Title: Fees\nFees are due in May.")


def test_verdicts_are_cached_in_memory_and_on_disk(
    served: tuple[YesNoModel, RunningServer], tmp_path: Path
) -> None:
    model, server = served
    model.reply = None
    judge = LLMJudge("judge", base_url=server.base_url, cache_dir=str(tmp_path))
    before = model.calls
    assert judge.supports("rooms open at 9", "Rooms open at 9.")
    assert judge.supports("rooms open at 9", "Rooms open at 9.")
    assert model.calls == before + 1
    rebuilt = build_judge(judge.config())
    assert rebuilt.supports("rooms open at 9", "Rooms open at 9.")
    assert model.calls == before + 1  # a re-score reads the disk cache
    assert list(tmp_path.glob("judge/*/*.json"))


def test_the_prompt_is_part_of_the_configuration(served: tuple[YesNoModel, RunningServer]) -> None:
    _, server = served
    scorer = citation_recall(judge={"name": "llm", "model": "judge", "base_url": server.base_url})
    assert scorer.config()["judge"]["prompt"] == DEFAULT_JUDGE_PROMPT
    turn = record("Tuition fees are due in May [1]. Late payment costs a fee of 50 euros [2].")
    assert [row["hit"] for row in scorer(turn, GoldTurn(question="q")).rows] == [True, False]


def test_an_unexpected_reply_is_a_model_error(served: tuple[YesNoModel, RunningServer]) -> None:
    model, server = served
    model.reply = "Maybe."
    with pytest.raises(ModelError, match=r"expected 'yes' or 'no', got 'Maybe\.'"):
        LLMJudge("judge", base_url=server.base_url).supports("a claim", "some evidence")
    model.reply = None


def test_an_unreachable_endpoint_is_a_model_error() -> None:
    judge = LLMJudge("judge", base_url="http://127.0.0.1:9/v1", timeout=2.0)
    with pytest.raises(ModelError, match="judge llm"):
        judge.supports("a claim", "some evidence")


def test_judges_sharing_a_cache_folder_store_one_verdict_at_once(tmp_path: Path) -> None:
    # Ray workers (processes) and threads may store the same verdict in one cache at once;
    # with one shared temporary file name, one's rename found the file already moved.
    errors: list[BaseException] = []

    def store() -> None:
        judge = LLMJudge("judge", base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path))
        key, request = judge._question("The fee is 50 euros.", "Fees: 50 euros.")
        try:
            for _ in range(300):
                judge._store(key, request, True)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=store) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    stored = list(tmp_path.glob("judge/*/*"))
    assert [path.suffix for path in stored] == [".json"]  # no temporary file left behind
    judge = LLMJudge("judge", base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path))
    assert judge.supports("The fee is 50 euros.", "Fees: 50 euros.") is True  # from the cache
