import citelab.corpus


def test_corpus_public_names() -> None:
    assert set(citelab.corpus.__all__) == {
        "CHUNKING_VERSION",
        "Access",
        "AccessSummary",
        "Chunk",
        "ChunkingParams",
        "Corpus",
        "CorpusSummary",
        "Document",
        "Reader",
        "SynthParams",
        "Translation",
        "chunk_document",
        "chunk_id",
        "chunk_spans",
        "iter_chunks",
        "load_corpus",
        "summarize_corpus",
        "synth_documents",
        "write_synthetic_corpus",
    }
    assert all(hasattr(citelab.corpus, name) for name in citelab.corpus.__all__)
