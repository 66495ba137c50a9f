"""The public names of citelab.mcp_server."""

from __future__ import annotations

import citelab.mcp_server


def test_public_names_are_sorted_and_importable() -> None:
    expected = ["CorpusSearch", "SearchResults", "answer_result", "create_server", "tool_error"]
    assert citelab.mcp_server.__all__ == expected
    for name in expected:
        assert getattr(citelab.mcp_server, name) is not None
