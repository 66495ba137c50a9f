"""The citation contract: MCP content blocks, ``_meta`` payloads, validation, rendering.

- :class:`AnswerMessage` / :func:`build_message`: an answer as MCP blocks (one ``text`` block,
  one ``resource_link`` per source) with inline anchors and suggested replies in ``_meta``,
  and each source's web address (:data:`SOURCE_URL_KEY`) when its URI is not one.
- :func:`validate_message` / :func:`check_message`: every :class:`Violation`, with its path.
- :class:`MetaRegistry` / :func:`default_registry`: registered ``_meta`` keys and schemas.
- Offsets: code points ⇄ UTF-16 units ⇄ UTF-8 bytes (:class:`TextOffsets`).
- The ``[n]`` marker grammar: :func:`parse_markers` / :func:`scan_markers` (what finalize,
  rendering, judges and scorers read as a citation), with named variants for ALCE's
  ``eval.py`` (:func:`alce_remove_citations`) and the lexical judges (:data:`MARKER_TEXT`).
- Rendering: :func:`render_answer_html`, :func:`render_sources_html`,
  :func:`render_sources_markdown`; the HTML allowlists in :data:`ALLOWLISTS`.
- Converters to and from other systems: :mod:`citelab.contract.convert`.

The names are imported on first use from the module named in ``_LAZY``: reading anchors
(:class:`Anchor`) does not import the MCP types, the validator or the renderers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citelab._lazy import lazy_attributes

if TYPE_CHECKING:
    from citelab.contract._allowlists import ALLOWLISTS
    from citelab.contract._markers import (
        ALCE_CITATION,
        MARKER_GROUP,
        MARKER_TEXT,
        MAX_GROUP_NUMBERS,
        SENTENCE_END_MARKERS,
        Marker,
        MarkerScan,
        alce_cited_numbers,
        alce_remove_citations,
        group_numbers,
        parse_markers,
        scan_markers,
        strip_plain_markers,
    )
    from citelab.contract._message import (
        AnswerMessage,
        ContentBlock,
        build_message,
        source_priority,
    )
    from citelab.contract._meta_keys import is_reserved_meta_key, meta_key_problem
    from citelab.contract._offsets import (
        TextOffsets,
        codepoint_to_utf8,
        codepoint_to_utf16,
        utf8_to_codepoint,
        utf16_to_codepoint,
    )
    from citelab.contract._payloads import (
        CITATIONS_KEY,
        SOURCE_NUMBER_KEY,
        SOURCE_QUOTES_KEY,
        SOURCE_URL_KEY,
        SUGGESTED_REPLIES_KEY,
        Anchor,
        SourceQuote,
        SuggestedReply,
    )
    from citelab.contract._registry import (
        BLOCK_KINDS,
        BlockKind,
        MetaKeySpec,
        MetaRegistry,
        PayloadCheck,
        PayloadContext,
        check_citation_anchors,
        default_registry,
    )
    from citelab.contract._render import (
        citation_id_prefix,
        render_answer_html,
        render_message_html,
        render_sources_html,
        render_sources_markdown,
        sanitize_html,
    )
    from citelab.contract._validate import check_message, validate_message
    from citelab.contract._violations import Violation, raise_for_violations

_LAZY: dict[str, str] = {
    "ALCE_CITATION": "citelab.contract._markers",
    "ALLOWLISTS": "citelab.contract._allowlists",
    "BLOCK_KINDS": "citelab.contract._registry",
    "CITATIONS_KEY": "citelab.contract._payloads",
    "MARKER_GROUP": "citelab.contract._markers",
    "MARKER_TEXT": "citelab.contract._markers",
    "MAX_GROUP_NUMBERS": "citelab.contract._markers",
    "SENTENCE_END_MARKERS": "citelab.contract._markers",
    "SOURCE_NUMBER_KEY": "citelab.contract._payloads",
    "SOURCE_QUOTES_KEY": "citelab.contract._payloads",
    "SOURCE_URL_KEY": "citelab.contract._payloads",
    "SUGGESTED_REPLIES_KEY": "citelab.contract._payloads",
    "Anchor": "citelab.contract._payloads",
    "AnswerMessage": "citelab.contract._message",
    "BlockKind": "citelab.contract._registry",
    "ContentBlock": "citelab.contract._message",
    "Marker": "citelab.contract._markers",
    "MarkerScan": "citelab.contract._markers",
    "MetaKeySpec": "citelab.contract._registry",
    "MetaRegistry": "citelab.contract._registry",
    "PayloadCheck": "citelab.contract._registry",
    "PayloadContext": "citelab.contract._registry",
    "SourceQuote": "citelab.contract._payloads",
    "SuggestedReply": "citelab.contract._payloads",
    "TextOffsets": "citelab.contract._offsets",
    "Violation": "citelab.contract._violations",
    "alce_cited_numbers": "citelab.contract._markers",
    "alce_remove_citations": "citelab.contract._markers",
    "build_message": "citelab.contract._message",
    "check_citation_anchors": "citelab.contract._registry",
    "check_message": "citelab.contract._validate",
    "citation_id_prefix": "citelab.contract._render",
    "codepoint_to_utf16": "citelab.contract._offsets",
    "codepoint_to_utf8": "citelab.contract._offsets",
    "default_registry": "citelab.contract._registry",
    "group_numbers": "citelab.contract._markers",
    "is_reserved_meta_key": "citelab.contract._meta_keys",
    "meta_key_problem": "citelab.contract._meta_keys",
    "parse_markers": "citelab.contract._markers",
    "raise_for_violations": "citelab.contract._violations",
    "render_answer_html": "citelab.contract._render",
    "render_message_html": "citelab.contract._render",
    "render_sources_html": "citelab.contract._render",
    "render_sources_markdown": "citelab.contract._render",
    "sanitize_html": "citelab.contract._render",
    "scan_markers": "citelab.contract._markers",
    "source_priority": "citelab.contract._message",
    "strip_plain_markers": "citelab.contract._markers",
    "utf16_to_codepoint": "citelab.contract._offsets",
    "utf8_to_codepoint": "citelab.contract._offsets",
    "validate_message": "citelab.contract._validate",
}

__all__ = [
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


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
