"""citelab's public names, read from the modules themselves, and the error tree.

Every public module (no ``_`` in its dotted name) with an ``__all__`` is checked against its
own source, so no test keeps a copy of a list: the names are unique, in the order ruff's
RUF022 keeps, each one is there (``getattr`` works, lazy names included) and is citelab's own
class or function, and a package leaves out no public name it defines, loads lazily or
re-exports from its own modules.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from types import ModuleType
from typing import Any

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
from citelab._lazy import lazy_attributes

PUBLIC_MODULES = [
    "citelab",
    *sorted(
        info.name
        for info in pkgutil.walk_packages(citelab.__path__, "citelab.")
        if not any(part.startswith("_") for part in info.name.split("."))
    ),
]
KNOWN_BROKEN: dict[str, str] = {}
"""Modules whose list is wrong today (strict xfail: fixing one makes its test fail here, so
the entry goes with the fix)."""


def _modules() -> list[Any]:
    return [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BROKEN[name]))
        if name in KNOWN_BROKEN
        else name
        for name in PUBLIC_MODULES
    ]


def ruff_order(name: str) -> tuple[int, list[str | int]]:
    """RUF022's isort-style order: SCREAMING_CASE, then CamelCase, then the rest, each in
    natural order (``utf8`` before ``utf16``)."""
    group = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    parts = re.split(r"(\d+)", name)
    return group, [int(part) if index % 2 else part for index, part in enumerate(parts)]


def unresolved(module: ModuleType) -> list[str]:
    """The names of ``__all__`` the module cannot give (``from module import *`` fails)."""
    missing = []
    for name in module.__all__:
        try:
            getattr(module, name)
        except AttributeError:
            missing.append(name)
    return missing


def foreign(module: ModuleType) -> list[str]:
    """Exported classes and functions that citelab does not define (a stray ``Path``)."""
    found = []
    for name in module.__all__:
        value = getattr(module, name, None)
        own = inspect.isclass(value) or inspect.isfunction(value)
        home = getattr(value, "__module__", "") if own else "citelab"
        if not home.startswith("citelab"):
            found.append(f"{name} (from {home})")
    return found


def left_out(module: ModuleType) -> list[str]:
    """Public names a package defines, loads lazily or re-exports from its own modules that
    its ``__all__`` does not list (a plain module may keep public helpers out of it)."""
    if not hasattr(module, "__path__"):
        return []
    tree = ast.parse(inspect.getsource(module))
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    offered = set(getattr(module, "_LAZY", None) or ())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            offered.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            offered.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.ImportFrom) and _own(node, module.__name__):
            # A name imported for the package's own use (a registration call) is no export.
            offered.update(
                a.asname or a.name for a in node.names if (a.asname or a.name) not in read
            )
    missing = {name for name in offered if not name.startswith("_")} - set(module.__all__)
    return sorted(name for name in missing if not _machinery(vars(module).get(name)))


def _own(node: ast.ImportFrom, package: str) -> bool:
    return node.level > 0 or (node.module or "").startswith(package + ".")


def _machinery(value: Any) -> bool:
    """The PEP 562 hook builder of a lazy package, or a submodule: not names a user imports."""
    return value is lazy_attributes or isinstance(value, ModuleType)


@pytest.mark.parametrize("name", _modules())
def test_all_lists_every_public_name_once_in_ruff_order_and_each_exists(name: str) -> None:
    module = importlib.import_module(name)
    if not hasattr(module, "__all__"):
        pytest.skip(f"{name} has no __all__")
    names = list(module.__all__)
    assert len(names) == len(set(names)), (
        f"{name}: repeated {sorted(n for n in names if names.count(n) > 1)}"
    )
    assert names == sorted(names, key=ruff_order), f"{name}: not in RUF022 order"
    assert unresolved(module) == [], f"{name}: __all__ names what the module does not define"
    assert foreign(module) == [], f"{name}: exports objects from outside citelab"
    assert left_out(module) == [], f"{name}: public names missing from __all__"


def test_the_checks_catch_a_wrong_list() -> None:
    fake = ModuleType("citelab.fake")
    exec(  # a module written here, to show that each check can fail
        "from pathlib import Path\nLIMIT = 3\ndef shown(): pass\ndef hidden(): pass\n",
        fake.__dict__,
    )
    fake.__all__ = ["shown", "LIMIT", "gone", "Path"]
    assert sorted(fake.__all__, key=ruff_order) != fake.__all__
    assert unresolved(fake) == ["gone"]
    assert foreign(fake) == ["Path (from pathlib)"]
    fake.__all__, fake.__path__ = ["LIMIT", "shown"], []
    source = "LIMIT = 3\ndef shown(): pass\ndef hidden(): pass\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inspect, "getsource", lambda _: source)
        assert left_out(fake) == ["hidden"]


def test_every_public_package_is_checked() -> None:
    for name in ("citelab.evals", "citelab.contract.convert", "citelab.widget", "citelab.server"):
        assert name in PUBLIC_MODULES


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


def test_citelab_evals_keeps_at_most_80_names_at_the_top() -> None:
    import citelab.evals

    assert len(citelab.evals.__all__) <= 80, len(citelab.evals.__all__)
