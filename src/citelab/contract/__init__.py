"""The citation contract: MCP content blocks, ``_meta`` payloads, validation, rendering.

- :class:`AnswerMessage` / :func:`build_message`: an answer as MCP blocks (one ``text`` block,
  one ``resource_link`` per source) with inline anchors and suggested replies in ``_meta``,
  and each source's web address (:data:`SOURCE_URL_KEY`) when its URI is not one.
- :func:`validate_message` / :func:`check_message`: every :class:`Violation`, with its path.
- :class:`MetaRegistry` / :func:`default_registry`: registered ``_meta`` keys and schemas.
- Offsets: code points ⇄ UTF-16 units ⇄ UTF-8 bytes (:class:`TextOffsets`).
- Rendering: :func:`render_answer_html`, :func:`render_sources_html`,
  :func:`render_sources_markdown`; the HTML allowlists in :data:`ALLOWLISTS`.
- Converters to and from other systems: :mod:`citelab.contract.convert`.
"""

from citelab.contract._allowlists import ALLOWLISTS
from citelab.contract._message import AnswerMessage, ContentBlock, build_message, source_priority
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

__all__ = [
    "ALLOWLISTS",
    "BLOCK_KINDS",
    "CITATIONS_KEY",
    "SOURCE_NUMBER_KEY",
    "SOURCE_QUOTES_KEY",
    "SOURCE_URL_KEY",
    "SUGGESTED_REPLIES_KEY",
    "Anchor",
    "AnswerMessage",
    "BlockKind",
    "ContentBlock",
    "MetaKeySpec",
    "MetaRegistry",
    "PayloadCheck",
    "PayloadContext",
    "SourceQuote",
    "SuggestedReply",
    "TextOffsets",
    "Violation",
    "build_message",
    "check_citation_anchors",
    "check_message",
    "citation_id_prefix",
    "codepoint_to_utf8",
    "codepoint_to_utf16",
    "default_registry",
    "is_reserved_meta_key",
    "meta_key_problem",
    "raise_for_violations",
    "render_answer_html",
    "render_message_html",
    "render_sources_html",
    "render_sources_markdown",
    "sanitize_html",
    "source_priority",
    "utf8_to_codepoint",
    "utf16_to_codepoint",
    "validate_message",
]
