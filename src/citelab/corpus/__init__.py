"""Corpora of entities: documents with translations, fields and access rules, and their chunks."""

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
