"""Rerankers reorder retrieved chunks before the entity cap; registered by name.

None is used by default. ``lexical`` (query-word overlap) is registered for tests and
ablations: it is deterministic and needs no model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from citelab._errors import ConfigError, InvalidInput
from citelab.sources._source import Source

__all__ = [
    "LexicalOverlapReranker",
    "Reranker",
    "get_reranker",
    "register_reranker",
    "reranker_names",
]

_WORD = re.compile(r"\w+")


class Reranker(Protocol):
    """Reorders candidate chunks for a query; may drop some, never invents new ones."""

    def rerank(self, query: str, sources: Sequence[Source]) -> list[Source]: ...


RerankerFactory = Callable[[], Reranker]

_REGISTRY: dict[str, RerankerFactory] = {}


class LexicalOverlapReranker:
    """Orders chunks by the share of query words they contain; ties keep their order."""

    def rerank(self, query: str, sources: Sequence[Source]) -> list[Source]:
        wanted = _words(query)
        if not wanted:
            return list(sources)
        overlap = [len(wanted & _words(source.content)) for source in sources]
        order = sorted(range(len(sources)), key=lambda i: -overlap[i])
        return [sources[i] for i in order]


def register_reranker(name: str, factory: RerankerFactory, *, replace: bool = False) -> None:
    """Make a reranker available to :class:`RetrievalSettings` under ``name``."""
    if not name.strip():
        raise InvalidInput("reranker name must not be blank")
    if name in _REGISTRY and not replace:
        raise InvalidInput(f"reranker {name!r} is already registered (pass replace=True)")
    _REGISTRY[name] = factory


def get_reranker(name: str) -> Reranker:
    """A new reranker registered under ``name``."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        known = ", ".join(reranker_names()) or "none"
        message = f"retrieval setting reranker: unknown {name!r} (known: {known})"
        raise ConfigError(message) from None
    return factory()


def reranker_names() -> list[str]:
    return sorted(_REGISTRY)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


register_reranker("lexical", LexicalOverlapReranker)
