"""The Ray executor on a real local cluster (2 CPUs, loopback, no dashboard, auth off, Ray's
files under a temp dir): the same results as local, resume, the shared model-call cache, and
a worker killed mid-sweep losing nothing. Kept few and small: each starts real processes."""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from citelab import MissingDependency
from citelab.cli import main
from citelab.evals import LLMJudge, load_suite, plan_run, rescore, run
from citelab.evals.execution import LocalExecutor, PortableScoring, ScoringJob, get_executor
from citelab.evals.execution._ray import _batch_starts
from citelab.evals.judges import JudgeModel
from citelab.evals.records import read_records
from citelab.evals.results import result_of
from citelab.models import ExtractiveModel, RunningServer, build_app, serve_in_thread
from citelab.models.serve._server import serve_app_in_thread

from .._judge_models import YesNoModel
from ..runner.test_alce_pipeline import ITEMS as ALCE_ITEMS
from ..runner.test_alce_pipeline import _suite as alce_suite

pytestmark = pytest.mark.slow

_TIMING = ("seconds",)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="the Ray executor needs citelab[ray]")
    patch = pytest.MonkeyPatch()
    patch.setenv("RAY_AUTH_MODE", "disabled")
    patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    # A short folder of its own: Ray's socket paths under it must stay within AF_UNIX's 107
    # bytes, which pytest's own temp folders (deeper still under xdist) can exceed.
    temp = Path(tempfile.mkdtemp(prefix="citelab-ray-"))
    try:
        address = os.environ.get("CITELAB_TEST_RAY_ADDRESS")
        if address:  # a running 2-CPU cluster (ray start --head), e.g. on a busy machine
            ray.init(address=address, logging_level="WARNING")
        else:
            _start_cluster(ray, temp)
        yield ray
    finally:
        ray.shutdown()
        patch.undo()
        # Ray stops its processes without waiting for every one: collect its Popen objects
        # now, where their "still running" ResourceWarning is expected, not in a later test.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
        shutil.rmtree(temp, ignore_errors=True)


def _start_cluster(ray: Any, temp: Path) -> None:
    """Two CPUs on loopback, no dashboard, Ray's files under ``temp``. Ray gives its node
    agent a fixed time to start; on a heavily loaded machine one retry rides that out."""
    # A failed start's processes are gone or going: their Popen objects' "still running"
    # warning belongs here (whenever Ray lets go of them during the retry), not to a test.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        for attempt in (1, 2):
            try:
                ray.init(
                    num_cpus=2,
                    include_dashboard=False,
                    _temp_dir=str(temp / f"try{attempt}"),
                    _node_ip_address="127.0.0.1",
                    logging_level="WARNING",
                )
            except Exception:
                ray.shutdown()
                gc.collect()
                if attempt == 2:
                    raise
            else:
                if attempt == 2:
                    gc.collect()
                return


def _records(out: Path) -> list[dict[str, Any]]:
    """records.jsonl by key, timing fields dropped."""
    rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    for row in rows:
        for turn in row["turns"]:
            turn.pop("seconds", None)
    return sorted(rows, key=lambda row: row["key"])


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    """Every CSV table the run wrote, timing columns dropped."""
    tables = {}
    for path in sorted(out.glob("*.csv")):
        frame = pd.read_csv(path)
        tables[path.name] = frame.drop(columns=[c for c in _TIMING if c in frame])
    return tables


