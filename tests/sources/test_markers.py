"""The citation marker grammar, and where ``[n]`` is not a citation."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from citelab.sources import MAX_GROUP_NUMBERS, Marker, parse_markers


def found(text: str) -> list[tuple[str, tuple[int, ...]]]:
    return [(m.raw, m.numbers) for m in parse_markers(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fees rose [3].", [("[3]", (3,))]),
        ("Both [1][3].", [("[1]", (1,)), ("[3]", (3,))]),
        ("Both [1, 3] and [1,3].", [("[1, 3]", (1, 3)), ("[1,3]", (1, 3))]),
        ("Range [2-4].", [("[2-4]", (2, 3, 4))]),
        ("En dash [2–4].", [("[2–4]", (2, 3, 4))]),
        ("Mixed [5, 1-2, 5].", [("[5, 1-2, 5]", (5, 1, 2, 5))]),
        ("Zero [0].", [("[0]", (0,))]),
        ("Wow![1]", [("[1]", (1,))]),
        ("Large [1000].", [("[1000]", (1000,))]),
        ("Indented [1]: like this", [("[1]", (1,))]),
        # Markdown reads these as text, so they are citations (a definition cannot interrupt
        # a paragraph; a space or a bad destination after "]" makes no link).
        ("A paragraph\n[1]: its next line", [("[1]", (1,))]),
        ("not a link [see [1]] (x) or [see [2]](a b)", [("[1]", (1,)), ("[2]", (2,))]),
        ("an image's text ![see [3]](cat.png)", [("[3]", (3,))]),
    ],
)
def test_markers_that_are_citations(text: str, expected: list[tuple[str, tuple[int, ...]]]) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "a link [1](https://uni.example)",
        "an image ![1](cat.png)",
        "a reference link [1][ref] and [1][]",
        "a reference label [see here][1]",
        "a chain before a link [1][2](x)",
        "[1]: https://uni.example/definition",
        "  [1]: an indented definition",
        "A paragraph.\n\n   [2]: a definition after a blank line",
        "a link's text [see [1] and [2-3]](https://uni.example 'title')",
        "a link's text with a <destination> [see [4]](<a b>)",
        "a footnote [^1]",
        r"an escaped bracket \[1]",
        "not the grammar [01] [ 1 ] [1;2] [1 2] [12345] [-1] [1-]",
        "a reversed range [4-2]",
        f"a huge range [1-{MAX_GROUP_NUMBERS + 1}]",
        "nested [[1]] and [1, [2]] and [3 [4] ]",
    ],
)
def test_things_that_are_not_citations(text: str) -> None:
    assert found(text) == []


def test_group_of_exactly_the_limit_is_a_citation() -> None:
    [(_, numbers)] = found(f"[1-{MAX_GROUP_NUMBERS}]")
    assert numbers == tuple(range(1, MAX_GROUP_NUMBERS + 1))


def test_an_even_number_of_backslashes_escapes_the_backslash_only() -> None:
    assert found(r"two \\[1] three \\\[2]") == [("[1]", (1,))]


def test_escaped_closing_bracket_does_not_hide_the_next_marker() -> None:
    assert found(r"\[9\][1]") == [("[1]", (1,))]


def test_markers_inside_code_are_left_alone() -> None:
    text = (
        "Inline `x[1]` and ``a ` [2]`` but [3].\n"
        "\n"
        "```python\n"
        "rows[4]\n"
        "```\n"
        "\n"
        "    indented [5]\n"
        "\n"
        "~~~\n"
        "unclosed [6]\n"
    )
    assert found(text) == [("[3]", (3,))]


def test_an_indented_line_continuing_a_paragraph_is_not_code() -> None:
    assert found("A claim\n    continued [1].") == [("[1]", (1,))]


def test_nested_list_content_is_not_code() -> None:
    text = "- item\n\n    - nested [1]\n\n        still the item [2]\n"
    assert found(text) == [("[1]", (1,)), ("[2]", (2,))]


def test_positions_are_code_points() -> None:
    text = "😀 é [2]"
    [marker] = parse_markers(text)
    assert marker == Marker(4, 7, (2,), "[2]")
    assert text[marker.start : marker.end] == "[2]"


# Differential test: markdown-it-py (the front end renders with markdown-it) decides what is
# code; the numbers left in its text tokens must be exactly the ones parse_markers finds.
_MD = MarkdownIt("commonmark")
_BRACKETED = re.compile(r"\[(\d+)\]")
_LINES = [
    "",
    "text {m} more",
    "    indented {m}",
    "      deep {m}",
    "        deeper {m}",
    "\t tab {m}",
    "  continued {m}",
    "```",
    "````",
    "```py {m}",
    "   ```",
    "    ```",
    "~~~",
    "  ~~~~",
    "- item {m}",
    "- ",
    "-",
    "* star {m}",
    "  - nested {m}",
    "   - three {m}",
    "    - four {m}",
    "1. item {m}",
    "2. item {m}",
    "10. ten {m}",
    "3) item {m}",
    "1.   wide {m}",
    "-      wide content {m}",
    "`code {m}` and {m}",
    "``a ` {m}``",
    "`` {m}",
    "{m} `",
    "x` {m}",
    "\\`x {m}`",
    "# head `x {m}",
    "## `{m}`",
    "---",
    "===",
    "* * *",
]


def _fill(lines: list[str], newline: str) -> str:
    counter = iter(range(1, 1000))
    return newline.join(re.sub(r"\{m\}", lambda _: f"[{next(counter)}]", line) for line in lines)


def _markdown_it_numbers(text: str) -> list[int]:
    numbers = []
    for token in _MD.parse(text):
        for child in token.children or []:
            if child.type == "text":
                numbers += [int(n) for n in _BRACKETED.findall(child.content)]
    return numbers


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(st.sampled_from(_LINES), min_size=1, max_size=9),
    newline=st.sampled_from(["\n", "\r\n"]),
)
def test_code_detection_agrees_with_markdown_it(lines: list[str], newline: str) -> None:
    text = _fill(lines, newline)
    ours = [n for marker in parse_markers(text) for n in marker.numbers]
    assert ours == _markdown_it_numbers(text)
