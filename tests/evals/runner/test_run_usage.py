"""Every case and run records its tokens, and its cost where a price is given: the offline
model's estimated, a served model's as its API reported them (``usage`` over real HTTP)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from citelab.cli import main
from citelab.evals import run
from citelab.evals.records import read_records
from citelab.evals.results import ModelPrice
from citelab.models import ExtractiveModel, RunningServer, serve_in_thread

CASES = [
    {"id": "fee", "agent": "university", "turns": [{"question": "How much is the semester fee?"}]},
    {
        "id": "robotics",
        "agent": "university",
        "turns": [{"question": "When do applications for the Robotics MSc close?"}],
    },
]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel()) as running:
        yield running


def _suite(folder: Path, models: str, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cases.jsonl").write_text(
        "".join(json.dumps(case) + "\n" for case in CASES), encoding="utf-8"
    )
    suite = folder / "priced.toml"
    suite.write_text(
        f'name = "priced"\ndatasets = ["cases.jsonl"]\nscorers = ["no_answer"]\n'
        f"models = [{models}]\n{extra}",
        encoding="utf-8",
    )
    return suite


def _served(server: RunningServer) -> str:
    return (
        f'{{ spec = "openai:extractive", label = "served", options = '
        f'{{ base_url = "{server.base_url}", max_retries = 0 }} }}'
    )


def test_a_served_models_tokens_are_its_apis_and_priced_from_the_suite(
    tmp_path: Path, server: RunningServer
) -> None:
    prices = "[prices]\nserved = { input = 2.0, output = 8.0 }\n"
    out = tmp_path / "out"
    result = run(_suite(tmp_path, _served(server), prices), out_dir=out, progress=False)
    records = list(read_records(out / "records.jsonl").values())
    rounds = [r for record in records for turn in record.turns for r in turn.rounds]
    assert rounds
    assert all(r.input_tokens and r.output_tokens and not r.tokens_estimated for r in rounds)
    cases = pd.read_csv(out / "cases.csv")
    assert (cases["input_tokens"] > 0).all()
    assert (cases["output_tokens"] > 0).all()
    assert not cases["tokens_estimated"].any()
    expected = (cases["input_tokens"] * 2.0 + cases["output_tokens"] * 8.0) / 1e6
    assert cases["cost_usd"].tolist() == pytest.approx(expected.tolist())
    usage = json.loads((out / "run.json").read_text(encoding="utf-8"))["usage"]
    assert [row["model"] for row in usage] == ["served"]
    assert usage[0]["input_tokens"] == int(cases["input_tokens"].sum())
    assert usage[0]["cost_usd"] == pytest.approx(float(expected.sum()))
    assert result.usage()["cost_usd"].iloc[0] == pytest.approx(float(expected.sum()))
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Tokens and cost" in page
    assert f"{usage[0]['cost_usd']:.4f}" in page


def test_the_offline_models_tokens_are_estimated_and_said_so(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(_suite(tmp_path, '"extractive"'), out_dir=out, progress=False)
    cases = pd.read_csv(out / "cases.csv")
    assert (cases["input_tokens"] > 0).all()
    assert cases["tokens_estimated"].all()
    assert "cost_usd" not in cases  # no price given: no cost made up
    usage = pd.read_csv(out / "usage.csv")
    assert usage["estimated"].all()
    assert usage["cost_usd"].isna().all()
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "estimated by citelab" in page
    assert "No price was given" in page


def test_a_price_on_the_command_line_wins_over_the_suites(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path, '"extractive"', "[prices]\nextractive = { input = 1.0, output = 1.0 }\n"
    )
    out = tmp_path / "out"
    code = main(
        ["eval", "--suite", str(suite), "--out", str(out), "--quiet", "--price",
         "extractive=3,5"]
    )  # fmt: skip
    assert code == 0
    log = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert log["prices"] == {"extractive": {"input": 3.0, "output": 5.0}}
    row = log["usage"][0]
    price = ModelPrice(input=3.0, output=5.0)
    assert row["cost_usd"] == pytest.approx(price.cost(row["input_tokens"], row["output_tokens"]))


@pytest.mark.parametrize("bad", ["extractive", "extractive=1", "=1,2", "extractive=-1,2", "m=a,b"])
def test_a_bad_price_is_a_clear_error(
    tmp_path: Path, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["eval", "--suite", str(_suite(tmp_path, '"extractive"')), "--price", bad])
    assert code == 2
    assert "write MODEL=INPUT,OUTPUT in US dollars per million tokens" in capsys.readouterr().err


def test_runs_without_tokens_have_no_usage_rows_and_no_section() -> None:
    from citelab.evals.report._usage_html import usage_html
    from citelab.evals.results import EvalResult, usage_table

    turns = pd.DataFrame(
        {
            "variant": ["a", "a"],
            "model": ["m", "m"],
            "turn": [0, 0],
            "rounds": [1, 1],
            "input_tokens": [0, 0],
            "output_tokens": [0, 0],
            "tokens_estimated": [False, False],
        }
    )
    assert usage_table(turns, {}).empty  # answers citelab score read: no model call counted
    assert usage_html(EvalResult(scores=pd.DataFrame(), turns=turns, details={}, scorers=[])) == ""
    older = turns.drop(columns=["input_tokens", "output_tokens", "tokens_estimated"])
    assert usage_table(older, {}).empty  # a run written before citelab counted tokens
    mixed = pd.concat([turns.assign(input_tokens=[10, 20], variant="b"), older])
    table = usage_table(mixed, {"m": ModelPrice(input=1.0, output=0.0)})
    assert table["variant"].tolist() == ["b", "a"]
    assert table["input_tokens"].tolist() == [30, 0]
    assert table["estimated"].tolist() == [False, False]  # a missing flag is not an estimate
    assert table["cost_usd"].tolist() == pytest.approx([30 / 1e6, 0.0])