def _differences(mine: Any, theirs: Any, path: str = "") -> list[str]:
    """Where two records differ, field by field (a failure names the fields, not the record)."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        keys = sorted(set(mine) | set(theirs))
        return [d for k in keys for d in _differences(mine.get(k), theirs.get(k), f"{path}.{k}")]
    if isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        pairs = enumerate(zip(mine, theirs, strict=True))
        return [d for i, (a, b) in pairs for d in _differences(a, b, f"{path}[{i}]")]
    return [] if mine == theirs else [f"{path}: {mine!r:.200} != {theirs!r:.200}"]


def _assert_same_outputs(local: Path, ray: Path) -> None:
    mine, theirs = _records(local), _records(ray)
    assert [row["key"] for row in theirs] == [row["key"] for row in mine]
    for here, there in zip(mine, theirs, strict=True):
        assert there == here, (here["key"], _differences(here, there))
    local_tables, ray_tables = _tables(local), _tables(ray)
    assert sorted(ray_tables) == sorted(local_tables)
    assert local_tables, "the run wrote no tables"
    for name, frame in local_tables.items():
        pd.testing.assert_frame_equal(ray_tables[name], frame, obj=name)
    local_run = json.loads((local / "run.json").read_text())
    ray_run = json.loads((ray / "run.json").read_text())
    assert ray_run["findings"] == local_run["findings"]


LIMIT = 3


def test_the_bundled_suite_on_ray_writes_what_local_writes(
    cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every model, variant, dataset and gate of the suite, on at most LIMIT cases a dataset:
    # what is under test is Ray's part (the actors, the driver's writes, resume, rescore).
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    expected = run("default", out_dir=local, progress=False, limit=LIMIT)
    code = main(["eval", "--suite", "default", "--executor", "ray", "--out", str(on_ray),
                 "--limit", str(LIMIT)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    _assert_same_outputs(local, on_ray)
    log = json.loads((on_ray / "run.json").read_text())
    assert log["executor"]["name"] == "ray"
    assert log["executor"]["workers"] == 2
    units = len(_records(local))
    assert (log["units"]["total"], log["units"]["ran"], log["units"]["resumed"]) == (
        units,
        units,
        0,
    )

    again = run("default", out_dir=on_ray, progress=False, executor="ray", limit=LIMIT)
    assert json.loads((on_ray / "run.json").read_text())["units"]["ran"] == 0
    pd.testing.assert_frame_equal(again.summary(), expected.summary())

    rescored = rescore(on_ray, load_suite("default"), executor="ray", workers=1)
    pd.testing.assert_frame_equal(rescored.summary(), expected.summary())
    pd.testing.assert_frame_equal(rescored.to_pandas("citation"), expected.to_pandas("citation"))


CASES = [
    {
        "id": f"q{index}",
        "agent": agent,
        "turns": [{"question": question}],
    }
    for index, (agent, question) in enumerate(
        [
            ("university", "How much is the semester fee?"),
            ("university", "When do applications for the Robotics MSc close?"),
            ("helpcentre", "How do I reset my password?"),
            ("university", "Who won the 2022 football cup?"),
        ]
        * 6
    )
]


class KillOnce:
    """Counts chat-completion requests; at the ``at``-th, kills the Ray worker process that
    sent it (as the OOM killer or a lost node would), once. The process is found from the
    request's client socket, so it is one of this run's workers and holds a batch: never a
    lingering actor of an earlier test."""

    def __init__(self, app: ASGIApp, at: int) -> None:
        self.app = app
        self.at = at
        self.requests = 0
        self.killed: int | None = None
        self.failure: str | None = None
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/chat/completions"):
            with self._lock:
                self.requests += 1
                if self.requests == self.at and self.killed is None:
                    try:
                        self.killed = _kill_the_sender(scope["client"][1])
                    except AssertionError as error:
                        self.failure = str(error)
        await self.app(scope, receive, send)


def _socket_inode(port: int) -> str:
    """The inode of the loopback TCP socket whose local port is ``port`` (the client's end)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port:
                    return fields[9]
    raise AssertionError(f"no socket with local port {port} in /proc/net/tcp")


def _fd_links(proc: Path) -> set[str]:
    """What the process's open files link to; a file it closes while they are read is
    skipped, not taken for the whole process being gone."""
    links = set()
    for fd in (proc / "fd").iterdir():
        try:
            links.add(os.readlink(fd))
        except OSError:
            continue
    return links


def _kill_the_sender(port: int) -> int:
    """SIGKILL the process holding the client socket at ``port``; it must be a citelab Ray
    worker (its title is ``ray::_Worker...``)."""
    target = f"socket:[{_socket_inode(port)}]"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            holds = target in _fd_links(proc)
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if holds:
            if not command.startswith("ray::_Worker"):
                raise AssertionError(f"the request came from {command!r}, not a Ray worker")
            os.kill(int(proc.name), signal.SIGKILL)
            return int(proc.name)
    raise AssertionError(f"no process holds the client socket at port {port}")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[KillOnce, RunningServer]]:
    # The sweep's 24 cases ask 4 questions: with the shared cache it may send as few as 7
    # requests (every repeat a hit), so the kill comes at the 3rd, while most are still due.
    killer = KillOnce(build_app(ExtractiveModel(), latency_ms=50), at=3)
    with serve_app_in_thread(killer) as server:
        yield killer, server


