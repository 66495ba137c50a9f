"""Offsets into a text: Unicode code points ⇄ UTF-16 code units ⇄ UTF-8 bytes.

The contract counts in code points, end exclusive (Python's ``str`` indices). Browsers count
UTF-16 code units and Gemini counts UTF-8 bytes, so every index crossing that boundary goes
through here. An index that falls inside a surrogate pair or inside a UTF-8 sequence is an
``InvalidInput``: shifting it silently would cite the wrong characters.

One :class:`TextOffsets` answers any number of lookups on one text in O(log k) each, where k
is the number of characters wider than one unit; the module-level functions reuse a small
cache of them, so calling them in a loop over one text is cheap too.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache

from citelab._errors import InvalidInput

__all__ = [
    "TextOffsets",
    "codepoint_to_utf8",
    "codepoint_to_utf16",
    "utf8_to_codepoint",
    "utf16_to_codepoint",
]

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_NON_ASCII = re.compile("[^\x00-\x7f]")


@dataclass(frozen=True)
class _WideChars:
    """The characters of a text that take more than one unit in some encoding.

    ``positions[j]`` is the code-point index of the j-th wide character, ``unit_starts[j]``
    its first unit, ``widths[j]`` its width in units, and ``extra_through[j]`` the sum of
    ``width - 1`` over wide characters ``0..j``.
    """

    encoding: str
    length: int
    positions: list[int]
    unit_starts: list[int]
    widths: list[int]
    extra_through: list[int]

    @classmethod
    def scan(cls, text: str, encoding: str, pattern: re.Pattern[str]) -> _WideChars:
        positions: list[int] = []
        unit_starts: list[int] = []
        widths: list[int] = []
        extra_through: list[int] = []
        extra = 0
        for match in pattern.finditer(text):
            position = match.start()
            width = _width(match.group(), encoding)
            positions.append(position)
            unit_starts.append(position + extra)
            widths.append(width)
            extra += width - 1
            extra_through.append(extra)
        return cls(encoding, len(text), positions, unit_starts, widths, extra_through)

    @property
    def unit_length(self) -> int:
        return self.length + (self.extra_through[-1] if self.extra_through else 0)

    def to_units(self, index: int) -> int:
        _check_range(index, self.length, "code point")
        wide_before = bisect_left(self.positions, index)
        return index + (self.extra_through[wide_before - 1] if wide_before else 0)

    def to_codepoints(self, unit: int, text: str) -> int:
        _check_range(unit, self.unit_length, f"{self.encoding} unit")
        j = bisect_right(self.unit_starts, unit) - 1
        if j < 0:
            return unit
        start = self.unit_starts[j]
        if unit == start:
            return self.positions[j]
        if unit < start + self.widths[j]:
            char = text[self.positions[j]]
            raise InvalidInput(
                f"{self.encoding} index {unit} falls inside the character {char!r} "
                f"(code point {self.positions[j]}, {self.encoding} units {start}–"
                f"{start + self.widths[j] - 1}); an offset must sit on a character boundary"
            )
        return unit - self.extra_through[j]


def _width(char: str, encoding: str) -> int:
    if encoding == "UTF-16":
        return 2
    return len(char.encode("utf-8"))


def _check_range(index: int, length: int, unit: str) -> None:
    if isinstance(index, bool) or not isinstance(index, int):
        raise InvalidInput(f"a {unit} index must be an integer, not {type(index).__name__}")
    if not 0 <= index <= length:
        raise InvalidInput(f"{unit} index {index} is outside the text (0–{length})")


class TextOffsets:
    """Converts many offsets on one text; build once, query as often as needed."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._utf16: _WideChars | None = None
        self._utf8: _WideChars | None = None

    @property
    def utf16_length(self) -> int:
        """Length of the text in UTF-16 code units (JavaScript's ``length``)."""
        return self._utf16_table().unit_length

    @property
    def utf8_length(self) -> int:
        """Length of the text in UTF-8 bytes."""
        return self._utf8_table().unit_length

    def codepoint_to_utf16(self, index: int) -> int:
        """The UTF-16 code-unit offset of code-point offset ``index``."""
        return self._utf16_table().to_units(index)

    def utf16_to_codepoint(self, unit: int) -> int:
        """The code-point offset of UTF-16 offset ``unit``; inside a surrogate pair is an error."""
        return self._utf16_table().to_codepoints(unit, self.text)

    def codepoint_to_utf8(self, index: int) -> int:
        """The UTF-8 byte offset of code-point offset ``index``."""
        return self._utf8_table().to_units(index)

    def utf8_to_codepoint(self, byte: int) -> int:
        """The code-point offset of UTF-8 offset ``byte``; inside a sequence is an error."""
        return self._utf8_table().to_codepoints(byte, self.text)

    def _utf16_table(self) -> _WideChars:
        if self._utf16 is None:
            self._utf16 = _WideChars.scan(self.text, "UTF-16", _ASTRAL)
        return self._utf16

    def _utf8_table(self) -> _WideChars:
        if self._utf8 is None:
            self._utf8 = _WideChars.scan(self.text, "UTF-8", _NON_ASCII)
        return self._utf8


@lru_cache(maxsize=16)
def _offsets_for(text: str) -> TextOffsets:
    return TextOffsets(text)


def codepoint_to_utf16(text: str, index: int) -> int:
    """The UTF-16 code-unit offset in ``text`` of code-point offset ``index``."""
    return _offsets_for(text).codepoint_to_utf16(index)


def utf16_to_codepoint(text: str, unit: int) -> int:
    """The code-point offset in ``text`` of UTF-16 offset ``unit``."""
    return _offsets_for(text).utf16_to_codepoint(unit)


def codepoint_to_utf8(text: str, index: int) -> int:
    """The UTF-8 byte offset in ``text`` of code-point offset ``index``."""
    return _offsets_for(text).codepoint_to_utf8(index)


def utf8_to_codepoint(text: str, byte: int) -> int:
    """The code-point offset in ``text`` of UTF-8 byte offset ``byte``."""
    return _offsets_for(text).utf8_to_codepoint(byte)
