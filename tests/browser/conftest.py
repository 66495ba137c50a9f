"""The real-browser tests' two expensive parts, each started once per test session: Debian's
headless chromium (through Playwright) and a private JupyterLab. Every test that asks for
either is marked ``browser`` (``lab``: ``notebook`` too) by ``tests/conftest.py`` and kept in
one xdist group, so one worker runs them all against the one browser and the one server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browser._chromium import chromium_executable, launched_chromium
from browser._lab import Lab, start_lab


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's headless chromium through Playwright (skips when it is not installed)."""
    if chromium_executable() is None:
        pytest.skip("Debian's chromium is not on PATH: run scripts/ensure-chromium.sh")
    pytest.importorskip("playwright.sync_api")
    with launched_chromium(tmp_path_factory.mktemp("chromium")) as launched:
        yield launched


@pytest.fixture(scope="session")
def running_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """The session's JupyterLab on loopback (see ``_lab.py``), stopped when the tests end."""
    pytest.importorskip("jupyterlab")
    running = start_lab(tmp_path_factory.mktemp("lab"))
    yield running
    running.stop()


@pytest.fixture
def lab(running_lab: Lab) -> Iterator[Lab]:
    """The session's JupyterLab, its kernels shut down after the test (the next test's
    notebook opens in a workspace of its own, see :meth:`Lab.notebook_url`)."""
    yield running_lab
    running_lab.stop_kernels()
