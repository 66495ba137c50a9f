"""The default suite's description and ``evaluations/README.md`` name every variant it runs,
and say how many there are (they said four while the suite ran five)."""

from __future__ import annotations

import re
from pathlib import Path

from citelab.evals import load_suite

ROOT = Path(__file__).resolve().parents[3]
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def test_the_suite_description_names_each_ablation() -> None:
    suite = load_suite("default")
    ablations = [variant.name for variant in suite.variants if variant.name != "baseline"]
    assert "turn_numbering" in ablations
    for name in ablations:
        assert f"({name})" in suite.description, name


def test_the_evaluations_readme_names_every_variant_and_counts_them() -> None:
    names = [variant.name for variant in load_suite("default").variants]
    text = (ROOT / "evaluations" / "README.md").read_text(encoding="utf-8")
    [paragraph] = [part for part in text.split("\n\n") if part.startswith("`default` runs")]
    counted = re.search(r"with (\w+)\s+variants:", paragraph)
    assert counted is not None, paragraph
    assert counted[1] == WORDS[len(names)]
    assert re.findall(r"`(\w+)`", paragraph.split(":", 1)[1].split("(")[0]) == names
