"""Fixtures for the real-browser tests: a private JupyterLab and Debian's chromium."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from citelab._browser import chromium_executable, launched_chromium

from ._lab import Lab, start_lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    pytest.importorskip("jupyterlab")
    running = start_lab(tmp_path_factory.mktemp("lab"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if chromium_executable() is None:
        pytest.skip("Debian's chromium is not on PATH: run scripts/ensure-chromium.sh")
    pytest.importorskip("playwright.sync_api")
    with launched_chromium(tmp_path_factory.mktemp("chromium")) as launched:
        yield launched
