"""How offline models cut their output into stream pieces, deterministically."""

from __future__ import annotations

import re
from collections.abc import Iterator

from citelab.models._types import ToolCallDelta

__all__ = ["ARGUMENT_PIECE", "tool_call_deltas", "word_pieces"]

ARGUMENT_PIECE = 16
"""Characters of tool-call arguments per delta: small, so consumers must assemble pieces."""

_WORD = re.compile(r"\S+\s*")
_LEADING_SPACE = re.compile(r"\s*")


def word_pieces(text: str) -> list[str]:
    """Token-sized pieces: each word with its trailing whitespace; they join back to ``text``."""
    pieces = _WORD.findall(text)
    if not pieces:
        return [text] if text else []
    lead = _LEADING_SPACE.match(text)
    pieces[0] = text[: lead.end() if lead else 0] + pieces[0]
    return pieces


def tool_call_deltas(
    index: int, call_id: str, name: str, arguments: str
) -> Iterator[ToolCallDelta]:
    """One call as deltas: the header with the first piece of arguments, then the rest."""
    chunks = [arguments[i : i + ARGUMENT_PIECE] for i in range(0, len(arguments), ARGUMENT_PIECE)]
    yield ToolCallDelta(index=index, id=call_id, name=name, arguments=chunks[0] if chunks else "")
    for chunk in chunks[1:]:
        yield ToolCallDelta(index=index, arguments=chunk)
