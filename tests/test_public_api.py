import subprocess
import sys

import pytest

import citelab
from citelab import (
    CitelabError,
    Conflict,
    InvalidInput,
    ModelError,
    ModelTimeout,
    ModelUnavailable,
    NotFound,
    Unavailable,
    WorkerLost,
)


def test_public_names_are_sorted_and_exported() -> None:
    assert citelab.__all__ == sorted(citelab.__all__)
    for name in citelab.__all__:
        assert getattr(citelab, name) is not None, name


def test_lazy_names_are_the_subpackages_own_objects() -> None:
    from citelab.contract import AnswerMessage
    from citelab.sources import finalize_citations

    assert citelab.AnswerMessage is AnswerMessage
    assert citelab.finalize_citations is finalize_citations


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = citelab.nope  # type: ignore[attr-defined]


def test_import_citelab_does_not_import_the_heavy_parts() -> None:
    code = "import sys, citelab; print(sorted(m for m in sys.modules if m.startswith('citelab.')))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "citelab.widget" not in out
    assert "citelab.answers" not in out


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (InvalidInput, 400),
        (NotFound, 404),
        (Conflict, 409),
        (ModelError, 502),
        (Unavailable, 503),
        (ModelUnavailable, 503),
        (ModelTimeout, 504),
    ],
)
def test_errors_share_one_root_and_map_to_http(error: type[CitelabError], status: int) -> None:
    assert issubclass(error, CitelabError)
    assert error.http_status == status


def test_a_lost_worker_is_in_the_error_tree() -> None:
    assert issubclass(WorkerLost, CitelabError)
    assert (WorkerLost.code, WorkerLost.http_status) == ("worker_lost", 500)
    assert "WorkerLost" in citelab._errors.__doc__  # drawn in the tree


def test_missing_dependency_names_the_install_command() -> None:
    exc = citelab.MissingDependency("langfuse", "Scoring Langfuse traces", extra="langfuse")
    assert "pip install 'citelab[langfuse]'" in str(exc)
