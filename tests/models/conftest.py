"""Shared fixtures for the model tests: async tests run on asyncio through anyio's plugin."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"
