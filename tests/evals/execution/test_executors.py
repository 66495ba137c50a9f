"""The execution seam: local and worker processes score the same rows, a worker's error is
raised here (a lost worker as WorkerLost), a model judge stays in one process, workers are
never forked from this process, and executors are chosen by name. (Ray: test_ray.py.)"""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any, cast

import pandas as pd
import pytest

from citelab import CitelabError, ConfigError, MissingDependency, WorkerLost
from citelab.cli import main
from citelab.evals import (
    GoldTurn,
    LexicalJudge,
    LLMJudge,
    Score,
    build_judge,
    build_scorers,
    load_suite,
    plan_run,
)
from citelab.evals import run as run_suite
from citelab.evals.execution import (
    EXECUTORS,
    LocalExecutor,
    ProcessExecutor,
    ScoringJob,
    _processes,
    get_executor,
    scoring_executor,
    start_method,
)
from citelab.evals.external import to_answers
from citelab.evals.records import TurnRecord, read_records
from citelab.evals.results import result_of

from ..external.test_score_processes import _data
from ..runner.test_alce_pipeline import ITEMS as ALCE_ITEMS
from ..runner.test_alce_pipeline import _suite as alce_suite

_SCORERS: list[str | dict[str, Any]] = [
    {"name": "citation_recall", "alce_compat": True},
    {"name": "citation_precision", "alce_compat": True},
    "citation_recall",
    "citation_precision",
]


def _job(count: int = 60, judge: Any = "lexical") -> tuple[ScoringJob, list[Any]]:
    """A scoring job over ``count`` generated ALCE answers (as score_answers builds them)."""
    from citelab.evals.external._score import _records, _with_judge

    items = to_answers(_data(count), "alce")
    records, cases = _records(items, "generated", variant="answers", model="alce")
    scorers = build_scorers(_with_judge(_SCORERS, "alce", False, build_judge(judge)))
    return ScoringJob(cases, scorers), records


def _frames(job: ScoringJob, records: list[Any], executor: Any) -> list[pd.DataFrame]:
    result = result_of(executor.score(job, records), records, job.cases, job.scorers)
    return [result.scores, result.turns, *result.details.values()]


@pytest.fixture
def processes() -> Any:
    executor = ProcessExecutor(2)
    yield executor
    executor.close()


def test_worker_processes_score_the_rows_this_process_scores(processes: ProcessExecutor) -> None:
    job, records = _job()
    here = _frames(job, records, LocalExecutor())
    for mine, theirs in zip(here, _frames(job, records, processes), strict=True):
        pd.testing.assert_frame_equal(theirs, mine)
    # Fewer records than workers, and none: still the records' rows, in order.
    for few in (records[:1], []):
        scored = processes.score(job, few)
        assert scored.keys == [record.key for record in few]


