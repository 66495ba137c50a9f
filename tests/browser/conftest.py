"""Fixtures for the real-browser tests: a private JupyterLab and Debian's chromium."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from ._lab import Lab, start_lab

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    pytest.importorskip("jupyterlab")
    running = start_lab(tmp_path_factory.mktemp("lab"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("Debian's chromium is not on PATH: run scripts/ensure-chromium.sh")
    sync_api = pytest.importorskip("playwright.sync_api")
    home = tmp_path_factory.mktemp("chromium")
    env = {**os.environ, "XDG_CONFIG_HOME": str(home), "TMPDIR": str(home)}
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS, env=env
        )
        yield launched
        launched.close()
