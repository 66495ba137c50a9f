"""The metric glossary says what each metric is in the scorer's own words, as plain text."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from citelab.evals import (
    SCORERS,
    Case,
    CaseRecord,
    GoldTurn,
    Score,
    build_scorers,
    load_suite,
    register_scorer,
    render_html,
    score_records,
)
from citelab.evals.records import (
    RoundRecord,
    TurnRecord,
)
from citelab.evals.report._glossary import metric_glossary

from .._builders import record


def _default_glossary() -> pd.DataFrame:
    specs = [
        spec if isinstance(spec, str) else dict(spec) for spec in load_suite("default").scorers
    ]
    return metric_glossary(build_scorers(specs)).set_index("metric")


def test_definitions_show_no_markup() -> None:
    definitions = _default_glossary()["definition"]
    marked = {
        metric: text for metric, text in definitions.items() if "`" in text or ":class:" in text
    }
    assert marked == {}
    assert "must-cite" in definitions["gold_sources"]


def test_definitions_say_the_configuration_in_words_not_as_keywords() -> None:
    definitions = _default_glossary()["definition"]
    keywords = re.compile(r"\b\w+=\w+")
    assert {m: t for m, t in definitions.items() if keywords.search(t)} == {}
    assert "ALCE's compute_autoais" in definitions["citation_recall_alce"]
    assert "ALCE" not in definitions["citation_recall"]


def test_each_metric_has_its_own_definition() -> None:
    definitions = _default_glossary()["definition"]
    assert definitions.is_unique, definitions[definitions.duplicated(keep=False)].to_dict()
    assert "passage supports" in definitions["numbering_stability_content"]
    assert "passage supports" not in definitions["numbering_stability"]


class _Counted:
    """Counts the answer's words; the ``lexical`` judge is never asked.

    More than the first paragraph.
    """

    name = "word_count"
    metric = "word_count"
    aggregate = "macro"
    higher_is_better = False
    level = "statement"

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        words = len(record.text.split())
        return Score(self.metric, words, 1, float(words))

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


class _Described(_Counted):
    """The class docstring, which the description overrides."""

    name = "described"
    metric = "described"
    description = "Words in the answer, counted by ``str.split``."
    unit = "answer"


def test_a_users_scorer_is_described_in_its_own_words() -> None:
    with SCORERS.preserved():
        register_scorer("word_count", _Counted)
        register_scorer("described")(_Described)
        glossary = metric_glossary(build_scorers(["word_count", "described"]))
        listed = SCORERS.describe()
    rows = glossary.set_index("metric").to_dict("index")
    assert rows["described"]["definition"] == "Words in the answer, counted by str.split."
    assert rows["described"]["unit"] == "answer"
    assert rows["word_count"]["definition"] == (
        "Counts the answer's words; the lexical judge is never asked."
    )
    assert rows["word_count"]["unit"] == "statement-level detail row"
    assert rows["word_count"]["better"] == "lower"
    assert listed["described"] == "Words in the answer, counted by str.split."


def _result_with_baseline(name: str) -> Any:
    records = [
        CaseRecord(
            key=f"{variant}-c",
            variant=variant,
            model="m",
            dataset="d",
            case_id="c",
            turns=[record("Fees are due in May [1].", ("fees",), rounds=[RoundRecord(index=0)])],
        )
        for variant in (name, "other")
    ]
    cases = {("d", "c"): Case(id="c", turns=[GoldTurn(question="When are fees due?")])}
    return score_records(records, cases, build_scorers(["citation_recall"]), seed=1)


def test_the_differences_heading_names_the_baseline_once() -> None:
    page = render_html(_result_with_baseline("baseline"), [], "t")
    assert "<h2>Differences from the baseline</h2>" in page
    assert "(baseline)" not in page
    page = render_html(_result_with_baseline("v1"), [], "t")
    assert "<h2>Differences from the baseline, v1</h2>" in page
