"""Corpora of entities: documents with translations, fields and access rules, and their chunks.

The names are imported on first use from the module named in ``_LAZY``, so that a process
that needs one part (the documents' model, the memory helper) does not import the others
(chunking, synthetic corpora, folder import and YAML).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citelab._lazy import lazy_attributes

if TYPE_CHECKING:
    from citelab.corpus._chunking import (
        CHUNKING_VERSION,
        Chunk,
        ChunkingParams,
        chunk_document,
        chunk_id,
        chunk_spans,
        iter_chunks,
    )
    from citelab.corpus._corpus import EXAMPLE_LINE, Corpus, load_corpus
    from citelab.corpus._import import (
        IMPORT_SUFFIXES,
        FolderImport,
        SkippedFile,
        folder_fingerprint,
        import_folder,
        imported_corpus,
        write_corpus,
    )
    from citelab.corpus._model import Access, Document, Reader, Translation
    from citelab.corpus._summary import AccessSummary, CorpusSummary, summarize_corpus
    from citelab.corpus._synth import SynthParams, synth_documents, write_synthetic_corpus

_LAZY: dict[str, str] = {
    "Access": "citelab.corpus._model",
    "AccessSummary": "citelab.corpus._summary",
    "CHUNKING_VERSION": "citelab.corpus._chunking",
    "Chunk": "citelab.corpus._chunking",
    "ChunkingParams": "citelab.corpus._chunking",
    "Corpus": "citelab.corpus._corpus",
    "CorpusSummary": "citelab.corpus._summary",
    "Document": "citelab.corpus._model",
    "EXAMPLE_LINE": "citelab.corpus._corpus",
    "FolderImport": "citelab.corpus._import",
    "IMPORT_SUFFIXES": "citelab.corpus._import",
    "Reader": "citelab.corpus._model",
    "SkippedFile": "citelab.corpus._import",
    "SynthParams": "citelab.corpus._synth",
    "Translation": "citelab.corpus._model",
    "chunk_document": "citelab.corpus._chunking",
    "chunk_id": "citelab.corpus._chunking",
    "chunk_spans": "citelab.corpus._chunking",
    "folder_fingerprint": "citelab.corpus._import",
    "import_folder": "citelab.corpus._import",
    "imported_corpus": "citelab.corpus._import",
    "iter_chunks": "citelab.corpus._chunking",
    "load_corpus": "citelab.corpus._corpus",
    "summarize_corpus": "citelab.corpus._summary",
    "synth_documents": "citelab.corpus._synth",
    "write_corpus": "citelab.corpus._import",
    "write_synthetic_corpus": "citelab.corpus._synth",
}

__all__ = [
    "CHUNKING_VERSION",
    "EXAMPLE_LINE",
    "IMPORT_SUFFIXES",
    "Access",
    "AccessSummary",
    "Chunk",
    "ChunkingParams",
    "Corpus",
    "CorpusSummary",
    "Document",
    "FolderImport",
    "Reader",
    "SkippedFile",
    "SynthParams",
    "Translation",
    "chunk_document",
    "chunk_id",
    "chunk_spans",
    "folder_fingerprint",
    "import_folder",
    "imported_corpus",
    "iter_chunks",
    "load_corpus",
    "summarize_corpus",
    "synth_documents",
    "write_corpus",
    "write_synthetic_corpus",
]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
