"""``citelab eval`` and ``citelab compare`` exit 3 when a gate does not pass: distinct from 1
(turns failed) and 2 (bad input), with every output written and each verdict printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citelab.cli import build_parser, main

HEAD = """
name = "gated"
datasets = ["university"]
limit = 4
scorers = ["citation_recall", "citation_precision", "source_leakage"]
models = [{ spec = "extractive", label = "m" }]
"""


def _suite(tmp_path: Path, body: str, name: str = "gated.toml", head: str = HEAD) -> Path:
    path = tmp_path / name
    path.write_text(head + body, encoding="utf-8")
    return path


def _eval(suite: Path, out: Path) -> int:
    return main(["eval", "--suite", str(suite), "--out", str(out), "--quiet"])


@pytest.mark.slow
def test_a_failed_gate_exits_3_and_a_passing_one_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    passing = _suite(tmp_path, '[[gates]]\nmetric = "citation_precision"\nmin = 0.5\n')
    assert _eval(passing, out) == 0
    assert "gates: 1 passed" in capsys.readouterr().out
    failing = _suite(tmp_path, '[[gates]]\nmetric = "citation_precision"\nmin = 1.5\n')
    assert _eval(failing, out) == 3
    printed = capsys.readouterr().out
    assert "gates: 0 passed, 1 of 1 FAILED the run" in printed
    assert "✘ gate: citation_precision >= 1.5 for every variant" in printed
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["gates"][0]["verdict"] == "fails"
    assert (out / "report.html").is_file()
    # --json says the same for a CI script to read: each gate's verdict and the exit code.
    assert main(["eval", "--suite", str(failing), "--out", str(out), "--quiet", "--json"]) == 3
    facts = json.loads(capsys.readouterr().out)
    assert (facts["exit_code"], facts["gates_passed"], facts["failed_turns"]) == (3, False, 0)
    assert [gate["verdict"] for gate in facts["gates"]] == ["fails"]
    assert facts["gates"][0]["name"] == "citation_precision >= 1.5 for every variant"
    assert {row["metric"] for row in facts["summary"]} >= {"citation_precision"}


@pytest.mark.slow
def test_a_required_finding_that_does_not_hold_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    finding = (
        '[[findings]]\ntitle = "recall is perfect"\nmetric = "citation_recall"\n'
        'variant = "*"\nmin = 1.5\n'
    )
    suite = _suite(tmp_path, finding)
    assert _eval(suite, tmp_path / "out") == 0  # not required: reported, not a gate
    assert "✘ recall is perfect" in capsys.readouterr().out
    required = _suite(tmp_path, finding + "required = true\n")
    assert _eval(required, tmp_path / "out") == 3
    assert "✘ gate: required finding: recall is perfect" in capsys.readouterr().out


TERSE = """
[[variants]]
name = "baseline"

[[variants]]
name = "terse"
set = { contract_template = "terse" }

[[gates]]
metric = "citation_recall"
variant = "terse"
not_worse_than = "baseline"
margin = 0.02
"""


def test_a_gate_on_identical_answers_is_not_informative_and_fails_only_when_required(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The extractive model does not read its prompt: terse's answers are the baseline's.
    required = _suite(tmp_path, TERSE)
    out = tmp_path / "out"
    assert main(["eval", "--suite", str(required), "--out", str(out), "--quiet", "--json"]) == 3
    facts = json.loads(capsys.readouterr().out)
    (gate,) = facts["gates"]
    assert (gate["verdict"], gate["passed"], gate["fails_run"]) == ("uninformative", None, True)
    assert facts["gates_passed"] is False
    optional = _suite(tmp_path, TERSE + "required = false\n")
    assert _eval(optional, out) == 0
    printed = capsys.readouterr().out
    assert "gates: 0 passed, 1 not informative" in printed
    assert "≡ gate: citation_recall of terse not worse than baseline" in printed
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<b>0 passed, 1 not informative.</b>" in page
    assert "≡ not informative:" in page


def test_a_gate_that_cannot_be_tested_fails_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(
        tmp_path, '[[gates]]\nmetric = "citation_recall"\nmin = 0.5\nsubset = "tag:nope"\n'
    )
    assert _eval(suite, tmp_path / "out") == 3
    printed = capsys.readouterr().out
    assert "○ gate:" in printed
    assert "no tag:nope turns in these results — not testable here" in printed


def test_a_bad_gate_is_bad_input_before_any_case_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path, '[[gates]]\nmetric = "claim_recall"\nmin = 0.5\n')
    assert _eval(suite, tmp_path / "out") == 2
    assert "key gates.0.metric: no scorer of the suite writes 'claim_recall'" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "out" / "records.jsonl").exists()


@pytest.mark.slow
def test_compare_exits_3_when_b_is_worse_than_a_by_more_than_the_margin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _suite(tmp_path, "", "a.toml")
    noisy = HEAD.replace(
        '{ spec = "extractive", label = "m" }',
        '{ spec = "perturbed", label = "m", options = { rates = { wrong = 0.6 }, seed = 1 } }',
    )
    worse = _suite(tmp_path, "", "b.toml", head=noisy)
    assert _eval(good, tmp_path / "a") == 0
    assert _eval(worse, tmp_path / "b") == 0
    capsys.readouterr()
    args = ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "c")]
    assert main([*args, "--non-inferior", "citation_precision=0.01"]) == 3
    printed = capsys.readouterr().out
    assert "✘ gate: citation_precision of b not worse than a by more than 0.01" in printed
    compared = json.loads((tmp_path / "c" / "compare.json").read_text(encoding="utf-8"))
    assert compared["gates"][0]["verdict"] == "fails"
    assert "<h2>Gates</h2>" in (tmp_path / "c" / "report.html").read_text(encoding="utf-8")
    assert main([*args, "--non-inferior", "citation_precision=0.01", "--json"]) == 3
    facts = json.loads(capsys.readouterr().out)
    assert (facts["exit_code"], facts["gates_passed"], facts["labels"]) == (3, False, ["a", "b"])
    assert facts["gates"][0]["verdict"] == "fails"
    [row] = [row for row in facts["differences"] if row["metric"] == "citation_precision"]
    assert row["ci_low"] < -0.01  # the paired interval's worse end, past the margin
    assert main([*args, "--non-inferior", "citation_precision=1"]) == 0
    assert main([*args, "--non-inferior", "*=1"]) == 0
    assert main([*args, "--non-inferior", "citation_precision"]) == 2
    assert "write METRIC=MARGIN" in capsys.readouterr().err
    assert main([*args, "--non-inferior", "nope=0.1"]) == 2
    assert "neither run has that metric" in capsys.readouterr().err


def test_the_help_lists_the_exit_codes() -> None:
    parser = build_parser()
    actions = parser._subparsers._group_actions  # type: ignore[union-attr]
    commands = actions[0].choices  # type: ignore[attr-defined]
    for name in ("eval", "compare"):
        text = commands[name].format_help()
        assert "exit codes:" in text
        assert "3    a" in text, name
