"""Remove a dangling marker from the rewritten text, with the space it leaves behind.

The rewritten text is a list of pieces built left to right; a removal may trim the end of
that list (never a written marker) and tells the caller where copying resumes. Rules:

1. a line left holding only whitespace goes entirely, with one line break (the one after it,
   or the one before it on the last line);
2. when only indentation or block punctuation (``- ``, ``1. ``, ``# ``) precedes the marker on
   its line, the spaces after it go: ``"- [9] Fees"`` becomes ``"- Fees"``;
3. elsewhere, when the marker is followed by whitespace, closing punctuation or the end, the
   spaces before it go: ``"Claim [9]."`` becomes ``"Claim."``.

Removal is refused (``None``; the caller then escapes the marker) where it would change how
Markdown reads the line: when the text moving up would start a block of its own (``#``,
``>``, ``-``, a fence, ``1.``, a ``[label]:`` definition), when a bare prefix would be left
alone on its line (``- [9]``, ``1. [9]``), when two backtick runs would join, and when a
removed line began a paragraph and the next line would then start a block (an indented line
would become code).

:func:`keeps_reading` tells when a removal provably changes nothing else: by rule 3, in the
middle of a line, with an ordinary character left of the join and no ``[`` right of it. The
line keeps its start, its backticks and its line breaks, so the blocks and code spans stay;
and the context rules of the other markers (the characters next to a chain, the bracket
scans over marker characters, backslashes) cannot reach across an ordinary character.
"""

from __future__ import annotations

import re

__all__ = ["in_line", "keeps_reading", "remove_marker"]

_CLOSERS = frozenset(" \t\r\n.,;:!?)]}»”’\"'…*_~")
_SPACES = re.compile(r"[ \t]*")
_BLANK_REST = re.compile(r"[ \t\r]*(?:\n|\Z)")
# What, at the start of a line, makes it more than paragraph text.
_BLOCK_START = re.compile(r"[#>=~`|*+_-]|\d{1,9}[.)](?:[ \t]|$)|\[[^\]\n]*\]:", re.M)
_BLOCK_LINE = re.compile(r" {0,3}(?:[#>=~`|*+_-]|\d{1,9}[.)](?:[ \t]|$))| {0,3}\t| {4}", re.M)
_BARE_LINE = " \t-+*=_#>~`|.)0123456789"
# Characters that the marker rules read across: marker characters, brackets, backslash.
_JOIN_UNSAFE = frozenset("0123456789 ,-–[]\\")


def remove_marker(pieces: list[str], text: str, end: int) -> int | None:
    """Remove the marker ending at ``end``; the position where copying resumes, or ``None``
    when removing it would change the Markdown structure."""
    prefix = _line_so_far(pieces)
    if prefix is None:
        # Rule 3: other text precedes the marker on its line.
        following = text[end] if end < len(text) else "\n"
        if following == "`" and pieces[-1].endswith("`"):
            return None  # joining two backtick runs would change the code spans
        if following in _CLOSERS:
            _strip_trailing_spaces(pieces)
        return end
    rest = _BLANK_REST.match(text, end)
    if rest is not None:
        return None if prefix.strip(" \t") else _remove_line(pieces, text, rest)
    # Rule 2: the text after the marker moves up to the prefix.
    spaces = _SPACES.match(text, end)
    resume = spaces.end() if spaces else end
    return None if _BLOCK_START.match(text, resume) else resume


def in_line(pieces: list[str]) -> bool:
    """True when other text precedes, on its line, a marker about to be removed (rule 3)."""
    return _line_so_far(pieces) is None


def keeps_reading(pieces: list[str], text: str, resume: int) -> bool:
    """After an ``in_line`` removal: True when the join left behind (the output's last
    character, then ``text[resume]``) cannot change how any other marker or code reads."""
    left = pieces[-1][-1:] if pieces else ""
    right = text[resume : resume + 1]
    return bool(left) and not left.isspace() and left not in _JOIN_UNSAFE and right != "["


def _remove_line(pieces: list[str], text: str, rest: re.Match[str]) -> int | None:
    """Rule 1: the marker was all its line held (but whitespace)."""
    resume = rest.end()
    if _starts_paragraph(pieces) and _BLOCK_LINE.match(text, resume):
        return None
    _strip_trailing_spaces(pieces)
    if not rest[0].endswith("\n"):
        _strip_trailing_newline(pieces)
    return resume


def _line_so_far(pieces: list[str]) -> str | None:
    """The output's current line when it holds only spaces and block punctuation, else None."""
    tail: list[str] = []
    for piece in reversed(pieces):
        content = piece.rstrip(_BARE_LINE)
        if content:
            if not content.endswith("\n"):
                return None
            tail.append(piece[len(content) :])
            break
        tail.append(piece)
    return "".join(reversed(tail))


def _starts_paragraph(pieces: list[str]) -> bool:
    """True when the current line is the output's first, or follows a blank line."""
    newlines = 0
    for piece in reversed(pieces):
        for char in reversed(piece):
            if char == "\n":
                newlines += 1
                if newlines == 2:
                    return True
            elif char not in " \t\r":
                return False
    return True


def _strip_trailing_spaces(pieces: list[str]) -> None:
    while pieces:
        content = pieces[-1].rstrip(" \t")
        if content:
            pieces[-1] = content
            return
        pieces.pop()


def _strip_trailing_newline(pieces: list[str]) -> None:
    if pieces and pieces[-1].endswith("\n"):
        last = pieces[-1]
        trimmed = last[:-2] if last.endswith("\r\n") else last[:-1]
        if trimmed:
            pieces[-1] = trimmed
        else:
            pieces.pop()
