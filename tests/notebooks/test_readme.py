"""``notebooks/README.md`` lists every notebook and counts them right (it said "all four"
after the fifth was added). No kernel: this reads files only."""

from __future__ import annotations

import re
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def test_the_notebooks_readme_lists_and_counts_every_notebook() -> None:
    names = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))
    text = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"^\| `(\w+\.ipynb)` \|", text, re.M) == names
    counts = re.findall(r"\b(\w+) tutorials\b|runs all (\w+)", text, re.I)
    assert [word.lower() for pair in counts for word in pair if word] == [WORDS[len(names)]] * 2
