"""The runner end to end on a tiny suite: outputs, resume, the model cache, concurrency."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from citelab._errors import ConfigError, ModelError
from citelab.cli import main
from citelab.evals import DEFAULT_JUDGE, RunOptions, load_suite, rescore, run
from citelab.models import MODELS, ExtractiveModel, Message, ModelDelta, ToolChoice, ToolSpec

CASES = [
    {
        "id": "fee-then-robotics",
        "agent": "university",
        "turns": [
            {"question": "How much is the semester fee?"},
            {
                "question": "When do applications for the Robotics and Autonomous Systems MSc "
                "close?",
                "claims": [
                    {
                        "text": "Applications close on 15 April",
                        "supported_by": ["entity:program/robotics-msc"],
                    }
                ],
                "min_searches": 1,
            },
        ],
        "tags": ["multi_turn", "multi_round"],
    },
    {
        "id": "cup",
        "agent": "university",
        "turns": [{"question": "Who won the 2022 football cup?", "expect_answer": False}],
    },
    {
        "id": "vpn",
        "agent": "intranet",
        "turns": [{"question": "What is the VPN gateway?", "expect_answer": False}],
        "tags": ["restricted"],
        "canaries": ["vpn-ams"],
    },
]

SUITE = """
name = "tiny"
datasets = ["cases.jsonl"]
models = [{ spec = "counting", label = "counted" }]
concurrency = 2
scorers = ["citation_recall", "numbering_stability", "no_answer", "required_searches",
           "source_leakage"]

[[variants]]
name = "baseline"

[[variants]]
name = "no_tool_rewrite"
set = { "hooks.tool_rewrite" = false }

