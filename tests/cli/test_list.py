"""The command line lists every registered kind with descriptions, and takes its choices from
the registries (a format registered in Python, or named as module:attr, is a ``--format``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from citelab.cli import build_parser, main
from citelab.cli.list import KINDS
from citelab.evals import ANSWER_FORMATS, ExternalAnswer
from citelab.evals.records import SourceRecord


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_is_listed_with_descriptions(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", kind, "--json"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert described
    assert all(described.values())
    assert main(["list", kind]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(described)
    assert all(line.endswith(described[line.split()[0]]) for line in lines)


def test_judges_list_shows_what_each_judge_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judges", "list"]) == 0
    out = capsys.readouterr().out
    assert "lexical_trained" in out
    assert "lexical_pairs" not in out


def test_an_unknown_kind_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["list", "widgets"])
    assert exited.value.code == 2
    assert "invalid choice: 'widgets'" in capsys.readouterr().err


def read_lines(data: Any, where: str) -> list[ExternalAnswer]:
    """One answer per line of "question | answer [n] | source" records (a test's own format)."""
    answers = []
    for position, line in enumerate(data["lines"]):
        question, text, passage = (part.strip() for part in line.split("|"))
        source = SourceRecord(number=1, uri=f"line:{position}", title="line", content=passage)
        answers.append(ExternalAnswer(str(position), question, text, [source], raw_text=text))
    return answers


LINES = {"lines": ["When are fees due? | Fees are due in May [1]. | Fees are due in May."]}


def test_a_registered_format_is_a_format_choice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lines.json"
    path.write_text(json.dumps(LINES), encoding="utf-8")
    with ANSWER_FORMATS.preserved():
        ANSWER_FORMATS.register("lines", read_lines)
        assert (
            "lines" in build_parser().parse_args(["score", "x", "--format", "lines"]).answer_format
        )
        subparsers = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        assert "lines," in subparsers["score"].format_help()
        assert main(["score", str(path), "--format", "lines", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["metrics"]["citation_recall"]["value"] == 1.0
    assert "lines" not in ANSWER_FORMATS


def test_a_module_attr_reader_is_a_format_choice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lines.json"
    path.write_text(json.dumps(LINES), encoding="utf-8")
    spec = f"{__name__}:read_lines"  # importable as pytest imported it
    assert main(["score", str(path), "--format", spec, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == spec
    with pytest.raises(SystemExit):
        main(["score", str(path), "--format", "bing"])
    assert "invalid choice: 'bing' (choose from 'alce'" in capsys.readouterr().err
