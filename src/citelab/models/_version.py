"""Code versions of citelab's own models, so a cache of their answers forgets stale ones.

A model that answers without a vendor (:class:`~citelab.models.ExtractiveModel`,
:class:`~citelab.models.ScriptedModel`, :class:`~citelab.models.PerturbedModel`) answers what
its code says: when that code changes, an answer recorded before may be wrong.
:class:`~citelab.evals.CachedModel` therefore puts a model's ``code_version`` into its keys.

:func:`source_version` computes one from source: the module that defines the model and every
citelab module it imports, followed to where each imported name is defined (``from
citelab.models import X`` counts the module defining ``X``, not the whole package). Imports
under ``if TYPE_CHECKING:`` are left out (they never run). Each module counts as its syntax
tree without docstrings, comments or layout, so editing prose or reformatting changes no key;
modules the model never imports (the vendor adapters, the server, the CLI) are not in it at
all. The Python version is part of it too: the standard library (``re``, ``unicodedata``) and
the normalized source may differ between versions. Computed once per process.

Citelab's models read no data files (their word lists are code); a model that did would have
to add their bytes here.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from citelab._errors import InvalidInput

__all__ = ["code_version_of", "module_closure", "source_version"]


def code_version_of(model: Any) -> str | None:
    """What ``model`` declares as ``code_version`` — a string, or a method taking no arguments
    that returns one — or ``None`` when it declares none (vendor adapters, most user models).

    An :class:`~citelab.InvalidInput` names the model when the declaration is not a non-empty
    string."""
    declared = getattr(model, "code_version", None)
    if callable(declared):
        declared = declared()
    if declared is None:
        return None
    if not isinstance(declared, str) or not declared:
        name = getattr(model, "name", type(model).__name__)
        raise InvalidInput(
            f"model {name!r}: code_version must be a non-empty string (or a method returning "
            f"one), got {declared!r}"
        )
    return declared


def source_version(*modules: str) -> str:
    """A short hex digest of the code of ``modules`` (names, as in ``__name__``) and of the
    modules of their own top-level packages they import; see the module docs. The same code
    gives the same version in every process (and on every machine with the same Python minor
    version). A user model may declare ``code_version = source_version(__name__)``.

    An :class:`ImportError` names a module whose Python source cannot be found."""
    return _source_version(tuple(sorted(set(modules))))


@functools.cache
def _source_version(modules: tuple[str, ...]) -> str:
    digest = hashlib.sha256(f"python {sys.version_info[0]}.{sys.version_info[1]}\n".encode())
    for name in module_closure(*modules):
        digest.update(f"\0{name}\0".encode())
        digest.update(_normalized(name).encode())
    return digest.hexdigest()[:16]


def module_closure(*modules: str) -> list[str]:
    """``modules`` and every module of their top-level packages (``citelab`` for citelab's
    models) they import at run time, directly or not, sorted by name."""
    roots = frozenset(name.partition(".")[0] for name in modules)
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_imported(name, roots))
    return sorted(seen)


@functools.cache
def _source(name: str) -> str:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        raise ImportError(f"code version: no Python source for module {name!r}")
    return Path(spec.origin).read_text(encoding="utf-8")


def _is_package(name: str) -> bool:
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.submodule_search_locations is not None


def _imported(name: str, roots: frozenset[str]) -> set[str]:
    """The modules under ``roots`` that ``name`` imports at run time, each imported name
    followed to the module that defines it."""
    found: set[str] = set()
    for node in _runtime_imports(name):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if _under(alias.name, roots))
        else:
            base = _absolute(node, name)
            if _under(base, roots):
                for alias in node.names:
                    found.add(_defining_module(base, alias.name, roots, frozenset()))
    return found


@functools.cache
def _runtime_imports(name: str) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of module ``name``, at any depth, but those under ``if
    TYPE_CHECKING:`` (never run)."""
    imports: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.AST] = [ast.parse(_source(name))]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(node)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
        else:  # statements hold imports; expressions never do
            todo.extend(
                child
                for child in ast.iter_child_nodes(node)
                if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case)
            )
    return imports


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _absolute(node: ast.ImportFrom, importer: str) -> str:
    if not node.level:
        return node.module or ""
    package = importer if _is_package(importer) else importer.rpartition(".")[0]
    return importlib.util.resolve_name("." * node.level + (node.module or ""), package)


def _defining_module(
    module: str, attr: str, roots: frozenset[str], visiting: frozenset[str]
) -> str:
    """The module ``from module import attr`` really reads: a submodule of that name, or the
    module a package re-exports ``attr`` from (followed), else ``module`` itself."""
    submodule = f"{module}.{attr}"
    if _is_package(module) and importlib.util.find_spec(submodule) is not None:
        return submodule
    if module in visiting:
        return module
    for node in _runtime_imports(module):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node, module)
            for alias in node.names:
                if (alias.asname or alias.name) == attr and _under(source, roots):
                    return _defining_module(source, alias.name, roots, visiting | {module})
    return module


def _under(name: str, roots: frozenset[str]) -> bool:
    return name.partition(".")[0] in roots


def _normalized(name: str) -> str:
    """The module's code without docstrings, comments or layout."""
    tree = ast.parse(_source(name))
    todo: list[ast.AST] = [tree]
    while todo:  # statements only: bare strings stand among statements, never in expressions
        node = todo.pop()
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            node.body = [stmt for stmt in node.body if not _is_prose(stmt)] or [ast.Pass()]
        todo.extend(
            child
            for child in ast.iter_child_nodes(node)
            if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case)
        )
    return ast.unparse(tree)


def _is_prose(stmt: ast.AST) -> bool:
    """A bare string statement: a docstring, or the documentation of an attribute."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
