"""Source processing: tool rows → numbered sources → finalized citations → anchors.

- :func:`process_results` / :func:`process_listed` turn rag_search rows and listing-tool
  output into :class:`Source` objects (gate, rerank, entity cap, one source per entity,
  language choice, access re-check, view mode).
- :func:`merge_round` numbers each tool-call round's sources onto what the turn holds
  (:func:`replace_round` is the ablation that reproduces the stale-number bug).
- :func:`parse_markers` reads the ``[n]`` citation grammar; :func:`finalize_citations` drops
  uncited sources, renumbers by first citation and rewrites the text;
  :func:`build_anchors` makes the ``_meta`` citation anchors, :func:`source_quotes` the
  source-side passage of each.
- :func:`sources_block` writes numbered sources into prompts and tool messages.
"""

from citelab.contract import MAX_GROUP_NUMBERS, Marker, parse_markers
from citelab.sources._anchors import build_anchors, source_quotes
from citelab.sources._block import (
    BlockSource,
    NumberedSource,
    parse_sources_block,
    render_sources_block,
)
from citelab.sources._finalize import DanglingCitation, FinalizedAnswer, finalize_citations
from citelab.sources._merge import (
    MERGE_STRATEGIES,
    MergeStrategy,
    merge_round,
    numbered_round,
    replace_round,
)
from citelab.sources._process import listed_summary, process_listed, process_results
from citelab.sources._rerank import (
    RERANKERS,
    LexicalOverlapReranker,
    Reranker,
    get_reranker,
    register_reranker,
    reranker_names,
)
from citelab.sources._source import (
    ReferenceKey,
    RetrievalSettings,
    Source,
    ViewMode,
    sources_block,
)
from citelab.sources._support import supporting_span

__all__ = [
    "MAX_GROUP_NUMBERS",
    "MERGE_STRATEGIES",
    "RERANKERS",
    "BlockSource",
    "DanglingCitation",
    "FinalizedAnswer",
    "LexicalOverlapReranker",
    "Marker",
    "MergeStrategy",
    "NumberedSource",
    "ReferenceKey",
    "Reranker",
    "RetrievalSettings",
    "Source",
    "ViewMode",
    "build_anchors",
    "finalize_citations",
    "get_reranker",
    "listed_summary",
    "merge_round",
    "numbered_round",
    "parse_markers",
    "parse_sources_block",
    "process_listed",
    "process_results",
    "register_reranker",
    "render_sources_block",
    "replace_round",
    "reranker_names",
    "source_quotes",
    "sources_block",
    "supporting_span",
]
