"""The public names of citelab.contract and citelab.contract.convert."""

from __future__ import annotations

import citelab.contract
import citelab.contract.convert

CONTRACT = [
    "ALCE_CITATION",
    "ALLOWLISTS",
    "BLOCK_KINDS",
    "CITATIONS_KEY",
    "MARKER_GROUP",
    "MARKER_TEXT",
    "MAX_GROUP_NUMBERS",
    "SENTENCE_END_MARKERS",
    "SOURCE_NUMBER_KEY",
    "SOURCE_QUOTES_KEY",
    "SOURCE_URL_KEY",
    "SUGGESTED_REPLIES_KEY",
    "Anchor",
    "AnswerMessage",
    "BlockKind",
    "ContentBlock",
    "Marker",
    "MarkerScan",
    "MetaKeySpec",
    "MetaRegistry",
    "PayloadCheck",
    "PayloadContext",
    "SourceQuote",
    "SuggestedReply",
    "TextOffsets",
    "Violation",
    "alce_cited_numbers",
    "alce_remove_citations",
    "build_message",
    "check_citation_anchors",
    "check_message",
    "citation_id_prefix",
    "codepoint_to_utf8",
    "codepoint_to_utf16",
    "default_registry",
    "group_numbers",
    "is_reserved_meta_key",
    "meta_key_problem",
    "parse_markers",
    "raise_for_violations",
    "render_answer_html",
    "render_message_html",
    "render_sources_html",
    "render_sources_markdown",
    "sanitize_html",
    "scan_markers",
    "source_priority",
    "strip_plain_markers",
    "utf8_to_codepoint",
    "utf16_to_codepoint",
    "validate_message",
]

CONVERT = [
    "ANTHROPIC_LOSSES",
    "COHERE_LOSSES",
    "FILE_SEARCH_SCHEME",
    "GEMINI_LOSSES",
    "OPENAI_FILE_SCHEME",
    "OPENAI_LOSSES",
    "Losses",
    "anthropic_document_source",
    "file_search_uri",
    "from_anthropic",
    "from_cohere",
    "from_gemini",
    "from_openai_chat",
    "from_openai_responses",
    "to_anthropic",
    "to_cohere",
    "to_gemini",
    "to_openai_chat",
    "to_openai_responses",
]


def test_contract_public_names() -> None:
    assert citelab.contract.__all__ == CONTRACT
    assert all(hasattr(citelab.contract, name) for name in CONTRACT)


def test_convert_public_names() -> None:
    assert citelab.contract.convert.__all__ == CONVERT
    assert all(hasattr(citelab.contract.convert, name) for name in CONVERT)
