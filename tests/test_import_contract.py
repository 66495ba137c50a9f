"""The import contract of ``pyproject.toml`` (``make lint`` runs ``lint-imports``): it holds
for citelab, and it fails — naming the import — on a copy of the package with one bad import
added: a cycle between evals rooms, an upward import between citelab's parts, a cycle inside
one room, a private module imported from another package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests._import_contracts import owner

ROOT = Path(__file__).resolve().parents[1]
_PASSED = "Contracts: 5 kept, 0 broken."


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` in ``project`` (its pyproject.toml), on the citelab under its src/."""
    command = Path(sys.executable).parent / "lint-imports"
    return subprocess.run(
        [str(command), "--no-cache", "--no-logo"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project / "src")},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the package with the repository's contract (and its contract type)."""
    shutil.copytree(
        ROOT / "src" / "citelab",
        tmp_path / "src" / "citelab",
        ignore=shutil.ignore_patterns("__pycache__", "static"),
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "_import_contracts.py", tmp_path / "tests")
    return tmp_path


def add_import(project: Path, module: str, line: str) -> None:
    """Append ``line`` to the source of ``module`` in the copy."""
    path = project / "src" / Path(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")


def test_citelab_keeps_the_contract(project: Path) -> None:
    done = lint_imports(project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _PASSED in done.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # judges sit below results: results import judges, so this closes a cycle too.
        (
            "citelab.evals.judges._judges",
            "from citelab.evals.results import EvalResult  # noqa",
            [
                "citelab.evals' rooms import only the rooms below them BROKEN",
                "No cycle between the modules and subpackages of any package BROKEN",
                "citelab.evals.judges._judges -> citelab.evals.results",
            ],
        ),
        # models sit below evals (today's registry names the judge model, never imports it).
        (
            "citelab.models._registry",
            "import citelab.evals  # noqa",
            [
                "citelab's parts import only the parts below them (the data flow, bottom last) "
                "BROKEN",
                "citelab.models._registry -> citelab.evals",
                "No cycle between the modules and subpackages of any package BROKEN",
            ],
        ),
        # Judges sit below labels and cards: a judge that reads labels is in the wrong room.
        (
            "citelab.evals.judges._judges",
            "from citelab.evals.labels import LabelSet  # noqa",
            [
                "citelab.evals' rooms import only the rooms below them BROKEN",
                "citelab.evals.judges._judges -> citelab.evals.labels",
            ],
        ),
        # Cards hold figures; the report draws them, so a card must not import the report.
        (
            "citelab.evals.cards._card",
            "from citelab.evals.report import render_html  # noqa",
            [
                "citelab.evals' rooms import only the rooms below them BROKEN",
                "citelab.evals.cards._card -> citelab.evals.report",
            ],
        ),
        # The adapters and the offline models are independent; serve-model sits over both.
        (
            "citelab.models.adapters._openai",
            "from citelab.models.offline import ExtractiveModel  # noqa",
            [
                "citelab.models' parts: the registry on top, serve-model over the adapters",
                "citelab.models.adapters._openai -> citelab.models.offline",
            ],
        ),
        (
            "citelab.models.offline._extractive",
            "from citelab.models.serve import build_app  # noqa",
            [
                "citelab.models.offline._extractive -> citelab.models.serve",
            ],
        ),
        # Inside one room, where no layer is declared: the plan must not import the run.
        (
            "citelab.evals.runner._plan",
            "from citelab.evals.runner import _runner  # noqa",
            [
                "No cycle between the modules and subpackages of any package BROKEN",
                "No cycles are allowed in citelab.evals.runner.",
            ],
        ),
        # A room's privates are reached through its __init__ only.
        (
            "citelab.cli.eval",
            "from citelab.evals.report._report import render_html  # noqa",
            [
                "A private module is imported only inside its own package BROKEN",
                "citelab.cli.eval imports the private citelab.evals.report._report",
                "import it from citelab.evals.report instead",
            ],
        ),
    ],
    ids=[
        "cycle-between-rooms",
        "upward-between-parts",
        "judges-below-labels",
        "cards-below-report",
        "adapters-beside-offline",
        "offline-below-serve",
        "cycle-in-a-room",
        "private-import",
    ],
)
def test_one_bad_import_breaks_the_contract(
    project: Path, module: str, line: str, broken: list[str]
) -> None:
    add_import(project, module, line)
    done = lint_imports(project)
    assert done.returncode == 1, done.stdout + done.stderr
    for text in broken:
        assert text in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("module", "home"),
    [
        ("citelab.evals.report._report", "citelab.evals.report"),
        ("citelab.evals._versions", "citelab.evals"),
        ("citelab._errors", "citelab"),
        ("citelab.models._types", "citelab.models"),
        ("citelab.models.serve._server", "citelab.models.serve"),
        ("citelab._private.public", "citelab"),
        ("citelab.evals.report", None),
        ("citelab.__main__", None),
    ],
)
def test_a_private_module_belongs_to_the_package_above_its_last_private_name(
    module: str, home: str | None
) -> None:
    assert owner(module) == home


def test_an_exception_that_names_no_import_breaks_the_contract(project: Path) -> None:
    # The private-modules contract alone, with an exception for an import the copy makes and
    # a stale one.
    add_import(project, "citelab.cli.ask", "from citelab.models._types import Model  # noqa")
    contract = project / "pyproject.toml"
    contract.write_text(
        '[tool.importlinter]\nroot_package = "citelab"\n'
        'contract_types = ["private_modules: tests._import_contracts.PrivateModulesContract"]\n'
        '[[tool.importlinter.contracts]]\nname = "Private modules"\ntype = "private_modules"\n'
        'containers = ["citelab"]\nignore_imports = [\n'
        '  "citelab.cli.ask -> citelab.models._types",\n'
        '  "citelab.cli.eval -> citelab.evals.report._report",\n]\n',
        encoding="utf-8",
    )
    done = lint_imports(project)
    assert done.returncode == 1, done.stdout + done.stderr
    stale = "No such import to ignore: citelab.cli.eval -> citelab.evals.report._report"
    assert stale in done.stdout
    assert "citelab.cli.ask -> citelab.models._types (remove it)" not in done.stdout
    assert "citelab.cli.ask imports the private" not in done.stdout
