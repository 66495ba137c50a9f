"""Rerankers reorder retrieved chunks before the entity cap; registered by name
(:data:`RERANKERS`, a :class:`~citelab.Registry` of factories taking no arguments).

None is used by default. ``lexical`` (query-word overlap) is registered for tests and
ablations: it is deterministic and needs no model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from citelab._registry import Registry
from citelab.sources._source import Source

__all__ = [
    "RERANKERS",
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

RERANKERS: Registry[RerankerFactory] = Registry("reranker")
"""Every reranker by name: ``RERANKERS.build("lexical")`` is a new one."""


class LexicalOverlapReranker:
    """Orders chunks by the share of query words they contain; ties keep their order."""

    def rerank(self, query: str, sources: Sequence[Source]) -> list[Source]:
        wanted = _words(query)
        if not wanted:
            return list(sources)
        overlap = [len(wanted & _words(source.content)) for source in sources]
        order = sorted(range(len(sources)), key=lambda i: -overlap[i])
        return [sources[i] for i in order]


def register_reranker(
    name: str,
    factory: RerankerFactory | str,
    *,
    replace: bool = False,
    description: str | None = None,
) -> None:
    """Make a reranker available to :class:`RetrievalSettings` under ``name``:
    ``RERANKERS.register``."""
    RERANKERS.register(name, factory, replace=replace, description=description)


def get_reranker(name: str) -> Reranker:
    """A new reranker registered under ``name``: ``RERANKERS.build(name)``."""
    return RERANKERS.build(name)


def reranker_names() -> list[str]:
    """The registered names, sorted: ``RERANKERS.names()``."""
    return RERANKERS.names()


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


register_reranker("lexical", LexicalOverlapReranker)
