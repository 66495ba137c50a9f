"""TypeScript checks the front end's JSDoc types: pinned, strict, and clean (``js.sh types``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tsconfig() -> dict[str, object]:
    """``js/tsconfig.json`` (JSON with whole-line ``//`` comments, as TypeScript reads it)."""
    text = (ROOT / "js" / "tsconfig.json").read_text(encoding="utf-8")
    loaded: dict[str, object] = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))
    return loaded


def test_typescript_is_pinned_exactly_in_package_json_and_the_lock() -> None:
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    wanted = package["devDependencies"]["typescript"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", wanted), f"typescript {wanted!r} is not one exact version"
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"]["node_modules/typescript"]["version"] == wanted


def test_the_type_check_is_strict_over_every_source_folder() -> None:
    options = tsconfig()["compilerOptions"]
    assert isinstance(options, dict)
    assert options["checkJs"] is True
    assert options["strict"] is True
    assert options["noEmit"] is True
    folders = {path.name for path in (ROOT / "js").iterdir() if path.is_dir()}
    include = tsconfig()["include"]
    assert isinstance(include, list)
    assert set(include) == folders - {"tests", "bench"}


@pytest.mark.slow
def test_the_front_end_has_no_type_errors() -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm are not installed: cannot run TypeScript")
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "js.sh"), "types"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
