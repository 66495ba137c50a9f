"""Text cut to fit one line: a source's snippet in the references, an MCP resource's
description."""

from __future__ import annotations

import re

__all__ = ["SNIPPET_LENGTH", "snippet"]

SNIPPET_LENGTH = 240
_WHITESPACE = re.compile(r"\s+")


def snippet(text: str, limit: int = SNIPPET_LENGTH) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters."""
    flat = _WHITESPACE.sub(" ", text).strip()
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"
