"""Fixtures shared by every test package."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browser._chromium import chromium_executable, launched_chromium
from browser._lab import Lab, start_lab


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's headless chromium through Playwright (skips when it is not installed)."""
    if chromium_executable() is None:
        pytest.skip("Debian's chromium is not on PATH: run scripts/ensure-chromium.sh")
    pytest.importorskip("playwright.sync_api")
    with launched_chromium(tmp_path_factory.mktemp("chromium")) as launched:
        yield launched


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A private JupyterLab on loopback (see tests/browser/_lab.py), one per test module."""
    pytest.importorskip("jupyterlab")
    running = start_lab(tmp_path_factory.mktemp("lab"))
    yield running
    running.stop()
