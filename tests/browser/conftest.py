"""Fixtures for the JupyterLab tests (chromium comes from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._lab import Lab, start_lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    pytest.importorskip("jupyterlab")
    running = start_lab(tmp_path_factory.mktemp("lab"))
    yield running
    running.stop()
