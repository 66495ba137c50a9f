"""The committed front-end bundle equals a fresh build of ``js/`` (byte for byte)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "citelab" / "static"


def test_bundle_files_are_committed() -> None:
    names = {path.name for path in STATIC.iterdir()}
    assert {
        "widget_chat.js",
        "widget_sources.js",
        "widget_message.js",
        "widget_label.js",
        "page.js",
        "report.js",
        "citelab.css",
    } <= names


def test_widget_bundles_export_initialize_and_render() -> None:
    for name in ("widget_chat.js", "widget_sources.js", "widget_message.js", "widget_label.js"):
        text = (STATIC / name).read_text(encoding="utf-8")
        assert "export{" in text.replace(" ", ""), name
    assert "mountPage" in (STATIC / "page.js").read_text(encoding="utf-8")
    assert "data-citelab-cases" in (STATIC / "report.js").read_text(encoding="utf-8")


@pytest.mark.slow
def test_committed_bundle_matches_a_fresh_build() -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm are not installed: cannot rebuild the front end to compare")
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "js.sh"), "check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "matches a fresh build" in result.stdout