def test_this_process_scores_the_chunks_no_worker_holds(
    processes: ProcessExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 30 records in chunks of 2: the two workers hold four chunks at a time, this process
    # scores from the back meanwhile; the rows come back in the records' order.
    monkeypatch.setattr(_processes, "CHUNK", 2)
    here_scored: list[str] = []
    real = _processes.score_rows

    def counted(records: Any, *args: Any) -> Any:
        here_scored.extend(record.key for record in records)
        return real(records, *args)

    monkeypatch.setattr(_processes, "score_rows", counted)
    job, records = _job(30)
    here = _frames(job, records, LocalExecutor())
    for mine, theirs in zip(here, _frames(job, records, processes), strict=True):
        pd.testing.assert_frame_equal(theirs, mine)
    assert here_scored  # this process took part ...
    assert len(here_scored) < len(records)  # ... and so did the workers
    assert here_scored[:2] == [record.key for record in records[-2:]]  # from the back


def test_workers_start_from_a_server_never_forked_from_this_process(
    processes: ProcessExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert start_method() in {"forkserver", "spawn"}
    assert processes.config()["start_method"] == start_method()
    # A value set here at run time: a forked worker would inherit it, a fresh one does not.
    monkeypatch.setattr(__import__(__name__, fromlist=["MARK"]), "MARK", "set in the caller")
    job, records = _job(4, judge={"name": f"{__name__}:tell_mark"})
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # a live thread in this process meanwhile
    other.start()
    try:
        with pytest.raises(ConfigError, match="mark in the worker: unset"):
            processes.score(job, records)
    finally:
        stop.set()
        other.join()


MARK = "unset"


def tell_mark(statement: str, evidence: str) -> bool:
    raise ConfigError(f"mark in the worker: {MARK}")


def test_a_workers_error_is_raised_here_with_its_message(processes: ProcessExecutor) -> None:
    job, records = _job(8, judge={"name": f"{__name__}:needs_a_package"})
    # MissingDependency cannot be rebuilt from its message alone: it comes back as the
    # family's root, with the type and the message.
    with pytest.raises(CitelabError, match="MissingDependency: The magic judge needs"):
        processes.score(job, records)


def needs_a_package(statement: str, evidence: str) -> bool:
    raise MissingDependency("magic", "The magic judge")


def test_a_worker_that_dies_is_a_worker_lost(processes: ProcessExecutor) -> None:
    job, records = _job(8, judge={"name": f"{__name__}:dies"})
    with pytest.raises(WorkerLost, match="a scoring process died"):
        processes.score(job, records)


def dies(statement: str, evidence: str) -> bool:
    os.kill(os.getpid(), signal.SIGKILL)
    return True


def test_a_scorer_known_only_here_is_refused_clearly(processes: ProcessExecutor) -> None:
    job, records = _job(4)
    config = {**job.scorers[0].config(), "name": "registered_in_a_notebook"}
    job = ScoringJob(job.cases, [_Renamed(job.scorers[0], config)])
    with pytest.raises(ConfigError, match="cannot rebuild the scorers from their configurations"):
        processes.score(job, records)


class _Renamed:
    """A scorer whose configuration names a scorer the workers do not know."""

    def __init__(self, inner: Any, config: dict[str, Any]) -> None:
        self.inner, self._config = inner, config
        self.level, self.metric, self.aggregate = inner.level, inner.metric, inner.aggregate
        self.name, self.higher_is_better = inner.name, inner.higher_is_better

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        return cast(Score, self.inner(record, gold))

    def config(self) -> dict[str, Any]:
        return self._config


def test_a_model_judge_is_refused_by_worker_processes(processes: ProcessExecutor) -> None:
    job, records = _job(4, judge=LLMJudge("judge", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(ConfigError, match=r"a model judge \(llm\) scores in one process"):
        processes.score(job, records)
    with pytest.raises(ConfigError, match=r"a model judge \(llm\) scores in one process"):
        scoring_executor(job, len(records), 2)
    assert scoring_executor(job, 5000, None).name == "local"  # by default: this process


def test_a_run_with_a_model_judge_is_refused_before_any_case_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "judged.toml"
    suite.write_text(
        'name = "judged"\ndatasets = ["university"]\nmodels = ["extractive"]\n'
        'scorers = ["citation_recall"]\n'
        'judge = { name = "llm", model = "judge", base_url = "http://127.0.0.1:9/v1" }\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    code = main(["eval", "--suite", str(suite), "--executor", "processes", "--out", str(out)])
    assert code == 2
    assert "a model judge (llm) scores in one process" in capsys.readouterr().err
    assert not (out / "records.jsonl").exists() or not (out / "records.jsonl").read_text()


def test_scoring_executor_chooses_processes_for_many_answers_of_our_own_scorers() -> None:
    job, _ = _job(4)
    assert scoring_executor(job, 999, None).name == "local"
    chosen = scoring_executor(job, 2000, None)
    assert chosen.name == (
        "processes" if os.cpu_count() and len(os.sched_getaffinity(0)) > 1 else "local"
    )
    assert scoring_executor(job, 2000, 1).name == "local"
    assert scoring_executor(job, 3, 8).config() == {
        "name": "processes",
        "workers": 2,  # never more processes than records: two beside this one
        "start_method": start_method(),
    }
    with pytest.raises(ConfigError, match="processes must be at least 1, got 0"):
        scoring_executor(job, 10, 0)
    theirs = ScoringJob(
        job.cases, build_scorers([{"name": "citation_recall", "judge": LexicalJudge()}])
    )
    assert scoring_executor(theirs, 2000, None).name == (chosen.name)
    users = ScoringJob(job.cases, [_Renamed(job.scorers[0], job.scorers[0].config())])
    assert scoring_executor(users, 2000, None).name == "local"  # a user's scorer stays here


def test_executors_by_name() -> None:
    assert sorted(EXECUTORS) == ["local", "processes", "ray"]
    assert isinstance(get_executor("local"), LocalExecutor)
    executor = get_executor("processes", workers=3)
    assert executor.config()["workers"] == 3
    mine = LocalExecutor()
    assert get_executor(mine) is mine
    with pytest.raises(ConfigError, match="unknown executor 'cloud'; known executors: local"):
        get_executor("cloud")
    with pytest.raises(ConfigError, match="workers must be at least 1, got 0"):
        get_executor("processes", workers=0)
    with pytest.raises(ConfigError, match=r"executor 'processes': bad options \['address'\]"):
        get_executor("processes", address="head:6379")
    with pytest.raises(ConfigError, match=r"executor 'local': bad options \['workers'\]"):
        get_executor("local", workers=2)


@pytest.mark.slow  # several processes or a server: not in make test-quick
def test_a_run_scored_in_worker_processes_writes_what_local_writes(tmp_path: Path) -> None:
    local, processes = tmp_path / "local", tmp_path / "processes"
    expected = run_suite("default", out_dir=local, progress=False, limit=2)
    options = ["--limit", "2", "--executor", "processes", "--workers", "2", "--quiet"]
    code = main(["eval", *options, "--out", str(processes)])
    assert code == 0
    for name in ("summary.csv", "scores.csv", "citations.csv", "statements.csv"):
        mine, theirs = pd.read_csv(local / name), pd.read_csv(processes / name)
        if "seconds" in mine:
            mine, theirs = mine.drop(columns="seconds"), theirs.drop(columns="seconds")
        pd.testing.assert_frame_equal(theirs, mine, obj=name)
    log = json.loads((processes / "run.json").read_text(encoding="utf-8"))
    assert log["executor"] == {"name": "processes", "workers": 2, "start_method": start_method()}
    # Rescoring in worker processes: the same tables again.
    from citelab.evals import rescore

    again = rescore(processes, load_suite("default"), executor="processes", workers=2)
    pd.testing.assert_frame_equal(again.summary(), expected.summary())
    plan = plan_run(load_suite("default"), limit=2)
    assert set(read_records(processes / "records.jsonl")) == {unit.key for unit in plan.units}


def test_an_alce_suite_scored_in_worker_processes_writes_what_local_writes(
    tmp_path: Path,
) -> None:
    """Worker processes score; the answers (ALCE's prompt and the pipeline on each item's own
    documents) are made in this process, as a local run makes them."""
    suite = alce_suite(tmp_path, ALCE_ITEMS)
    local, processes = tmp_path / "local", tmp_path / "processes"
    run_suite(suite, out_dir=local, progress=False)
    run_suite(suite, out_dir=processes, progress=False, executor="processes", workers=2)
    for name in ("summary.csv", "scores.csv", "citations.csv", "statements.csv", "cases.csv"):
        mine, theirs = pd.read_csv(local / name), pd.read_csv(processes / name)
        if "seconds" in mine:
            mine, theirs = mine.drop(columns="seconds"), theirs.drop(columns="seconds")
        pd.testing.assert_frame_equal(theirs, mine, obj=name)
    assert set(pd.read_csv(local / "scores.csv")["variant"]) == {"baseline", "alce_prompt"}
    [written] = (local / "alce").glob("*.json")
    assert (processes / "alce" / written.name).read_text() == written.read_text()
    log = json.loads((processes / "run.json").read_text(encoding="utf-8"))
    assert log["executor"]["name"] == "processes"
    assert log["model_cache"]["extractive (alce_prompt)"] == {"hits": 0, "misses": 3}
