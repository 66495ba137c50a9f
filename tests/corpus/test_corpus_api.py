import citelab.corpus


def test_corpus_public_names() -> None:
    assert set(citelab.corpus.__all__) == {
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
    }
    assert all(hasattr(citelab.corpus, name) for name in citelab.corpus.__all__)
