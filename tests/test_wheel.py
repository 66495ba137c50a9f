"""The built wheel carries everything a user needs: no Node, no checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PIP_WHEEL = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [*PIP_WHEEL, "--wheel-dir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("citelab-*.whl")
    return built


def test_wheel_holds_bundles_fixtures_suites_and_agents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in [
        "citelab/static/widget_chat.js",
        "citelab/static/page.js",
        "citelab/static/report.js",
        "citelab/static/citelab.css",
        "citelab/_fixtures/corpora/university.jsonl",
        "citelab/_fixtures/datasets/university.jsonl",
        "citelab/_suites/default.toml",
        "citelab/agent/default_agents.toml",
        "citelab/py.typed",
    ]:
        assert needed in names, needed
    assert not any(".index/" in name for name in names), "built indexes must not ship"
    assert "citelab/_browser.py" not in names, "the tests' chromium launcher must not ship"


def test_every_bundled_corpus_and_dataset_is_in_the_wheel(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for kind in ("corpora", "datasets"):
        for path in (ROOT / "fixtures" / kind).glob("*.jsonl"):
            assert f"citelab/_fixtures/{kind}/{path.name}" in names, f"add {path} to pyproject"


def test_installed_wheel_runs_the_bundled_suite_outside_a_checkout(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site), "CITELAB_CACHE_DIR": str(tmp_path / "cache")}
    code = (
        "import citelab, sys\n"
        "from citelab.cli import main\n"
        f"assert citelab.__file__.startswith({str(site)!r}), citelab.__file__\n"
        "sys.exit(main(['eval', '--suite', 'default', '--limit', '1', '--quiet',"
        f" '--out', {str(tmp_path / 'out')!r}]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out" / "report.html").is_file()
