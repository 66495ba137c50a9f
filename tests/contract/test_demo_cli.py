"""`citelab demo`: builds the fixture message, validates it, prints it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from citelab.cli import main
from citelab.contract import AnswerMessage, validate_message


def test_demo_prints_the_wire_json_and_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out, err = capsys.readouterr()
    assert err == "valid: 3 sources, 6 anchors\n"  # stdout is the JSON alone (`| jq` works)
    message = AnswerMessage.model_validate_json(out)
    assert validate_message(json.loads(out)) == []
    assert len(message.suggested_replies) == 3


@pytest.mark.slow
def test_demo_output_pipes_into_a_json_reader() -> None:
    """``citelab demo | jq``: the real command's stdout parses as one JSON document."""
    done = subprocess.run(
        [sys.executable, "-m", "citelab", "demo"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert json.loads(done.stdout)["role"] == "assistant"
    assert done.stderr == "valid: 3 sources, 6 anchors\n"


def test_demo_exits_non_zero_with_the_violations(
    tmp_path: Path, example_fixture: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    broken = json.loads(json.dumps(example_fixture))
    broken["anchors"][1]["citedText"] = "not what the text says"
    fixture = tmp_path / "broken.json"
    fixture.write_text(json.dumps(broken))
    assert main(["demo", "--fixture", str(fixture)]) == 1
    err = capsys.readouterr().err
    assert "[1].citedText: citedText" in err
    assert "[cited_text_mismatch]" in err
    assert "invalid: 1 violation(s)" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot read the fixture"), ("{", "is not a valid demo fixture"), ("{}", "answer")],
)
def test_demo_reports_a_bad_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    fixture = tmp_path / "fixture.json"
    if content is not None:
        fixture.write_text(content)
    assert main(["demo", "--fixture", str(fixture)]) == 2
    assert message in capsys.readouterr().err
