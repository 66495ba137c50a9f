"""``citelab eval`` refuses unknown names at once, saying which ones exist."""

from pathlib import Path

import pytest

from citelab.cli import main


@pytest.mark.parametrize("preflight", [[], ["--no-preflight"]], ids=["preflight", "none"])
def test_an_unknown_model_is_refused_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], preflight: list[str]
) -> None:
    argv = ["eval", "--model", "bogus-model", "--out", str(tmp_path / "out"), *preflight]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "unknown model" in err
    assert "extractive" in err  # the known ones are listed
    assert "%|" not in err  # no progress bar was started
    assert not (tmp_path / "out").exists()


def test_an_unknown_suite_lists_the_suites(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--suite", "no-such-suite"]) == 2
    assert "the suites are: default" in capsys.readouterr().err
