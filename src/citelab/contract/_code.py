"""Find the parts of a Markdown text that are code, where ``[1]`` is not a citation.

A line scanner after CommonMark, kept to what matters for citations (a full markdown-it parse
would cost far more: see docs/performance.md):

- fenced blocks (``````` or ``~~~``, up to 3 spaces of indentation relative to the enclosing
  list item; an unclosed fence runs to the end of the text; a line indented less than the
  enclosing item closes it);
- indented blocks (4+ columns beyond the enclosing list item's content, not directly after a
  paragraph line, which they cannot interrupt; tabs count to the next multiple of 4);
- inline code spans (a backtick run closes at the next run of the same length within the
  same paragraph, heading or list-item paragraph; an escaped opening backtick is literal).

Not modelled: block quotes as containers (a fence inside ``>`` is not seen as code, and a
code span pairs across a quote's lazy continuation lines), HTML blocks (raw HTML is off for
answers), and table cells.

Code spans are paired only in the blocks that hold backticks.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["code_ranges", "is_escaped"]

_FENCE_OPEN = re.compile(r"(`{3,})[^`]*$|(~{3,})")
_LIST_ITEM = re.compile(r"(?:[-+*]|(\d{1,9})[.)])(?:([ \t]+)(\S?)|$)")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_THEMATIC_BREAK = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT_UNDERLINE = re.compile(r"(?:=+|-+)[ \t]*$")
_BACKTICKS = re.compile(r"`+")
_BLOCK_CHARS = frozenset("`~#*-_+=0123456789")

Range = tuple[int, int]


def code_ranges(text: str) -> list[Range]:
    """Sorted ``[start, end)`` ranges of ``text`` that are code (spans include the backticks)."""
    if "`" not in text and "~~~" not in text and not _maybe_indented(text):
        return []
    ticks = _backtick_runs(text)
    scan = _Scanner()
    scan.run(text)
    return sorted(scan.code + _inline_code(text, ticks, scan.inline))


def _inline_code(text: str, runs: list[int], blocks: list[Range]) -> list[Range]:
    """The code spans of the inline blocks (in order) that hold at least two backtick runs."""
    if len(runs) < 2:
        return []
    starts = [start for start, _ in blocks]
    spans: list[Range] = []
    index = 0
    # Visit only the blocks where backtick runs fall: a long answer has few of them.
    while index < len(runs):
        block = bisect_right(starts, runs[index]) - 1
        start, end = blocks[block] if block >= 0 else (0, 0)
        following = bisect_left(runs, end, index)
        if runs[index] < end and following - index >= 2:
            spans += _code_spans(text, start, end)
        index = max(following, index + 1)
    return spans


def _backtick_runs(text: str) -> list[int]:
    """Where each run of backticks starts."""
    runs = []
    found = text.find("`")
    while found >= 0:
        runs.append(found)
        after = found + 1
        while text.startswith("`", after):
            after += 1
        found = text.find("`", after)
    return runs


def _maybe_indented(text: str) -> bool:
    # Indented code needs 4 spaces at a line start, or 5 after a list marker, or a tab.
    return "\t" in text or "\n    " in text or text.startswith("    ") or "     " in text


class _Line(NamedTuple):
    stripped: str
    """The line without its leading spaces and tabs."""
    indent: int
    """Columns of leading whitespace (tabs to the next multiple of 4)."""
    start: int
    end: int


@dataclass
class _Fence:
    char: str
    length: int
    base: int
    start: int


@dataclass
class _Scanner:
    """Block structure, line by line: code blocks, and the blocks whose inline code pairs."""

    code: list[Range] = field(default_factory=list)
    inline: list[Range] = field(default_factory=list)
    lists: list[int] = field(default_factory=list)
    fence: _Fence | None = None
    paragraph: int | None = None
    quoted: bool = False
    empty_item: bool = False

    def run(self, text: str) -> None:
        start = 0
        for raw in text.split("\n"):
            line = raw[:-1] if raw.endswith("\r") else raw  # CRLF line endings
            self.line(line, start, start + len(line))
            start += len(raw) + 1
        end = len(text)
        if self.fence is not None:
            self.code.append((self.fence.start, end))
        self.close_paragraph(end)

    def line(self, raw: str, start: int, end: int) -> None:
        stripped = raw.lstrip(" \t")
        line = _Line(stripped, _columns(raw[: len(raw) - len(stripped)]), start, end)
        if self.fence is not None and self.in_fence(self.fence, line):
            return
        if not stripped.strip():
            self.blank(start)
            return
        self.empty_item = False
        self.block(line)

    def blank(self, start: int) -> None:
        """A blank line outside fences."""
        self.close_paragraph(start)
        if self.empty_item:
            # An item may start with at most one blank line: an empty one ends here.
            self.lists.pop()
            self.empty_item = False

    def block(self, line: _Line) -> None:
        """A non-blank line outside fences: code, a block start, or paragraph text."""
        depth = bisect_right(self.lists, line.indent)  # content columns increase with nesting
        base = self.lists[depth - 1] if depth else 0
        if line.indent - base >= 4 and self.ends_list_paragraph(line, depth):
            self.leave(depth, line.start)
            self.block(line)
        elif line.indent - base >= 4:
            self.indented(line, depth)
        elif not self.block_start(line, base, depth):
            self.paragraph_line(line.stripped, depth, line.start)

    def ends_list_paragraph(self, line: _Line, depth: int) -> bool:
        """A lazy line of a list item's paragraph that starts a block, judged (as markdown-it
        does) relative to the item's content column, ends the paragraph and the item."""
        if self.paragraph is None or depth == len(self.lists):
            return False
        stripped = line.stripped
        return bool(
            _FENCE_OPEN.match(stripped)
            or _HEADING.match(stripped)
            or _THEMATIC_BREAK.match(stripped)
        )

    def in_fence(self, fence: _Fence, line: _Line) -> bool:
        """True when the line belongs to the open fence (its content or its closing line)."""
        stripped = line.stripped
        if stripped.strip() and line.indent < fence.base:
            # The enclosing list item ended, and with it the fence.
            self.code.append((fence.start, line.start))
            self.fence = None
            return False
        run = len(stripped) - len(stripped.lstrip(fence.char))
        if run >= fence.length and line.indent - fence.base <= 3 and not stripped[run:].strip():
            self.code.append((fence.start, line.end))
            self.fence = None
        return True

    def indented(self, line: _Line, depth: int) -> None:
        if self.paragraph is None:
            self.code.append((line.start, line.end))
            del self.lists[depth:]
        # else: indented code cannot interrupt a paragraph; the line continues it.

    def block_start(self, line: _Line, base: int, depth: int) -> bool:
        """Handle a line that starts a non-paragraph block; False when it does not."""
        stripped, start = line.stripped, line.start
        if stripped[:1] not in _BLOCK_CHARS:
            return False
        fence = _FENCE_OPEN.match(stripped)
        if fence:
            self.leave(depth, start)
            char = "`" if fence[1] else "~"
            self.fence = _Fence(char, len(fence[1] or fence[2]), base, start)
            return True
        if _HEADING.match(stripped):
            self.leave(depth, start)
            self.inline.append((start, line.end))
            return True
        underline = self.paragraph is not None and depth == len(self.lists)
        if (underline and _SETEXT_UNDERLINE.match(stripped)) or _THEMATIC_BREAK.match(stripped):
            self.leave(depth, start)
            return True
        item = _LIST_ITEM.match(stripped)
        if item and self.starts_item(item):
            self.leave(depth, start)
            self.list_item(line, item)
            return True
        return False

    def list_item(self, line: _Line, item: re.Match[str]) -> None:
        marker = len(item[1]) + 1 if item[1] is not None else 1
        if not item[3]:
            # An empty item has no paragraph yet: what follows may be its code block.
            self.lists.append(line.indent + marker + 1)
            self.empty_item = True
            return
        spaces = _columns(item[2])
        # CommonMark: content sits 1-4 spaces after the marker; more means it opens with code.
        self.lists.append(line.indent + marker + (spaces if spaces <= 4 else 1))
        content = _Line(line.stripped[item.end(2) :], line.indent + marker + spaces, *line[2:])
        self.block(content)

    def starts_item(self, item: re.Match[str]) -> bool:
        if self.paragraph is None or self.lists:
            return True
        # A first list item may interrupt a paragraph only if non-empty and, if ordered, "1".
        empty = not item[3]
        ordered_not_one = item[1] is not None and int(item[1]) != 1
        return not (empty or ordered_not_one)

    def paragraph_line(self, stripped: str, depth: int, start: int) -> None:
        quoted = stripped.startswith(">")
        if self.paragraph is not None and quoted and not self.quoted:
            self.close_paragraph(start)
        if self.paragraph is None:
            del self.lists[depth:]
            self.paragraph = start
        self.quoted = quoted

    def leave(self, depth: int, start: int) -> None:
        """A new block starts here: the paragraph ends and deeper list items close."""
        self.close_paragraph(start)
        del self.lists[depth:]

    def close_paragraph(self, end: int) -> None:
        if self.paragraph is not None:
            self.inline.append((self.paragraph, end))
            self.paragraph = None
        self.quoted = False


def _columns(whitespace: str) -> int:
    column = 0
    for char in whitespace:
        column = column + 4 - column % 4 if char == "\t" else column + 1
    return column


def _code_spans(text: str, start: int, end: int) -> list[Range]:
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text, start, end)]
    if len(runs) < 2:
        return []
    by_length: dict[int, list[int]] = {}
    for index, (run_start, run_end) in enumerate(runs):
        by_length.setdefault(run_end - run_start, []).append(index)
    spans = []
    index = 0
    while index < len(runs):
        opener, run_end = runs[index]
        if is_escaped(text, opener):
            opener += 1
        closer = _next_run(by_length.get(run_end - opener, []), index)
        if opener == run_end or closer is None:
            index += 1
            continue
        spans.append((opener, runs[closer][1]))
        index = closer + 1
    return spans


def _next_run(candidates: list[int], after: int) -> int | None:
    at = bisect_right(candidates, after)
    return candidates[at] if at < len(candidates) else None


def is_escaped(text: str, position: int) -> bool:
    """True when an odd number of backslashes precedes ``position``."""
    count = 0
    while position - count > 0 and text[position - count - 1] == "\\":
        count += 1
    return count % 2 == 1
