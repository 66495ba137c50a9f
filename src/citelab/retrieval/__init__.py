"""Retrieval: a persisted BM25 index over corpus chunks, and the tools that return sources.

``SearchIndex`` ranks chunks for a reader (what they may not read is never ranked);
``RagSearch`` is the ``rag_search`` tool the model calls; ``ListingTool`` is a configured
source tool listing every entity whose fields match. Both follow ``SourceTool``.
"""

from citelab.retrieval._index import (
    INDEX_FORMAT_VERSION,
    SearchHit,
    SearchIndex,
    index_directory,
    open_index,
)
from citelab.retrieval._tokenize import TOKENIZER_VERSION, Tokenizer
from citelab.retrieval._tools import (
    MAX_RESULTS_LIMIT,
    ListedResult,
    ListingTool,
    RagResult,
    RagSearch,
    RagSearchArguments,
    SourceTool,
)

__all__ = [
    "INDEX_FORMAT_VERSION",
    "MAX_RESULTS_LIMIT",
    "TOKENIZER_VERSION",
    "ListedResult",
    "ListingTool",
    "RagResult",
    "RagSearch",
    "RagSearchArguments",
    "SearchHit",
    "SearchIndex",
    "SourceTool",
    "Tokenizer",
    "index_directory",
    "open_index",
]
