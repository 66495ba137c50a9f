"""ALCE-compatible recall and precision: each of ALCE's six behaviours pinned by its own example.

The expected numbers are derived by hand from ALCE's ``compute_autoais`` (Gao et al. 2023,
``eval.py``) with the judges below; each test says how. The judges are deterministic so the
derivation is exact: ``WordsJudge`` supports a claim when every word of four or more letters
occurs in the evidence, ``FirstTitleJudge`` in addition needs the evidence to *start* with
the passage titled "First" (a judge sensitive to passage order, as an NLI model can be).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from citelab import ConfigError
from citelab.evals import score_answers
from citelab.evals.scorers import (
    alce_remove_citations,
    citation_precision,
    citation_recall,
    sent_tokenize,
    split_statements_alce,
)


class WordsJudge:
    name = "words"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def supports(self, statement: str, evidence: str) -> bool:
        self.calls.append((statement, evidence))
        words = set(re.findall(r"\w{4,}", statement.lower()))
        return bool(words) and words <= set(re.findall(r"\w+", evidence.lower()))

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


class FirstTitleJudge(WordsJudge):
    name = "first-title"

    def supports(self, statement: str, evidence: str) -> bool:
        return evidence.startswith("Title: First\n") and super().supports(statement, evidence)


def doc(title: str, text: str) -> dict[str, str]:
    return {"title": title, "text": text}


def item(output: str, docs: list[dict[str, str]], question: str = "Q?") -> dict[str, Any]:
    return {"question": question, "output": output, "docs": docs}


def alce_values(data: list[dict[str, Any]], judge: Any = None, **options: Any) -> list[Any]:
    """Per answer: (recall, precision) in ALCE-compatible mode (None when skipped)."""
    scorers = [
        {"name": "citation_recall", "alce_compat": True, **options},
        {"name": "citation_precision", "alce_compat": True, **options},
    ]
    result = score_answers({"data": data}, "alce", judge=judge or WordsJudge(), scorers=scorers)
    cases = result.to_pandas("case")
    return [
        (_value(row["citation_recall_alce"]), _value(row["citation_precision_alce"]))
        for row in cases.to_dict("records")
    ]


def own_values(data: list[dict[str, Any]], **options: Any) -> list[Any]:
    scorers = [
        {"name": "citation_recall", **options},
        {"name": "citation_precision", **options},
    ]
    result = score_answers({"data": data}, "alce", judge=WordsJudge(), scorers=scorers)
    return [
        (_value(row["citation_recall"]), _value(row["citation_precision"]))
        for row in result.to_pandas("case").to_dict("records")
    ]


def _value(value: Any) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)


# 1. NLTK punkt sentences ------------------------------------------------------------------


def test_1_sentences_are_nltk_punkt_so_markers_stay_with_their_sentence() -> None:
    # punkt keeps "632 A.D. [1][2]." as one sentence (citelab's regex splitter cut a
    # "[1][2]." sentence off after the abbreviation). Claim 1 "Muhammad died in 632 A.D.."
    # is supported by doc 1 alone: recall 1; precision: doc 1 needed (+1), doc 2 alone does
    # not support and [1] without it does (overcite, 0). Sentence 2 cites doc 2 alone (+1).
    # recall 2/2 = 1, precision 2/3.
    docs = [
        doc("Muhammad", "Muhammad died in Medina in 632 A.D."),
        doc("Brizan", "Brizan wrote about Medina."),
    ]
    output = "Muhammad died in 632 A.D. [1][2]. Brizan wrote about Medina [2]."
    assert sent_tokenize(output) == [
        "Muhammad died in 632 A.D. [1][2].",
        "Brizan wrote about Medina [2].",
    ]
    assert alce_values([item(output, docs)]) == [(1.0, 0.6667)]


def test_1_punkt_moves_a_marker_after_a_full_stop_into_the_next_sentence() -> None:
    # "Medina is a city.[1] It is in Saudi Arabia [2]." → punkt: "Medina is a city." (no
    # citation: 0) and "[1] It is in Saudi Arabia [2]." (claim "It is in Saudi Arabia.",
    # supported by [1][2]; each alone supports it too: both count). recall 1/2, precision 2/2.
    docs = [doc("Medina", "Medina is a city in Saudi Arabia."), doc("Saudi", "Saudi Arabia.")]
    output = "Medina is a city.[1] It is in Saudi Arabia [2]."
    statements = split_statements_alce(output)
    assert [(s.text, s.citations) for s in statements] == [
        ("Medina is a city.", ()),
        ("[1] It is in Saudi Arabia [2].", (1, 2)),
    ]
    assert statements[1].claim == "It is in Saudi Arabia."
    assert alce_values([item(output, docs)]) == [(0.5, 1.0)]


def test_alce_citation_removal_is_alces_rule() -> None:
    assert alce_remove_citations("Died in 632 A.D. [1][2].") == "Died in 632 A.D.."
    assert alce_remove_citations("Fees are due [1, 2] | late.") == "Fees are due, 2 late."


# 2. <|im_end|> and the first line ---------------------------------------------------------


def test_2_im_end_is_removed_and_an_empty_output_is_skipped() -> None:
    # Output 1: first line only, "<|im_end|>" dropped → "Medina is holy [1]." recall 1,
    # precision 1. Output 2 is empty once "<|im_end|>" is gone: ALCE skips it (no value,
    # not a zero), so the means are over output 1 only.
    docs = [doc("Medina", "Medina is holy.")]
    data = [
        item("\nMedina is<|im_end|> holy [1].\nParis is holy [1].", docs),
        item("<|im_end|>", docs),
    ]
    assert alce_values(data) == [(1.0, 1.0), (None, None)]
    result = score_answers({"data": data}, "alce", judge=WordsJudge())
    summary = result.summary().set_index("metric")
    assert summary.loc["citation_recall_alce", "cases"] == 1
    assert summary.loc["citation_recall_alce", "value"] == 1.0


# 3. [0] is the last document --------------------------------------------------------------


def test_3_marker_zero_names_the_last_document_in_compat_mode_only() -> None:
    # ALCE: ref = 0 - 1 = -1, docs[-1] is the last doc, which supports the claim: 1 / 1.
    # citelab's own mode: [0] names no source: out of range, recall 0 (precision 0 of 1).
    docs = [doc("Alpha", "Alpha facts."), doc("Medina", "Medina is holy.")]
    data = [item("Medina is holy [0].", docs)]
    assert alce_values(data) == [(1.0, 1.0)]
    assert own_values(data) == [(0.0, 0.0)]


# 4. range check before the cap ------------------------------------------------------------


def test_4_every_marker_is_range_checked_before_the_cap() -> None:
    # "[1][2][3][9]" with 3 docs: ALCE finds 9 out of range before keeping 3 citations, so
    # recall 0, and no citation is counted: precision 0. citelab caps first ([1][2][3]):
    # doc 1 supports (recall 1), docs 2 and 3 are overcites: precision 1/3.
    docs = [doc("Medina", "Medina is holy."), doc("B", "Other."), doc("C", "Else.")]
    data = [item("Medina is holy [1][2][3][9].", docs)]
    assert alce_values(data) == [(0.0, 0.0)]
    assert own_values(data, max_citations=3) == [(1.0, 0.3333)]


def test_4_the_cap_keeps_the_first_three_citations_with_repeats() -> None:
    # [2][2][2][1]: all in range; the cap keeps [2][2][2], which do not support: recall 0.
    docs = [doc("Medina", "Medina is holy."), doc("B", "Other.")]
    assert alce_values([item("Medina is holy [2][2][2][1].", docs)]) == [(0.0, 0.0)]


# 5. the precision step removes the first equal citation -----------------------------------


def test_5_a_repeated_citation_is_tested_without_its_first_occurrence() -> None:
    # Claim "Medina holy city" needs both docs, and FirstTitleJudge needs "First" first.
    # [1][2][1]: joint [1,2,1] supports (recall 1). Precision, per position:
    #   0 (doc 1): alone no; without the first 1 → [2,1]: starts with Second → no → counts;
    #   1 (doc 2): alone no; without it → [1,1]: lacks "city" → no → counts;
    #   2 (doc 1): alone no; ALCE removes the *first* 1 → [2,1] → no → counts.
    # ALCE: 3/3. Removing position 2 instead would test [1,2], which supports: 2/3.
    docs = [doc("First", "Medina holy."), doc("Second", "City.")]
    data = [item("Medina holy city [1][2][1].", docs)]
    assert alce_values(data, judge=FirstTitleJudge()) == [(1.0, 1.0)]
    scorer = citation_precision(FirstTitleJudge(), alce_compat=True)
    assert scorer._others((1, 2, 1), 2) == (2, 1)
    own = citation_precision(FirstTitleJudge())
    assert own._others((1, 2, 1), 2) == (1, 2)


# 6. QAMPARI ---------------------------------------------------------------------------------


def test_6_qampari_items_are_prefixed_with_the_question_and_empty_scores_zero(
    tmp_path: Path,
) -> None:
    # "Medina [1], Mecca [2], Paris." → items "Q Medina [1]", "Q Mecca [2]", "Q Paris" (Q the
    # question). Docs 1 and 2 hold the question's words and their city: items 1 and 2 are
    # supported by their one citation, item 3 is uncited. recall 2/3, precision 2/2.
    # An empty output is one item ("Q ") without citations: recall 0, precision 0 — scored,
    # not skipped.
    question = "Which cities are holy?"
    docs = [
        doc("Holy", "Which cities are holy? Medina."),
        doc("Holy", "Which cities are holy? Mecca."),
    ]
    data = [item("Medina [1], Mecca [2], Paris.", docs, question), item("", docs, question)]
    assert alce_values(data, qampari=True) == [(0.6667, 1.0), (0.0, 0.0)]
    statements = split_statements_alce(
        "Medina [1], Mecca [2], Paris.", question=question, qampari=True
    )
    assert [s.claim for s in statements] == [
        "Which cities are holy? Medina",
        "Which cities are holy? Mecca",
        "Which cities are holy? Paris",
    ]
    # ALCE switches the mode on from the file name; so does score_answers.
    path = tmp_path / "qampari_results.json"
    path.write_text(json.dumps({"data": data}), encoding="utf-8")
    result = score_answers(path, "alce", judge=WordsJudge())
    cases = result.to_pandas("case")
    assert result.config["qampari"] is True
    assert [round(v, 4) for v in cases["citation_recall_alce"]] == [0.6667, 0.0]
    plain = tmp_path / "asqa_results.json"
    plain.write_text(json.dumps({"data": data}), encoding="utf-8")
    assert score_answers(plain, "alce", judge=WordsJudge()).config["qampari"] is False


def test_qampari_needs_the_compat_mode() -> None:
    with pytest.raises(ConfigError, match="alce_compat"):
        citation_recall(qampari=True)


def test_precision_is_macro_and_an_answer_without_citations_scores_zero() -> None:
    # Answer 1: supported single citation: 1 / 1. Answer 2: no citation at all: recall 0,
    # precision 0 (ALCE: total_citations = 0 → 0). Means: recall 0.5, precision 0.5.
    docs = [doc("Medina", "Medina is holy.")]
    data = [item("Medina is holy [1].", docs), item("Medina is holy.", docs)]
    assert alce_values(data) == [(1.0, 1.0), (0.0, 0.0)]
    result = score_answers({"data": data}, "alce", judge=WordsJudge())
    summary = result.summary(scale=100).set_index("metric")
    assert summary.loc["citation_precision_alce", "value"] == pytest.approx(50.0)
    assert summary.loc["citation_recall_alce", "value"] == pytest.approx(50.0)


def test_the_judge_reads_alces_passage_format() -> None:
    # ALCE's _format_document: "Title: <title>\n<text>", joined by "\n"; "sent" wins.
    judge = WordsJudge()
    docs = [doc("Medina", "Medina is holy."), {"title": "Mecca", "text": "x", "sent": "Mecca."}]
    alce_values([item("Medina and Mecca are holy [1][2].", docs)], judge=judge)
    assert judge.calls[0] == (
        "Medina and Mecca are holy.",
        "Title: Medina\nMedina is holy.\nTitle: Mecca\nMecca.",
    )
