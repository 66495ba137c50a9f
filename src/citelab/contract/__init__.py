"""The citation contract: MCP content blocks, ``_meta`` payloads, validation, rendering."""

from citelab.contract._payloads import CITATIONS_KEY, SUGGESTED_REPLIES_KEY, Anchor, SuggestedReply

__all__ = ["CITATIONS_KEY", "SUGGESTED_REPLIES_KEY", "Anchor", "SuggestedReply"]
