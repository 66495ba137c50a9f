"""The versions a run's ``run.json`` records (Python, platform and the packages that shape
the figures), in a module of its own so that ``citelab score`` need not import the runner."""

from __future__ import annotations

import importlib.metadata
import platform

__all__ = ["versions"]

_PACKAGES = ("citelab", "pydantic", "pandas", "numpy", "scipy", "matplotlib", "bm25s", "openai")


def versions() -> dict[str, str]:
    found = {"python": platform.python_version(), "platform": platform.platform(terse=True)}
    for package in _PACKAGES:
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found
