"""Where citelab finds its bundled fixtures and where it keeps caches.

``fixtures_dir()`` prefers the copy shipped inside the installed package
(``citelab/_fixtures``, mapped from the repository's ``fixtures/`` when the wheel is built)
and falls back to the repository checkout, so an editable install and a wheel behave alike.
``cache_dir()`` is where indexes and databases go when a corpus folder is not writable.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_dir", "fixtures_dir", "suites_dir"]

CACHE_ENV = "CITELAB_CACHE_DIR"
"""Environment variable that overrides :func:`cache_dir`."""

_PACKAGE_DIR = Path(__file__).resolve().parent


def fixtures_dir() -> Path:
    """The fixtures folder: the packaged copy if present, else the repository's ``fixtures/``."""
    packaged = _PACKAGE_DIR / "_fixtures"
    if packaged.is_dir():
        return packaged
    # src/citelab/_paths.py -> the repository root is two folders above the package.
    return _PACKAGE_DIR.parent.parent / "fixtures"


def suites_dir() -> Path:
    """The bundled evaluation suites: the packaged copy if present, else the repository's."""
    packaged = _PACKAGE_DIR / "_suites"
    if packaged.is_dir():
        return packaged
    return _PACKAGE_DIR.parent.parent / "evaluations" / "suites"


def cache_dir() -> Path:
    """The cache folder (created on first use).

    ``$CITELAB_CACHE_DIR`` if set, else the platform's user cache folder via ``platformdirs``
    when it is installed, else ``~/.cache/citelab``.
    """
    override = os.environ.get(CACHE_ENV)
    path = Path(override).expanduser() if override else _platform_cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _platform_cache_dir() -> Path:
    try:
        import platformdirs
    except ImportError:
        return Path.home() / ".cache" / "citelab"
    return Path(platformdirs.user_cache_dir("citelab", appauthor=False))
