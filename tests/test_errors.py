import pytest

import citelab
from citelab import CitelabError, Conflict, InvalidInput, NotFound


def test_public_names_are_sorted_and_exported() -> None:
    assert citelab.__all__ == sorted(citelab.__all__)
    for name in citelab.__all__:
        assert hasattr(citelab, name), name


@pytest.mark.parametrize(
    ("error", "status"), [(InvalidInput, 400), (NotFound, 404), (Conflict, 409)]
)
def test_errors_share_one_root_and_map_to_http(error: type[CitelabError], status: int) -> None:
    assert issubclass(error, CitelabError)
    assert error.http_status == status


def test_missing_dependency_names_the_install_command() -> None:
    exc = citelab.MissingDependency("langfuse", "Scoring Langfuse traces", extra="langfuse")
    assert "pip install 'citelab[langfuse]'" in str(exc)
