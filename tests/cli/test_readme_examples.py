"""The README's shell examples run as written (in a fresh folder, with this checkout's
``citelab`` first on the PATH) and do what the README says they do."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _shell_block(marker: str) -> str:
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    [block] = [block for block in blocks if marker in block]
    return block


def _run(script: str, folder: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "CITELAB_CACHE_DIR": str(folder / ".cache"),
    }
    return subprocess.run(
        ["bash", "-c", script],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.mark.slow
def test_the_scoring_envelope_example_runs_as_written(tmp_path: Path) -> None:
    done = _run(_shell_block("citelab score answers.jsonl"), tmp_path)
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    assert metrics["citation_recall"]["value"] == 1.0
    assert metrics["citation_precision"]["value"] == 1.0


@pytest.mark.slow
def test_the_ci_recipe_runs_as_written_and_passes_its_gates(tmp_path: Path) -> None:
    recipe = _shell_block("--non-inferior '*=0.02'")
    done = _run(recipe, tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "gates: all 3 passed" in done.stdout  # the default suite's two and its required finding
    compared = json.loads((tmp_path / "runs" / "compare" / "compare.json").read_text())
    assert compared["gates"]
    assert all(gate["passed"] for gate in compared["gates"])
    # A second time, the accepted run is kept and the candidate resumes: still green.
    again = _run(recipe, tmp_path)
    assert again.returncode == 0, again.stderr
