import citelab.retrieval


def test_retrieval_public_names() -> None:
    assert set(citelab.retrieval.__all__) == {
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
    }
    assert all(hasattr(citelab.retrieval, name) for name in citelab.retrieval.__all__)
