"""Scoring traces: a tiny interface so feedback can reach Langfuse, and tests need no server.

Langfuse is optional (``pip install 'citelab[langfuse]'``) and imported only when its
environment variables are set (``LANGFUSE_PUBLIC_KEY`` and ``LANGFUSE_SECRET_KEY``, plus
``LANGFUSE_HOST`` / ``LANGFUSE_BASE_URL`` for a self-hosted server, read by the SDK itself).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Protocol

from citelab._errors import MissingDependency

__all__ = ["LangfuseScorer", "TraceScorer", "trace_scorer_from_env"]

_KEYS = ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY")


class TraceScorer(Protocol):
    """Attach a score to a trace in a tracing backend. Blocking; called off the event loop."""

    def score(self, trace_id: str, *, name: str, value: float, comment: str | None) -> None: ...


class LangfuseScorer:
    """Scores traces through a Langfuse client (SDK v3 ``create_score`` or v2 ``score``)."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def score(self, trace_id: str, *, name: str, value: float, comment: str | None) -> None:
        create = getattr(self._client, "create_score", None) or self._client.score
        create(trace_id=trace_id, name=name, value=value, comment=comment)
        flush = getattr(self._client, "flush", None)
        if callable(flush):
            flush()  # feedback is rare and must not be lost when a script exits


def trace_scorer_from_env(env: Mapping[str, str] | None = None) -> TraceScorer | None:
    """A Langfuse scorer when Langfuse is configured in ``env``, else ``None``.

    Raises :class:`MissingDependency` when it is configured but the package is absent.
    """
    env = os.environ if env is None else env
    if not all(env.get(key) for key in _KEYS):
        return None
    try:
        from langfuse import Langfuse
    except ImportError as exc:
        raise MissingDependency("langfuse", "Scoring Langfuse traces", extra="langfuse") from exc
    return LangfuseScorer(Langfuse())
