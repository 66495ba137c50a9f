"""Runs over time, on real run folders made by running a small offline suite: ``citelab runs``
lists them, ``citelab compare`` puts three of them side by side against the first, and
``--log-to mlflow`` writes one to a real local MLflow store, read back with MlflowClient."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from citelab.cli import main
from citelab.evals.report import compare_many, figures_table, list_runs, log_to_mlflow

SUITE = """\
name = "small"
datasets = ["university"]
limit = 4
scorers = ["citation_recall", "citation_precision", "dangling_markers"]

[prices]
extractive = { input = 0.5, output = 1.5 }

[[variants]]
name = "baseline"

[[gates]]
metric = "citation_precision"
min = 0.5
variant = "baseline"
"""

FAULTY = 'models = [{ spec = "perturbed", options = { rates = { wrong = 0.6 }, seed = 3 } }]\n'


@pytest.fixture(autouse=True)
def _no_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow reports usage to its makers unless told not to: no request leaves the tests."""
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three runs of one suite: the offline model twice, then a model with citation faults."""
    root = tmp_path_factory.mktemp("reports")
    suite = root / "small.toml"
    suite.write_text(SUITE, encoding="utf-8")
    faulty = root / "faulty.toml"
    faulty.write_text(FAULTY + SUITE.replace('name = "small"\n', ""), encoding="utf-8")
    faulty.write_text('name = "small"\n' + faulty.read_text(encoding="utf-8"), encoding="utf-8")
    for name, path in (("first", suite), ("again", suite), ("faulty", faulty)):
        args = ["eval", "--suite", str(path), "--out", str(root / name), "--quiet"]
        assert main(args) in (0, 3), name
    return root


def test_the_index_lists_every_run_with_its_figures_gates_and_cost(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (runs / "not-a-run").mkdir(exist_ok=True)
    index = list_runs(runs)
    assert sorted(run.folder for run in index.runs) == ["again", "faulty", "first"]
    assert index.problems == []
    first = next(run for run in index.runs if run.folder == "first")
    assert first.suite == "small"
    assert first.models == ["extractive"]
    assert first.cases == 4
    assert first.gates_total == 1
    summary = pd.read_csv(runs / "first" / "summary.csv")
    recall = summary.loc[summary["metric"] == "citation_recall", "value"].iloc[0]
    headline = {figure.metric: figure.value for figure in first.headline}
    assert headline["citation_recall"] == pytest.approx(recall)
    usage = pd.read_csv(runs / "first" / "usage.csv")
    assert first.input_tokens == int(usage["input_tokens"].sum())
    assert first.cost_usd == pytest.approx(
        (usage["input_tokens"].sum() * 0.5 + usage["output_tokens"].sum() * 1.5) / 1e6
    )
    assert first.tokens_estimated is True
    assert [run.when for run in index.runs] == sorted((r.when for r in index.runs), reverse=True)

    assert main(["runs", str(runs)]) == 0
    printed = capsys.readouterr().out
    assert "citation_recall" in printed
    assert "citation_precision" in printed
    for folder in ("first", "again", "faulty"):
        assert folder in printed
    assert "tokens estimated by citelab" in printed

    assert main(["runs", str(runs), "--json", "--metric", "dangling_markers"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["runs"]) == 3
    assert {f["metric"] for run in data["runs"] for f in run["headline"]} == {"dangling_markers"}


def test_a_broken_run_folder_is_named_not_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "torn").mkdir()
    (tmp_path / "torn" / "run.json").write_text("{not json", encoding="utf-8")
    assert main(["runs", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "skipped" in captured.err
    assert "torn" in captured.err
    assert "no runs under" in captured.out
    assert main(["runs", str(tmp_path / "nowhere")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_three_runs_are_compared_with_the_first(runs: Path) -> None:
    comparison = compare_many([runs / "first", runs / "again", runs / "faulty"])
    assert comparison.labels == ("first", "again", "faulty")
    assert comparison.matched == 4
    assert comparison.only == (0, 0, 0)
    figures = figures_table(comparison).set_index(["run", "metric"])
    precision = figures.xs("citation_precision", level="metric")
    assert list(precision.index) == ["first", "again", "faulty"]
    assert pd.isna(precision.loc["first", "difference"])  # the baseline
    assert precision.loc["again", "difference"] == 0  # the same run again: nothing differs
    assert int(precision.loc["again", "paired_cases"]) == 4
    faulty = precision.loc["faulty"]
    # the paired difference is the values' difference, with its own interval around it
    assert faulty["difference"] == pytest.approx(faulty["value"] - precision.loc["first", "value"])
    assert faulty["difference"] < 0
    assert faulty["difference_ci_low"] <= faulty["difference"] <= faulty["difference_ci_high"]


def test_the_compare_command_takes_three_runs_and_gates_each(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cmp"
    folders = [str(runs / name) for name in ("first", "again", "faulty")]
    code = main(
        ["compare", *folders, "--out", str(out), "--non-inferior", "citation_precision=0.01"]
    )
    assert code == 3  # the faulty run is worse than the first
    printed = capsys.readouterr().out
    assert "4 cases matched by every run" in printed
    assert "citation_precision" in printed
    assert "minus first" in printed
    written = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    assert [run["label"] for run in written["runs"]] == ["first", "again", "faulty"]
    verdicts = {gate["gate"]["variant"]: gate["verdict"] for gate in written["gates"]}
    # A rerun of the same code gives the same answers: its gate can show nothing.
    assert verdicts == {"again": "uninformative", "faulty": "fails"}
    table = pd.read_csv(out / "figures.csv")
    assert set(table["run"]) == {"first", "again", "faulty"}
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Runs compared" in page
    assert "Each run is compared with first" in page

    assert main(["compare", *folders, "--out", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["labels"] == ["first", "again", "faulty"]
    rows = [r for r in data["figures"] if r["metric"] == "citation_precision"]
    assert [r["run"] for r in rows] == ["first", "again", "faulty"]
    assert rows[0]["difference"] is None
    assert rows[1]["difference"] == 0


def test_compare_needs_two_runs_and_a_label_each(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(runs / "first")]) == 2
    assert "two run folders or more" in capsys.readouterr().err
    folders = [str(runs / name) for name in ("first", "again", "faulty")]
    assert main(["compare", *folders, "--labels", "a", "b"]) == 2
    assert "--labels needs 3 different names" in capsys.readouterr().err


def test_a_run_is_written_to_a_local_mlflow_store(runs: Path, tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    store = tmp_path / "mlruns"
    logged = log_to_mlflow(runs / "first", uri=str(store))
    client = MlflowClient(tracking_uri=logged.uri)
    parent = client.get_run(logged.run_id)
    assert parent.data.tags["citelab.suite"] == "small"
    assert parent.data.tags["citelab.models"] == "extractive"
    assert parent.data.tags["citelab.gates"] == "1/1 passed"
    assert parent.data.params["suite"] == "small"
    assert json.loads(parent.data.params["datasets"]) == {"university": 4}
    assert json.loads(parent.data.params["prices"]) == {"extractive": {"input": 0.5, "output": 1.5}}
    assert parent.data.metrics["gates_passed"] == 1.0
    assert parent.data.metrics["turns"] == 4
    artifacts = {a.path for a in client.list_artifacts(logged.run_id)}
    assert {"report.html", "run.json", "summary.csv", "cases.csv", "usage.csv"} <= artifacts
    page = Path(client.download_artifacts(logged.run_id, "report.html", str(tmp_path)))
    assert page.read_bytes() == (runs / "first" / "report.html").read_bytes()

    [(name, child_id)] = logged.children.items()
    assert name == "baseline · extractive"
    child = client.get_run(child_id)
    assert child.data.tags["mlflow.parentRunId"] == logged.run_id
    assert child.data.tags["citelab.variant"] == "baseline"
    summary = pd.read_csv(runs / "first" / "summary.csv").set_index("metric")
    for metric in ("citation_recall", "citation_precision"):
        assert child.data.metrics[metric] == pytest.approx(summary.loc[metric, "value"])
        assert child.data.metrics[f"{metric}_ci_low"] == pytest.approx(
            summary.loc[metric, "ci_low"]
        )
    usage = pd.read_csv(runs / "first" / "usage.csv")
    assert child.data.metrics["input_tokens"] == usage["input_tokens"].iloc[0]
    assert child.data.metrics["cost_usd"] == pytest.approx(usage["cost_usd"].iloc[0])
    experiment = client.get_experiment_by_name("citelab/small")
    assert experiment is not None
    assert experiment.experiment_id == parent.info.experiment_id


def test_eval_logs_to_mlflow_when_asked(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlflow.tracking import MlflowClient

    store = tmp_path / "store"
    out = tmp_path / "logged"
    args = ["eval", "--suite", str(runs / "small.toml"), "--out", str(out), "--quiet"]
    assert main([*args, "--log-to", "mlflow", "--mlflow-uri", str(store),
                 "--mlflow-experiment", "mine"]) == 0  # fmt: skip
    assert "mlflow: run" in capsys.readouterr().err
    client = MlflowClient(tracking_uri=store.resolve().as_uri())
    experiment = client.get_experiment_by_name("mine")
    assert experiment is not None
    found = client.search_runs([experiment.experiment_id], "tags.`citelab.suite` = 'small'")
    assert len(found) == 2  # the run and its one variant · model
    assert main([*args, "--mlflow-uri", str(store)]) == 2
    assert "--mlflow-uri and --mlflow-experiment need --log-to mlflow" in capsys.readouterr().err


def test_without_mlflow_the_option_says_how_to_install_it(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "mlflow", None)  # as if it were not installed
    out = tmp_path / "never"
    args = ["eval", "--suite", str(runs / "small.toml"), "--out", str(out), "--log-to", "mlflow"]
    assert main(args) == 2
    assert "pip install 'citelab[mlflow]'" in capsys.readouterr().err
    assert not out.exists()  # refused before the run started
    assert os.environ.get("MLFLOW_TRACKING_URI") is None