[[findings]]
title = "rewrite keeps numbers"
metric = "numbering_stability"
baseline = "baseline"
variant = "no_tool_rewrite"
subset = "multi_round"
"""


class CountingModel:
    """The extractive model, slowed down, counting calls and how many run at once."""

    calls = 0
    running = 0
    most = 0
    failing: ClassVar[str | None] = None
    """When set, a call whose last message contains this text fails (a ModelError)."""
    prepared: ClassVar[list[int]] = []
    """The number of calls made when each ``prepare`` came."""

    def __init__(self) -> None:
        self.name = "counting"
        self.inner = ExtractiveModel()

    async def prepare(self) -> None:
        CountingModel.prepared.append(CountingModel.calls)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        cls = CountingModel
        cls.calls += 1
        cls.running += 1
        cls.most = max(cls.most, cls.running)
        if cls.failing is not None and cls.failing in str(messages[-1].get("content")):
            cls.running -= 1
            raise ModelError(f"counting: refused a question about {cls.failing!r}")
        try:
            await asyncio.sleep(0.05)
            async for delta in self.inner.stream(messages, tools, tool_choice=tool_choice):
                yield delta
        finally:
            cls.running -= 1


@pytest.fixture
def suite_file(tmp_path: Path) -> Iterator[Path]:
    # Registered for this test only: the registry is global and other tests list it.
    with MODELS.preserved():
        MODELS.register("counting", CountingModel)
        yield _suite_file(tmp_path)


def _suite_file(tmp_path: Path) -> Path:
    CountingModel.calls = CountingModel.running = CountingModel.most = 0
    CountingModel.prepared = []
    CountingModel.failing = None
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps(case) + "\n" for case in CASES), encoding="utf-8"
    )
    path = tmp_path / "tiny.toml"
    path.write_text(SUITE, encoding="utf-8")
    return path


def test_a_run_writes_every_output_and_bounds_concurrency(suite_file: Path) -> None:
    out = suite_file.parent / "out"
    result = run(suite_file, out_dir=out, progress=False)
    names = {p.name for p in out.iterdir()}
    assert {
        "records.jsonl",
        "summary.csv",
        "cases.csv",
        "statements.csv",
        "citations.csv",
        "run.json",
        "report.html",
        "cache",
    } <= names
    assert 1 < CountingModel.most <= 2
    cases = result.to_pandas("case")
    assert len(cases) == 2 * 4  # two variants × four turns
    assert set(cases["model"]) == {"counted"}
    follow_up = cases[(cases["case_id"] == "fee-then-robotics") & (cases["turn"] == 1)]
    assert (follow_up["rounds"] == 2).all()
    stability = follow_up.set_index("variant")["numbering_stability"]
    assert stability["baseline"] == 1.0
    assert stability["no_tool_rewrite"] < 1.0  # the seed's bug, reproduced
    run_log = json.loads((out / "run.json").read_text())
    assert run_log["units"] == {
        "total": 6,
        "ran": 6,
        "resumed": 0,
        "rerun_failed": 0,
        "rerun_changed": 0,
    }
    # Set-up (indexes, model clients) came before the first case and is timed on its own.
    assert CountingModel.prepared
    assert set(CountingModel.prepared) == {0}
    assert 0 <= run_log["setup_seconds"] < run_log["seconds"]
    assert 0 < run_log["execution_seconds"] < run_log["seconds"]
    assert run_log["versions"]["citelab"]
    assert run_log["scorers"][0]["judge"]["name"] == DEFAULT_JUDGE
    # One multi-round turn a variant: the values differ (1.0 against less), but on too few
    # units to resample, Wilson's intervals overlap, so these results do not show it.
    finding = run_log["findings"][0]
    assert finding["verdict"] == "fails"
    assert finding["sentence"].count("(too few units: Wilson)") == 2


def test_a_second_run_resumes_and_a_lost_record_is_answered_from_the_cache(
    suite_file: Path,
) -> None:
    out = suite_file.parent / "out"
    first = run(suite_file, out_dir=out, progress=False)
    calls = CountingModel.calls
    again = run(suite_file, out_dir=out, progress=False)
    assert CountingModel.calls == calls  # nothing re-run
    assert json.loads((out / "run.json").read_text())["units"]["resumed"] == 6
    # An interrupted run: one record lost, the last line torn in half.
    lines = (out / "records.jsonl").read_text().splitlines()
    (out / "records.jsonl").write_text("\n".join(lines[:4]) + "\n" + lines[4][:40])
    third = run(suite_file, out_dir=out, progress=False)
    log = json.loads((out / "run.json").read_text())
    assert log["units"] == {
        "total": 6,
        "ran": 2,
        "resumed": 4,
        "rerun_failed": 0,
        "rerun_changed": 0,
    }
    assert log["model_cache"]["counted"]["misses"] == 0  # replayed, not asked again
    assert CountingModel.calls == calls
    for result in (again, third):
        assert result.to_pandas("variant").equals(first.to_pandas("variant"))


def test_run_options_as_an_object_or_as_keywords_are_one_run(suite_file: Path) -> None:
    out = suite_file.parent / "out"
    options = RunOptions(out_dir=out, progress=False, limit=1, concurrency=1)
    first = run(suite_file, options)
    assert CountingModel.most == 1
    log = json.loads((out / "run.json").read_text())
    assert (log["units"]["total"], log["concurrency"]) == (2, 1)  # one case, two variants
    again = run(suite_file, options, out_dir=str(out), concurrency=2)  # keywords win
    log = json.loads((out / "run.json").read_text())
    assert (log["units"]["resumed"], log["concurrency"]) == (2, 2)
    assert again.to_pandas("variant").equals(first.to_pandas("variant"))
    with pytest.raises(ValueError, match="frozen"):
        options.limit = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="unknown option\\(s\\) out_folder; the options are"):
        run(suite_file, out_folder=out)
    with pytest.raises(ConfigError, match="run: limit: Input should be greater than or equal"):
        run(suite_file, options, limit=0)


def test_rescore_runs_no_model(suite_file: Path) -> None:
    out = suite_file.parent / "out"
    run(suite_file, out_dir=out, progress=False)
    calls = CountingModel.calls
    result = rescore(out, load_suite(suite_file))
    assert CountingModel.calls == calls
    assert "rescored_at" in result.config
    assert not result.to_pandas("case").empty


def test_a_changed_variant_is_run_again(suite_file: Path) -> None:
    out = suite_file.parent / "out"
    run(suite_file, out_dir=out, progress=False)
    suite_file.write_text(
        SUITE.replace('"hooks.tool_rewrite" = false', 'merge_strategy = "replace"')
    )
    run(suite_file, out_dir=out, progress=False)
    assert json.loads((out / "run.json").read_text())["units"] == {
        "total": 6,
        "ran": 3,
        "resumed": 3,
        "rerun_failed": 0,
        "rerun_changed": 3,
    }


def test_the_command_line_runs_a_suite(
    suite_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = suite_file.parent / "cli-out"
    code = main(["eval", "--suite", str(suite_file), "--out", str(out), "--limit", "1", "--quiet"])
    captured = capsys.readouterr()
    assert code == 0
    assert "citation_recall" in captured.out
    assert "rewrite keeps numbers" in captured.out
    assert (out / "report.html").is_file()
    assert main(["eval", "--suite", str(suite_file), "--out", str(out), "--rescore"]) == 0


def test_the_command_line_reports_a_bad_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'bad'\ndatasets = ['nowhere.jsonl']\n")
    assert main(["eval", "--suite", str(bad)]) == 2
    assert "key datasets.0" in capsys.readouterr().err
    assert main(["eval", "--suite", str(bad), "--limit", "0"]) == 2
    assert "--limit must be at least 1" in capsys.readouterr().err


def test_without_the_cache_every_call_reaches_the_model(suite_file: Path) -> None:
    run(suite_file, out_dir=suite_file.parent / "a", progress=False, cache=False)
    calls = CountingModel.calls
    run(suite_file, out_dir=suite_file.parent / "b", progress=False, cache=False)
    assert CountingModel.calls == 2 * calls
    assert not (suite_file.parent / "b" / "cache").exists()
    log = json.loads((suite_file.parent / "b" / "run.json").read_text())
    assert log["model_cache_enabled"] is False


def test_failed_turns_make_the_command_fail_with_their_causes_grouped(
    suite_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    CountingModel.failing = "football cup"
    out = suite_file.parent / "out"
    args = ["eval", "--suite", str(suite_file), "--out", str(out), "--quiet"]
    assert main(args) == 1
    err = capsys.readouterr().err
    # Two variants × the one failing case: one cause, counted twice, its message shown.
    assert "error: 2 of 8 turns failed (1 cause):" in err
    assert "2 × ModelError: counting: refused a question about 'football cup'" in err
    assert "first in baseline · counted · cases/cup turn 0" in err
    report = (out / "report.html").read_text()
    assert report.index("<h2>Errors</h2>") < report.index("<h2>Findings</h2>")
    assert "refused a question about" in report
    # Accepted on request, still printed.
    assert main([*args, "--allow-failures", "--keep-failed"]) == 0
    assert "2 of 8 turns failed" in capsys.readouterr().err


def test_resuming_runs_failed_cases_again_unless_told_to_keep_them(suite_file: Path) -> None:
    CountingModel.failing = "football cup"
    out = suite_file.parent / "out"
    failed = run(suite_file, out_dir=out, progress=False)
    errors = failed.errors()
    assert list(errors["count"]) == [2]
    assert errors.loc[0, "case_id"] == "cup"
    # Still broken, but told to keep the failures: nothing runs.
    calls = CountingModel.calls
    kept = run(suite_file, out_dir=out, progress=False, rerun_failed=False)
    assert CountingModel.calls == calls
    assert len(kept.errors()) == 1
    # Fixed: the two failed units run again (and only they), and the errors are gone.
    CountingModel.failing = None
    fixed = run(suite_file, out_dir=out, progress=False)
    units = json.loads((out / "run.json").read_text())["units"]
    assert units["ran"] == 2
    assert units["rerun_failed"] == 2
    assert units["resumed"] == 4
    assert fixed.errors().empty
    assert fixed.to_pandas("case")["error"].isna().all()


def test_records_of_another_configuration_are_kept_only_when_asked(suite_file: Path) -> None:
    out = suite_file.parent / "out"
    run(suite_file, out_dir=out, progress=False)
    suite_file.write_text(
        SUITE.replace('"hooks.tool_rewrite" = false', 'merge_strategy = "replace"')
    )
    calls = CountingModel.calls
    run(suite_file, out_dir=out, progress=False, reuse_changed=True)
    units = json.loads((out / "run.json").read_text())["units"]
    assert CountingModel.calls == calls
    assert (units["ran"], units["resumed"], units["rerun_changed"]) == (0, 6, 0)


def test_run_and_rescore_read_labels_in_their_own_spelling_with_label_map(
    suite_file: Path,
) -> None:
    from citelab import InvalidInput
    from citelab.evals import label_pairs

    out = suite_file.parent / "out"
    first = run(suite_file, out_dir=out, progress=False)
    rows = [
        {"id": item.id, "claim": item.claim, "evidence": [p.text for p in item.passages],
         "label": "attributable" if n % 2 else "not attributable"}
        for n, item in enumerate(label_pairs(first).items)
    ]  # fmt: skip
    labels = suite_file.parent / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    spelling = {"attributable": "supported", "not attributable": "not_supported"}
    with pytest.raises(InvalidInput, match='"not attributable" is not a label'):
        rescore(out, load_suite(suite_file), labels=labels)
    rescored = rescore(out, load_suite(suite_file), labels=labels, label_map=spelling)
    assert rescored.labels is not None
    assert len(rescored.labels.pairs) == len(rows)
    again = run(suite_file, out_dir=out, progress=False, labels=labels, label_map=spelling)
    assert again.labels is not None
    assert sum(p.label for p in again.labels.pairs) == len(rows) // 2
    # With labels, citation recall records the judge's score and PPI++ reads it; the run
    # without them recorded none.
    assert "judge_score" not in first.to_pandas("statement")
    for labelled in (rescored, again):
        statements = labelled.to_pandas("statement")
        judged = statements[statements["reason"].isin(["supported", "unsupported"])]
        assert not judged.empty
        assert judged["judge_score"].notna().all()
        ppi = labelled.corrected().set_index(["metric", "method"])
        notes = ppi.loc[("citation_recall", "ppi"), "note"]
        assert notes.str.contains("f: the judge's scores").all()
