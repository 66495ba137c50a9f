"""Offsets: code points ⇄ UTF-16 units ⇄ UTF-8 bytes, with errors inside characters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citelab import InvalidInput
from citelab.contract import (
    TextOffsets,
    codepoint_to_utf8,
    codepoint_to_utf16,
    utf8_to_codepoint,
    utf16_to_codepoint,
)

# "a", an astral emoji, "e" + combining acute, a CJK character, a flag (two astral chars).
TEXT = "a😀e\u0301中🇫🇷"


def test_utf16_offsets_count_astral_characters_twice() -> None:
    offsets = TextOffsets(TEXT)
    assert [offsets.codepoint_to_utf16(i) for i in range(len(TEXT) + 1)] == [
        0, 1, 3, 4, 5, 6, 8, 10,
    ]  # fmt: skip
    assert offsets.utf16_length == len(TEXT.encode("utf-16-le")) // 2 == 10


def test_utf8_offsets_count_bytes() -> None:
    offsets = TextOffsets(TEXT)
    assert [offsets.codepoint_to_utf8(i) for i in range(len(TEXT) + 1)] == [
        0, 1, 5, 6, 8, 11, 15, 19,
    ]  # fmt: skip
    assert offsets.utf8_length == len(TEXT.encode("utf-8")) == 19


def test_combining_mark_is_its_own_code_point() -> None:
    # "e" + U+0301 renders as one glyph but is two code points: an offset may split them,
    # and the conversions still agree on where that offset is.
    assert codepoint_to_utf16(TEXT, 3) == 4
    assert codepoint_to_utf8(TEXT, 4) == 8
    assert utf8_to_codepoint(TEXT, 8) == 4


@pytest.mark.parametrize("unit", [2, 7, 9])
def test_utf16_index_inside_a_surrogate_pair_is_an_error(unit: int) -> None:
    with pytest.raises(InvalidInput, match=rf"UTF-16 index {unit} falls inside the character"):
        utf16_to_codepoint(TEXT, unit)


@pytest.mark.parametrize("byte", [2, 3, 4, 7, 9, 10, 12, 16])
def test_utf8_index_inside_a_sequence_is_an_error(byte: int) -> None:
    with pytest.raises(InvalidInput, match="falls inside the character"):
        utf8_to_codepoint(TEXT, byte)


@pytest.mark.parametrize(
    ("convert", "index"),
    [
        (codepoint_to_utf16, -1),
        (codepoint_to_utf16, len(TEXT) + 1),
        (codepoint_to_utf8, 99),
        (utf16_to_codepoint, 11),
        (utf8_to_codepoint, 20),
    ],
)
def test_index_outside_the_text_is_an_error(convert: object, index: int) -> None:
    assert callable(convert)
    with pytest.raises(InvalidInput, match="outside the text"):
        convert(TEXT, index)


def test_non_integer_index_is_an_error() -> None:
    with pytest.raises(InvalidInput, match="must be an integer, not bool"):
        codepoint_to_utf16(TEXT, True)


def test_cjk_text_is_three_bytes_per_character() -> None:
    text = "東京と大阪"
    assert [codepoint_to_utf8(text, i) for i in range(6)] == [0, 3, 6, 9, 12, 15]
    assert [codepoint_to_utf16(text, i) for i in range(6)] == [0, 1, 2, 3, 4, 5]


def test_ascii_text_maps_to_itself() -> None:
    text = "plain ascii"
    offsets = TextOffsets(text)
    assert all(
        offsets.codepoint_to_utf8(i) == i == offsets.utf16_to_codepoint(i) for i in range(12)
    )


texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(texts)
def test_offsets_round_trip_and_match_the_encoders(text: str) -> None:
    offsets = TextOffsets(text)
    for index in range(len(text) + 1):
        unit = offsets.codepoint_to_utf16(index)
        byte = offsets.codepoint_to_utf8(index)
        assert unit == len(text[:index].encode("utf-16-le")) // 2
        assert byte == len(text[:index].encode("utf-8"))
        assert offsets.utf16_to_codepoint(unit) == index
        assert offsets.utf8_to_codepoint(byte) == index


@settings(max_examples=150, deadline=None)
@given(texts)
def test_every_unit_is_a_boundary_or_an_error(text: str) -> None:
    offsets = TextOffsets(text)
    boundaries = {offsets.codepoint_to_utf8(i) for i in range(len(text) + 1)}
    for byte in range(offsets.utf8_length + 1):
        if byte in boundaries:
            assert offsets.codepoint_to_utf8(offsets.utf8_to_codepoint(byte)) == byte
        else:
            with pytest.raises(InvalidInput):
                offsets.utf8_to_codepoint(byte)
