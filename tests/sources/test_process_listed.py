"""Listing-tool output → sources: both row shapes, no gate or rerank, label lines."""

from __future__ import annotations

from typing import Any

import pytest
from sources_builders import STAFF_ONLY, campus_corpus, doc

from citelab import InvalidInput
from citelab.corpus import Corpus, Reader
from citelab.sources import (
    RetrievalSettings,
    listed_summary,
    merge_round,
    process_listed,
    sources_block,
)

ANONYMOUS = Reader.anonymous()


def tool_api(*rows: dict[str, Any], summary: str = "Listed programs.") -> dict[str, Any]:
    return {"outputs": {"results": list(rows)}, "summary": summary}


def program(entity_id: str, label: str, **fields: Any) -> dict[str, Any]:
    return {"_metadata": {"type": "program", "id": entity_id}, "label": label, **fields}


def test_two_same_label_entities_at_two_degree_levels_stay_distinguishable() -> None:
    output = tool_api(
        program("10", "Physics", degree="BSc", faculty="Science"),
        program("11", "Physics", degree="MSc", faculty="Science"),
    )
    sources = merge_round([], process_listed(output, RetrievalSettings(), ANONYMOUS))
    assert [(s.number, s.uri, s.content) for s in sources] == [
        (1, "entity:program/10", "Physics · BSc · Science"),
        (2, "entity:program/11", "Physics · MSc · Science"),
    ]
    block = sources_block(sources)
    assert "Physics · BSc" in block
    assert "Physics · MSc" in block


def test_rag_shaped_listing_with_empty_content_uses_its_fields() -> None:
    output = {
        "results": [
            {
                "entity_type": "program",
                "entity_id": "10",
                "langcode": "en",
                "content": "",
                "score": 1.0,
                "title": "Physics",
                "url": None,
                "fields": {"degree": "BSc", "tags": ["lab", "day"], "online": True},
            },
            {
                "entity_type": "program",
                "entity_id": "11",
                "title": "Physics",
                "fields": {"degree": "MSc", "tags": [], "contact": {"office": "B 2.14"}},
            },
        ]
    }
    sources = process_listed(output, RetrievalSettings(), ANONYMOUS, tool="programs")
    assert [s.content for s in sources] == ["Physics · BSc · lab · day", "Physics · MSc · B 2.14"]
    assert {s.tool for s in sources} == {"programs"}
    assert sources[0].fields["online"] is True


def test_rows_with_content_keep_it() -> None:
    output = {"results": [{"entity_type": "node", "entity_id": "1", "content": "Apply by March."}]}
    [source] = process_listed(output, RetrievalSettings(), ANONYMOUS)
    assert source.content == "Apply by March."


def test_listing_skips_the_gate_and_the_reranker() -> None:
    output = {
        "results": [
            {"entity_type": "node", "entity_id": str(n), "content": f"item {n}", "score": 0.01}
            for n in range(1, 4)
        ]
    }
    settings = RetrievalSettings(threshold=0.9, reranker="no-such-reranker", entity_cap=1)
    sources = process_listed(output, settings, ANONYMOUS)
    assert [s.entity_id for s in sources] == ["1", "2", "3"]


def test_only_the_tools_own_max_results_applies() -> None:
    output = tool_api(*(program(str(n), f"Program {n}") for n in range(1, 6)))
    settings = RetrievalSettings(max_results=1)
    assert len(process_listed(output, settings, ANONYMOUS)) == 5
    capped = process_listed(output, settings, ANONYMOUS, max_results=2)
    assert [s.entity_id for s in capped] == ["1", "2"]
    with pytest.raises(InvalidInput, match="max_results must be at least 1, got 0"):
        process_listed(output, settings, ANONYMOUS, max_results=0)


