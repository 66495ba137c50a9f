"""What an agent needs at run time: its corpus, search index, tools and model, built once.

Corpora and indexes are shared between agents that name the same corpus. Building an index
is CPU work, so it runs in a worker thread, under a lock so that concurrent first answers
build it once. An index is persisted next to its corpus file when that folder is writable,
else under the cache folder (``citelab._paths.cache_dir``), or under ``index_dir`` when given.
An index given already built (``indexes``, by corpus name) is searched as it is: the runner
gives every service that answers one evaluation case from its own documents that case's one
index, whichever variant and model ask.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from citelab._errors import ConfigError, InvalidInput
from citelab._paths import cache_dir
from citelab.agent import AgentConfig, SourceToolConfig, resolve_corpus_path
from citelab.corpus import Corpus, load_corpus
from citelab.models import Model, get_model
from citelab.retrieval import ListingTool, RagSearch, SearchIndex, SourceTool

__all__ = ["AgentRuntime", "Runtimes"]


@dataclass(frozen=True)
class AgentRuntime:
    """One agent's corpus, tools (rag_search first) and model."""

    config: AgentConfig
    corpus: Corpus
    tools: dict[str, SourceTool]
    model: Model


class Runtimes:
    """Builds and caches :class:`AgentRuntime` objects."""

    def __init__(
        self,
        *,
        models: Mapping[str, Model] | None = None,
        corpora: Mapping[str, Corpus] | None = None,
        index_dir: str | Path | None = None,
        indexes: Mapping[str, SearchIndex] | None = None,
    ) -> None:
        self._models = dict(models or {})
        self._corpora: dict[str, Corpus] = dict(corpora or {})
        self._index_dir = Path(index_dir) if index_dir is not None else None
        self._indexes: dict[int, SearchIndex] = {}
        for name, index in (indexes or {}).items():
            given = self._corpora.setdefault(name, index.corpus)
            if given is not index.corpus:
                raise ConfigError(f"the index given for corpus {name!r} indexes another corpus")
            self._indexes[id(given)] = index
        self._runtimes: dict[str, AgentRuntime] = {}
        self._lock = threading.Lock()

    async def get(self, config: AgentConfig) -> AgentRuntime:
        """The runtime for ``config`` (rebuilt when the agent's configuration changed)."""
        cached = self._runtimes.get(config.name)
        if cached is not None and cached.config == config:
            return cached
        return await asyncio.to_thread(self._build, config)

    async def aclose(self) -> None:
        """Close the models built here (not the ones given in ``models``)."""
        with self._lock:
            built = [r.model for r in self._runtimes.values() if r.model not in self._given()]
            self._runtimes.clear()
        for model in built:
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()

    def _given(self) -> list[Model]:
        return list(self._models.values())

    def _build(self, config: AgentConfig) -> AgentRuntime:
        with self._lock:
            cached = self._runtimes.get(config.name)
            if cached is not None and cached.config == config:
                return cached
            corpus = self._corpus(config.corpus)
            runtime = AgentRuntime(
                config=config,
                corpus=corpus,
                tools=self._tools(config, corpus),
                model=self._model(config),
            )
            self._runtimes[config.name] = runtime
            return runtime

    def corpus(self, name: str) -> Corpus:
        """The corpus an agent names, loaded once (see :meth:`_corpus`)."""
        with self._lock:
            return self._corpus(name)

    def _corpus(self, name: str) -> Corpus:
        """A malformed corpus file is the server's configuration, not the asker's input: a
        :class:`ConfigError` (its message names the file; transports never show it to a
        web user, see :mod:`citelab.server._problems`)."""
        if name not in self._corpora:
            try:
                self._corpora[name] = load_corpus(resolve_corpus_path(name))
            except InvalidInput as exc:
                raise ConfigError(str(exc)) from exc
        return self._corpora[name]

    def _index(self, corpus: Corpus) -> SearchIndex:
        key = id(corpus)
        if key not in self._indexes:
            self._indexes[key] = SearchIndex.open(corpus, directory=self._index_location(corpus))
        return self._indexes[key]

    def _index_location(self, corpus: Corpus) -> Path | None:
        if corpus.path is None:
            return self._index_dir / f"{corpus.name}.index" if self._index_dir else None
        digest = hashlib.sha256(str(corpus.path.resolve()).encode()).hexdigest()[:12]
        if self._index_dir is not None:
            return self._index_dir / f"{corpus.name}-{digest}.index"
        if os.access(corpus.path.parent, os.W_OK):
            return None  # the index's own default: next to the corpus file
        return cache_dir() / "indexes" / f"{corpus.name}-{digest}.index"

    def _tools(self, config: AgentConfig, corpus: Corpus) -> dict[str, SourceTool]:
        tools: dict[str, SourceTool] = {}
        if config.retrieval is not None:
            search = RagSearch(
                self._index(corpus), default_max_results=config.retrieval.max_results
            )
            tools[search.name] = search
        for tool_config in config.source_tools:
            tools[tool_config.name] = _listing(tool_config, corpus)
        return tools

    def _model(self, config: AgentConfig) -> Model:
        if config.model in self._models:
            return self._models[config.model]
        return get_model(config.model, **config.model_options)


def _listing(config: SourceToolConfig, corpus: Corpus) -> ListingTool:
    return ListingTool(
        config.name,
        config.description,
        corpus,
        config.filter_fields,
        config.shape,
        config.max_results,
        entity_type=config.entity_type,
    )
