"""Code versions of models whose answers come from code, so a cache of their answers can tell
answers of other code apart.

A model that answers without a vendor (:class:`~citelab.models.ExtractiveModel`,
:class:`~citelab.models.ScriptedModel`, :class:`~citelab.models.PerturbedModel`) answers what
its code says. It declares a ``code_version``, and :class:`~citelab.evals.runner.CachedModel` puts
that into its keys, so answers recorded by another release are not replayed.

citelab's models declare :func:`source_version` of their module: the module's name and the
version of the installed package it comes from, e.g. ``citelab.models.offline._extractive (citelab
0.1.0)``. Plain on purpose: a new release changes it, and nothing else does. Code edited in
place without a new version (a checkout under development) keeps its version: clear the
cache then (see :class:`~citelab.evals.runner.CachedModel`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from importlib import metadata
from typing import Any

from citelab._errors import InvalidInput

__all__ = ["code_version_of", "source_version"]


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
    """``modules`` (names, as in ``__name__``), each with the installed version of the package
    it comes from: ``"citelab.models.offline._extractive (citelab 0.1.0)"``, several joined
    by ``", "``.
    A user model in an installed package may declare ``code_version = source_version(__name__)``.

    An :class:`~citelab.InvalidInput` says when no installed package provides a module (a
    script, a notebook): declare ``code_version`` as a string of your own then, and change it
    when the model's answers change."""
    return ", ".join(f"{name} ({_package_version(name)})" for name in sorted(set(modules)))


@functools.cache
def _package_version(module: str) -> str:
    """``"<distribution> <version>"`` of the installed distribution providing ``module``."""
    top = module.partition(".")[0]
    for distribution in _distributions(top):
        try:
            return f"{distribution} {metadata.version(distribution)}"
        except metadata.PackageNotFoundError:
            continue
    raise InvalidInput(
        f"code version: no installed package provides module {module!r}; declare the "
        "model's code_version as a string of your own (change it when its answers change)"
    )


def _distributions(package: str) -> Iterator[str]:
    """Where to look for ``package``'s version: a distribution of the same name (citelab's
    case), then those the installed metadata say provide it (read only when needed)."""
    yield package
    yield from metadata.packages_distributions().get(package, [])