def test_label_is_in_the_readers_language_with_the_corpus() -> None:
    output = tool_api({"_metadata": {"type": "node", "id": "1", "langcode": "en"}, "label": "x"})
    [source] = process_listed(
        output, RetrievalSettings(), Reader(langcode="de"), corpus=campus_corpus()
    )
    assert (source.title, source.langcode) == ("Zulassung", "de")
    assert source.content == "Zulassung"


def test_label_falls_back_to_the_listed_language() -> None:
    corpus = Corpus([doc("7", {"en": ("Library", ""), "it": ("Biblioteca", "")})])
    output = tool_api({"_metadata": {"type": "node", "id": 7, "langcode": "it"}, "label": "x"})
    [source] = process_listed(output, RetrievalSettings(), Reader(langcode="fr"), corpus=corpus)
    assert (source.title, source.langcode) == ("Biblioteca", "it")


def test_restricted_listed_entity_is_dropped_for_readers_without_access() -> None:
    corpus = Corpus(
        [
            doc("1", {"en": ("Open day", "")}),
            doc("2", {"en": ("Staff party", "")}, access=STAFF_ONLY),
        ]
    )
    output = tool_api(
        {"_metadata": {"type": "node", "id": "1"}, "label": "Open day"},
        {"_metadata": {"type": "node", "id": "2"}, "label": "Staff party"},
    )
    sources = process_listed(output, RetrievalSettings(), ANONYMOUS, corpus=corpus, max_results=1)
    assert [s.title for s in sources] == ["Open day"]
    staff = Reader(user_id="s", roles=frozenset({"staff"}))
    assert len(process_listed(output, RetrievalSettings(), staff, corpus=corpus)) == 2


def test_metadata_url_is_the_sources_url() -> None:
    output = tool_api(
        {"_metadata": {"type": "node", "id": "1", "url": "https://uni.example/1"}, "label": "A"}
    )
    [source] = process_listed(output, RetrievalSettings(), ANONYMOUS)
    assert source.url == "https://uni.example/1"
    assert source.fields == {}


def test_summary_is_available_for_the_tool_message() -> None:
    assert listed_summary(tool_api(summary="Listed 2 programs.")) == "Listed 2 programs."
    assert listed_summary({"results": []}) is None


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        ([{"results": []}], "source tool output: expected an object, got list"),
        ("Listed 3 programs", "source tool output: expected an object, got str"),
        ({"items": []}, "expected 'results' or 'outputs.results', got keys ['items']"),
        ({"outputs": {"rows": []}}, "expected 'results' or 'outputs.results'"),
        ({"results": {"a": 1}}, "results: expected a list, got dict"),
        ({"results": [], "summary": 3}, "summary: expected a string, got int"),
        (tool_api({"label": "no metadata"}), "outputs.results[0]._metadata: Field required"),
        (
            tool_api(program("1", "A"), {"_metadata": {"type": "program"}, "label": "B"}),
            "outputs.results[1]._metadata.id: Field required",
        ),
        (tool_api(program("1", "A"), "B"), "outputs.results[1]: expected an object, got str"),
        ({"results": [{"entity_id": "1"}]}, "results[0].entity_type: Field required"),
        (
            {"results": [{"entity_type": "node", "entity_id": "1", "label": 5}]},
            "results[0].label: Input should be a valid string",
        ),
    ],
)
def test_bad_output_names_the_row_and_field(output: Any, problem: str) -> None:
    with pytest.raises(InvalidInput) as info:
        process_listed(output, RetrievalSettings(), ANONYMOUS)
    assert problem in str(info.value)


def test_every_problem_is_reported_at_once() -> None:
    rows = [{"_metadata": {"type": "program", "id": True}} for _ in range(25)]
    with pytest.raises(InvalidInput) as info:
        process_listed(tool_api(*rows), RetrievalSettings(), ANONYMOUS)
    message = str(info.value)
    assert message.startswith("25 problem(s) in tool output")
    assert "outputs.results[19]._metadata.id" in message
    assert "… and 5 more" in message