def _served_suite(folder: Path, base_url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    suite = folder / "served.toml"
    suite.write_text(
        'name = "served"\ndatasets = ["cases.jsonl"]\nconcurrency = 4\n'
        'scorers = ["citation_recall", "citation_precision", "no_answer"]\n'
        'models = [{ spec = "openai:extractive", label = "served", options = '
        f'{{ base_url = "{base_url}", max_retries = 0 }} }}]\n'
    )
    return suite


def test_a_worker_killed_mid_sweep_loses_nothing_and_the_cache_is_shared(
    cluster: Any, tmp_path: Path, served: tuple[KillOnce, RunningServer]
) -> None:
    killer, server = served
    suite = _served_suite(tmp_path, server.base_url)
    out = tmp_path / "ray"
    run(suite, out_dir=out, progress=False, executor="ray")

    assert killer.failure is None, killer.failure
    assert killer.killed is not None, (
        f"the sweep ended before a worker was killed ({killer.requests} requests, "
        f"the kill was due at {killer.at})"
    )
    assert not Path(f"/proc/{killer.killed}").exists() or _is_zombie(killer.killed)
    lines = (out / "records.jsonl").read_text().splitlines()
    keys = [json.loads(line)["key"] for line in lines]
    assert len(keys) == len(CASES) == len(set(keys)), "a case was lost or written twice"
    records = _records(out)
    assert all(turn["error"] is None for r in records for turn in r["turns"])
    log = json.loads((out / "run.json").read_text())
    assert log["executor"]["restarted_workers"] == 1

    local = tmp_path / "local"
    run(suite, out_dir=local, progress=False, cache=False)
    _assert_same_outputs(local, out)

    # Every worker wrote its calls to the one cache: a fresh sweep over it asks the model
    # nothing, whichever worker answers which case.
    (out / "records.jsonl").unlink()
    asked = killer.requests
    run(suite, out_dir=out, progress=False, executor="ray")
    assert killer.requests == asked
    cache = json.loads((out / "run.json").read_text())["model_cache"]["served"]
    assert cache["misses"] == 0
    assert cache["hits"] >= len(CASES)
    assert _records(out) == records


def _is_zombie(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_a_failing_case_is_recorded_once_with_its_error(cluster: Any, tmp_path: Path) -> None:
    suite = _served_suite(tmp_path, "http://127.0.0.1:9/v1")  # nothing listens on port 9
    # No preflight: it would refuse the dead endpoint up front; here every turn must fail.
    run(suite, out_dir=tmp_path / "ray", progress=False, executor="ray", workers=1, preflight=False)
    run(suite, out_dir=tmp_path / "local", progress=False, preflight=False)
    records = _records(tmp_path / "ray")
    assert len(records) == len(CASES)
    assert all(r["turns"][0]["error"] for r in records), "a turn against no server succeeded"
    assert records == _records(tmp_path / "local")


JUDGED = """
name = "judged"
datasets = ["university"]
models = ["extractive"]
concurrency = 4
scorers = ["citation_recall", "citation_precision",
           {{ name = "citation_recall", alce_compat = true }}, "no_answer"]
judge = {{ name = "llm", model = "judge", base_url = "{base_url}", concurrency = 3 }}
"""


def test_the_llm_judge_on_ray_asks_concurrently_within_each_workers_bound(
    cluster: Any, tmp_path: Path
) -> None:
    # citelab's offline yes/no judge model served over real HTTP, 50 ms per call; the Ray
    # workers' real openai SDK asks it from their own processes.
    model = YesNoModel(pause=0.05, inner=JudgeModel())
    with serve_in_thread(model) as server:
        suite = tmp_path / "judged.toml"
        suite.write_text(JUDGED.format(base_url=server.base_url), encoding="utf-8")
        local = run(suite, out_dir=tmp_path / "local", progress=False)
        assert 2 <= model.peak <= 3
        asked = model.calls

        # One worker: its questions overlap (>= 2 in flight), never more than the judge's
        # bound; one judge for the three scorers, so each question is asked once, as locally.
        model.reset()
        run(suite, out_dir=tmp_path / "ray", progress=False, executor="ray", workers=1)
        assert 2 <= model.peak <= 3
        assert model.calls == asked
        _assert_same_outputs(tmp_path / "local", tmp_path / "ray")

        # Two workers rescoring: each has its own bound (and its own memo: a question two
        # workers meet is asked by both), so at most 2 x 3 in flight.
        model.reset()
        rescored = rescore(tmp_path / "ray", load_suite(suite), executor="ray", workers=2)
        assert 2 <= model.peak <= 6
        assert model.calls >= asked
        assert model.active == 0
    pd.testing.assert_frame_equal(rescored.summary(), local.summary())
    pd.testing.assert_frame_equal(rescored.to_pandas("statement"), local.to_pandas("statement"))


def test_workers_rebuild_one_judge_for_the_scorers_that_shared_one(tmp_path: Path) -> None:
    suite = tmp_path / "judged.toml"
    suite.write_text(JUDGED.format(base_url="http://127.0.0.1:9/v1"), encoding="utf-8")
    plan = plan_run(load_suite(suite))
    portable = ScoringJob(plan.cases, plan.scorers).portable()
    specs = list(portable.specs)
    assert portable.groups == (0, 0, 0, None)  # no_answer holds no judge
    rebuilt = portable.build()
    judges = [getattr(scorer, "judge", None) for scorer in rebuilt]
    assert isinstance(judges[0], LLMJudge)
    assert judges[1] is judges[0]
    assert judges[2] is judges[0]
    assert judges[0] is not getattr(plan.scorers[0], "judge", None)  # built on the worker
    assert [s.config() for s in rebuilt] == specs
    # Without groups each scorer builds the judge its configuration names: separate ones.
    alone = PortableScoring(portable.specs).build()
    assert getattr(alone[1], "judge", None) is not getattr(alone[0], "judge", None)


def test_more_workers_than_cpus_is_a_clear_error(
    cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["eval", "--executor", "ray", "--workers", "3", "--out", str(tmp_path)])
    assert code == 2
    assert "3 Ray workers need 3 CPUs; the cluster has 2" in capsys.readouterr().err
    assert not (tmp_path / "records.jsonl").exists()


def test_ray_options_need_the_ray_executor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--address", "head:6379", "--out", "unused"]) == 2
    assert "--address needs --executor ray" in capsys.readouterr().err
    assert main(["eval", "--workers", "2", "--out", "unused"]) == 2
    assert "--workers needs --executor processes or ray" in capsys.readouterr().err
    assert main(["eval", "--executor", "ray", "--workers", "0"]) == 2
    assert "--workers must be at least 1, got 0" in capsys.readouterr().err


def test_without_ray_the_executor_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependency, match=r"pip install 'citelab\[ray\]'"):
        get_executor("ray")


def test_a_sweep_half_resumed_on_ray_writes_what_local_writes(cluster: Any, tmp_path: Path) -> None:
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    run("default", out_dir=local, progress=False)
    lines = (local / "records.jsonl").read_text().splitlines(keepends=True)
    on_ray.mkdir()
    (on_ray / "records.jsonl").write_text("".join(lines[::2]))  # every other case done
    run("default", out_dir=on_ray, progress=False, executor="ray")
    log = json.loads((on_ray / "run.json").read_text())
    assert (log["units"]["ran"], log["units"]["resumed"]) == (len(lines) // 2, len(lines[::2]))
    _assert_same_outputs(local, on_ray)


def test_local_processes_and_ray_score_the_same_rows(cluster: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run("default", out_dir=out, progress=False)
    plan = plan_run(load_suite("default"))
    recorded = read_records(out / "records.jsonl")
    records = [recorded[unit.key] for unit in plan.units if unit.key in recorded][::-1]
    job = ScoringJob(plan.cases, plan.scorers)
    expected = result_of(LocalExecutor().score(job, records), records, plan.cases, plan.scorers)
    for name in ("processes", "ray"):
        executor = get_executor(name, workers=2)
        try:
            scored = executor.score(job, records)
        finally:
            executor.close()
        result = result_of(scored, records, plan.cases, plan.scorers)
        for level in ("case", "citation", "statement"):
            pd.testing.assert_frame_equal(result.to_pandas(level), expected.to_pandas(level))


def test_scoring_batches_cover_consecutive_records_only() -> None:
    assert _batch_starts([0, 1, 2, 3, 4], 2) == [(0, 2), (2, 4), (4, 5)]
    assert _batch_starts([1, 2, 5, 6, 7, 9], 5) == [(1, 3), (5, 8), (9, 10)]
    assert _batch_starts([], 3) == []


def test_an_alce_suite_on_ray_writes_what_local_writes(cluster: Any, tmp_path: Path) -> None:
    """ALCE's prompt and the pipeline on ALCE's items (three, each with its own documents)
    run on the Ray workers: the workers count the ALCE prompt's model calls, and the records,
    tables and ALCE result files are a local run's."""
    suite = alce_suite(tmp_path, ALCE_ITEMS)
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    run(suite, out_dir=local, progress=False)
    run(suite, out_dir=on_ray, progress=False, executor="ray")
    _assert_same_outputs(local, on_ray)
    [written] = (local / "alce").glob("*.json")
    assert (on_ray / "alce" / written.name).read_text() == written.read_text()
    assert not list((on_ray / "alce").glob("*.partial.jsonl"))
    log = json.loads((on_ray / "run.json").read_text())
    assert log["model_cache"]["extractive (alce_prompt)"] == {"hits": 0, "misses": 3}
    assert log["model_cache"]["extractive"]["misses"] > 0  # the pipeline's calls
    variants = {(r["variant"], r["case_id"]) for r in _records(on_ray)}
    assert variants == {("baseline", f"q{k}") for k in range(3)}  # ALCE's are in its file
