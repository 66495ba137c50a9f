"""Executors are one registry's kind: built by name (or module:attr), listed with their
descriptions, refused with the known names; a user's executor runs a suite from Python and
from ``citelab eval --executor``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from citelab._errors import ConfigError
from citelab.cli import main
from citelab.evals import run
from citelab.evals.execution import (
    EXECUTORS,
    AnswerFigures,
    Answering,
    LocalExecutor,
    ScoringJob,
    get_executor,
)
from citelab.evals.records import CaseRecord
from citelab.models import MODELS

from ..runner.test_runner import CountingModel, _suite_file


class Tracing(LocalExecutor):
    """This process, noting what it was asked to run (a test's executor)."""

    name = "tracing"
    made: ClassVar[list[dict[str, Any]]] = []
    ran: ClassVar[list[int]] = []

    def __init__(self, **options: Any) -> None:
        Tracing.made.append(options)

    async def answer(
        self,
        answering: Answering,
        indices: Sequence[int],
        keep: Callable[[CaseRecord], None],
        scoring: ScoringJob,
    ) -> AnswerFigures:
        Tracing.ran.append(len(indices))
        return await super().answer(answering, indices, keep, scoring)


@pytest.fixture
def suite_file(tmp_path: Path) -> Iterator[Path]:
    Tracing.made, Tracing.ran = [], []
    with MODELS.preserved(), EXECUTORS.preserved():
        MODELS.register("counting", CountingModel)
        EXECUTORS.register("tracing", Tracing)
        yield _suite_file(tmp_path)


def test_the_executors_are_listed_with_their_descriptions_without_importing_ray() -> None:
    described = EXECUTORS.describe()
    assert list(described) == ["local", "processes", "ray"]
    assert described["local"].startswith("This process")
    assert described["processes"].startswith("Worker processes on this machine")
    assert "Ray actors" in described["ray"]
    code = (
        "import sys; from citelab.evals.execution import EXECUTORS; EXECUTORS.describe(); "
        "print('citelab.evals.execution._ray' in sys.modules)"
    )
    listed = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    )
    assert listed.stdout.strip() == "False", listed.stderr


def test_an_executor_is_built_by_name_and_a_wrong_name_or_option_is_refused() -> None:
    assert isinstance(get_executor(), LocalExecutor)
    given = LocalExecutor()
    assert get_executor(given) is given
    with pytest.raises(
        ConfigError, match=r"unknown executor 'nope'; known executors: local, processes, ray"
    ):
        get_executor("nope")
    with pytest.raises(ConfigError, match=r"executor 'local': bad options \['address'\]"):
        get_executor("local", address="head:6379")
    with pytest.raises(ConfigError, match="workers must be at least 1, got 0"):
        get_executor("ray", workers=0)
    with pytest.raises(ConfigError, match="cannot import 'no_such_module'"):
        get_executor("no_such_module:Executor")


def test_a_registered_executor_runs_a_suite(suite_file: Path) -> None:
    out = suite_file.parent / "out"
    result = run(suite_file, out_dir=out, limit=1, progress=False, executor="tracing")
    assert Tracing.made == [{}]
    assert Tracing.ran == [len(result.records)]
    assert json.loads((out / "run.json").read_text())["executor"] == {"name": "tracing"}


def test_the_command_line_takes_its_executors_from_the_registry(
    suite_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = suite_file.parent / "cli-out"
    args = ["eval", "--suite", str(suite_file), "--out", str(out), "--limit", "1", "--quiet"]
    assert main([*args, "--executor", "tracing", "--workers", "2"]) == 0
    assert Tracing.made == [{"workers": 2}]
    assert Tracing.ran
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main([*args, "--executor", "nope"])
    assert exited.value.code == 2
    assert "invalid choice: 'nope' (choose from 'local', 'processes', 'ray', 'tracing')" in (
        capsys.readouterr().err
    )
