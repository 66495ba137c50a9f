"""Render a source's content in a view mode: chunk, teaser, full or label."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from citelab._text import snippet
from citelab.sources._source import ViewMode

__all__ = ["label_line", "render_content"]

_TEASER_LENGTH = 300
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_LINE_BREAKS = re.compile(r"\s+")


def render_content(
    view_mode: ViewMode,
    *,
    chunks: Sequence[str],
    label: str,
    fields: Mapping[str, Any],
    body: str | None,
) -> str:
    """The content the model sees; the label line stands in whenever the mode renders nothing.

    ``body`` is the entity's text in the chosen language (``None`` without a corpus), in which
    case ``teaser`` and ``full`` fall back to the chunks.
    """
    matched = "\n\n".join(chunk for chunk in chunks if chunk.strip())
    text = ""
    if view_mode == "chunk":
        text = matched
    elif view_mode == "teaser":
        text = teaser(body if body else matched)
    elif view_mode == "full":
        text = body if body else matched
    return text if text.strip() else label_line(label, fields)


def teaser(text: str, limit: int = _TEASER_LENGTH) -> str:
    """The first non-empty paragraph of ``text``, on one line, at most ``limit`` characters."""
    for paragraph in _PARAGRAPH_BREAK.split(text):
        if paragraph.strip():
            return snippet(paragraph, limit)
    return ""


def label_line(label: str, fields: Mapping[str, Any]) -> str:
    """One line: the label, then every field value, so same-label entities stay distinguishable.

    Nested lists and objects contribute their scalar values; empty values are skipped.
    """
    parts = [_one_line(label)]
    for value in fields.values():
        parts.extend(_values(value))
    return " · ".join(part for part in parts if part)


def _values(value: Any) -> list[str]:
    if value is None or isinstance(value, bool):
        # A bare true/false says nothing without its field name.
        return []
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _values(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _values(item)]
    text = _one_line(str(value))
    return [text] if text else []


def _one_line(text: str) -> str:
    return _LINE_BREAKS.sub(" ", text).strip()
