"""The front-end bundles the widgets load: built from ``js/`` into ``citelab/static``."""

from __future__ import annotations

from pathlib import Path

from citelab._errors import ConfigError

__all__ = ["STATIC_DIR", "bundle"]

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
"""Where the built front end lives inside the package."""


def bundle(name: str) -> str:
    """The text of one built file (``widget_chat.js``, ``citelab.css``...)."""
    path = STATIC_DIR / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(
            f"front-end bundle {name!r} is missing from {STATIC_DIR.name}/: "
            "rebuild it with `scripts/js.sh build`"
        ) from exc
