"""``rag_search`` over an agent's corpus, outside any answer: what the MCP ``search`` tool runs.

Each agent's corpus and index are built once, on first use, in a worker thread (building an
index is CPU work). Results are access-filtered inside ``RagSearch.run`` for the reader given,
so a passage the reader may not read never leaves this module.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from citelab._errors import Conflict, NotFound
from citelab.agent import AgentConfig, resolve_corpus_path
from citelab.corpus import Corpus, Document, Reader, load_corpus
from citelab.retrieval import RagResult, RagSearch, SearchIndex

__all__ = ["CorpusSearch", "SearchResults", "entity_markdown"]


class SearchResults(BaseModel):
    """What the ``search`` tool returns: ``rag_search``'s structured output."""

    model_config = ConfigDict(extra="forbid")

    results: list[RagResult]
    """Passages the reader may read, best first."""


class CorpusSearch:
    """``rag_search`` per agent, built lazily and shared between calls."""

    def __init__(self, agents: Mapping[str, AgentConfig]) -> None:
        self._agents = agents
        self._corpora: dict[str, Corpus] = {}
        self._tools: dict[str, RagSearch] = {}
        self._lock = threading.Lock()

    async def search(
        self, agent: str, query: str, reader: Reader, max_results: int | None = None
    ) -> SearchResults:
        """The passages of ``agent``'s corpus that match ``query`` and ``reader`` may read."""
        tool = await asyncio.to_thread(self._tool, self._config(agent))
        arguments: dict[str, Any] = {"query": query}
        if max_results is not None:
            arguments["max_results"] = max_results
        output = await asyncio.to_thread(tool.run, arguments, reader)
        return SearchResults.model_validate(output)

    async def document(
        self, entity_type: str, entity_id: str, reader: Reader, agents: list[str]
    ) -> Document:
        """The entity from the first of ``agents``' corpora that holds it and lets ``reader``
        read it; :class:`NotFound` otherwise (a document the reader may not read does not
        exist for them)."""
        for name in agents:
            config = self._agents.get(name)
            if config is None:
                continue
            corpus = await asyncio.to_thread(self._corpus_of, config.corpus)
            document = corpus.get(entity_type, entity_id)
            if document is not None and document.readable_by(reader):
                return document
        raise NotFound(f"entity:{entity_type}/{entity_id} not found")

    async def readable(self, reader: Reader, agents: list[str]) -> list[Document]:
        """Every entity ``reader`` may read, in the order :meth:`document` looks (``agents``'
        corpora in turn, each corpus once), an entity held by two corpora once: the one
        :meth:`document` serves."""
        seen: set[str] = set()
        found: list[Document] = []
        for name in dict.fromkeys(self._agents[a].corpus for a in agents if a in self._agents):
            corpus = await asyncio.to_thread(self._corpus_of, name)
            for document in corpus:
                if document.uri not in seen and document.readable_by(reader):
                    seen.add(document.uri)
                    found.append(document)
        return found

    def _corpus_of(self, name: str) -> Corpus:
        with self._lock:
            return self._corpus(name)

    def _config(self, agent: str) -> AgentConfig:
        config = self._agents.get(agent)
        if config is None:
            raise NotFound(f"agent {agent!r} not found")
        if config.retrieval is None:
            raise Conflict(f"agent {agent!r} has no retrieval settings: it cannot search")
        return config

    def _tool(self, config: AgentConfig) -> RagSearch:
        with self._lock:
            tool = self._tools.get(config.name)
            if tool is None:
                assert config.retrieval is not None  # _config refused agents without it
                index = SearchIndex.open(self._corpus(config.corpus))
                tool = RagSearch(index, default_max_results=config.retrieval.max_results)
                self._tools[config.name] = tool
            return tool

    def _corpus(self, name: str) -> Corpus:
        if name not in self._corpora:
            self._corpora[name] = load_corpus(resolve_corpus_path(name))
        return self._corpora[name]


def entity_markdown(document: Document, langcode: str) -> str:
    """The document as the Markdown an ``entity:`` resource serves: its title, its fields and
    its text, in ``langcode`` when it has that translation (else its default language).
    Titles and texts are the corpus's own (untrusted): clients render them as Markdown."""
    _, translation = document.translation(langcode)
    lines = [f"# {translation.title}", ""]
    fields = [f"- {name}: {value}" for name, value in document.fields.items()]
    if fields:
        lines += [*fields, ""]
    if translation.url:
        lines += [f"<{translation.url}>", ""]
    lines.append(translation.content)
    return "\n".join(lines).rstrip() + "\n"
