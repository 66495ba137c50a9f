"""Server-Sent Events as serve-model writes them for the three vendor APIs it emulates.

One event is an optional ``event:`` line, one ``data:`` line of compact JSON (or a sentinel
such as ``[DONE]``) and a blank line. The events are written as text, rather than through
sse-starlette as the answer server does, because serve-model joins the events that are ready
at once into one write (``serve/_server.py``, ``_coalesced``).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["compact_json", "sse_event"]


def compact_json(value: Any) -> str:
    """``value`` as the vendors' streams write JSON: no spaces, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sse_event(data: str, event: str | None = None) -> str:
    """One event: ``event: <event>`` when named, then ``data: <data>`` and a blank line
    (``data`` must be one line, as compact JSON is)."""
    return f"event: {event}\ndata: {data}\n\n" if event else f"data: {data}\n\n"
