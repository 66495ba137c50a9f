from pathlib import Path

import pytest

CORPORA = Path(__file__).resolve().parents[2] / "fixtures" / "corpora"


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """The directory of the fixture corpora (read them; never write next to them in tests)."""
    return CORPORA
