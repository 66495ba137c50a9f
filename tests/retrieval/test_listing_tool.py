from typing import Any

import pytest

from citelab import ConfigError, InvalidInput
from citelab.corpus import Corpus, Reader, load_corpus
from citelab.retrieval import ListedResult, ListingTool, SearchIndex, SourceTool

SCIENCE = "Faculty of Science"


def _listing(corpus: Corpus, filters: dict[str, Any], **kwargs: Any) -> ListingTool:
    return ListingTool("list_programmes", "All programmes of a faculty.", corpus, filters, **kwargs)


def test_rag_shaped_rows_keep_same_label_entities_apart(university: SearchIndex) -> None:
    tool = _listing(university.corpus, {"faculty": SCIENCE})
    rows = tool.run({}, Reader.anonymous())["results"]
    data_science = [row for row in rows if row["title"] == "Data Science"]
    assert [row["entity_id"] for row in data_science] == [
        "data-science-bsc",
        "data-science-msc",
        "data-science-cert",
    ]
    assert [row["fields"]["degree"] for row in data_science] == ["BSc", "MSc", "Certificate"]
    assert all(row["fields"]["faculty"] == SCIENCE for row in rows)
    assert all(ListedResult.model_validate(row).score == 1.0 for row in rows)
    assert data_science[2]["content"] == ""
    assert data_science[1]["content"].startswith("The Data Science MSc is a four-semester")
    assert data_science[1]["chunk_id"] == "program/data-science-msc:en:0"
    assert len(rows) == 11


def test_tool_api_shaped_output(university: SearchIndex) -> None:
    tool = _listing(university.corpus, {"faculty": SCIENCE, "degree": "MSc"}, shape="tool_api")
    output = tool.run("", Reader.anonymous())
    assert set(output) == {"outputs", "summary"}
    rows = output["outputs"]["results"]
    first = rows[0]
    assert first == {
        "degree": "MSc",
        "faculty": SCIENCE,
        "ects": 120,
        "language": "English",
        "_metadata": {
            "type": "program",
            "id": "data-science-msc",
            "langcode": "en",
            "url": "https://study.hollin-university.example/programmes/data-science-msc",
        },
        "label": "Data Science",
    }
    assert output["summary"] == (
        f"Listed {len(rows)} entities where faculty = {SCIENCE} and degree = MSc."
    )


def test_filters_accept_lists_and_match_list_fields_strictly(university: SearchIndex) -> None:
    corpus = university.corpus
    both = _listing(corpus, {"degree": ["BA", "MA"]})
    degrees = {row["fields"]["degree"] for row in both.run({}, Reader.anonymous())["results"]}
    assert degrees == {"BA", "MA"}
    as_text = _listing(corpus, {"ects": "120"})
    assert as_text.run({}, Reader.anonymous())["results"] == []
    as_number = _listing(corpus, {"ects": 120})
    assert as_number.run({}, Reader.anonymous())["results"]
    pages = _listing(corpus, {}, entity_type="page", shape="tool_api")
    output = pages.run({}, Reader.anonymous())
    assert {row["_metadata"]["type"] for row in output["outputs"]["results"]} == {"page"}
    assert output["summary"] == "Listed 4 entities of type page."


def test_list_valued_fields_match_any_element(document: Any) -> None:
    corpus = Corpus(
        [
            document("1", fields={"tags": ["exam", "deadline"]}),
            document("2", fields={"tags": ["exam"]}),
            document("3", fields={"tags": "deadline"}),
            document("4", fields={}),
        ]
    )
    tool = _listing(corpus, {"tags": "deadline"})
    assert [r["entity_id"] for r in tool.run({}, Reader.anonymous())["results"]] == ["1", "3"]


def test_max_results_caps_the_listing_and_the_summary_says_so(university: SearchIndex) -> None:
    tool = _listing(university.corpus, {"faculty": SCIENCE}, shape="tool_api", max_results=3)
    output = tool.run({}, Reader.anonymous())
    assert len(output["outputs"]["results"]) == 3
    assert output["summary"] == f"Listed the first 3 of 11 entities where faculty = {SCIENCE}."


def test_rows_use_the_readers_language_when_the_entity_has_it(corpora_dir: Any) -> None:
    corpus = load_corpus(corpora_dir / "helpcentre.jsonl")
    tool = _listing(corpus, {"category": "Taxes"}, shape="tool_api")
    rows = tool.run({}, Reader.anonymous(langcode="de"))["outputs"]["results"]
    languages = {row["_metadata"]["id"]: row["_metadata"]["langcode"] for row in rows}
    assert languages["135"] == "de"
    assert languages["139"] == "fr"  # exists only in French: kept in French
    rag = _listing(corpus, {"category": "Invoices"}).run({}, Reader.anonymous(langcode="fr"))
    by_id = {row["entity_id"]: row for row in rag["results"]}
    assert by_id["104"]["langcode"] == "fr"
    assert by_id["104"]["title"] == "Créer votre première facture"
    assert by_id["124"]["langcode"] == "en"  # no French version: the default language


def test_listings_only_show_what_the_reader_may_read(intranet_corpus: Corpus) -> None:
    tool = _listing(intranet_corpus, {"department": "People"}, shape="tool_api")
    anonymous = tool.run({}, Reader.anonymous())["outputs"]["results"]
    alice = tool.run({}, Reader(user_id="alice", roles=frozenset({"staff", "hr"})))
    ids = {row["_metadata"]["id"] for row in anonymous}
    assert ids == {"4", "10", "12"}
    alice_ids = {row["_metadata"]["id"] for row in alice["outputs"]["results"]}
    assert {"31", "32", "40", "42"} <= alice_ids
    assert "Listed 3 entities" in tool.run({}, Reader.anonymous())["summary"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"faculty": "Engineering"}, "list_programmes: unexpected argument 'faculty'"),
        ("[]", "list_programmes: arguments must be a JSON object, got an array"),
        ("{", "list_programmes: arguments are not valid JSON"),
    ],
)
def test_listing_arguments_are_validated(
    university: SearchIndex, arguments: Any, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        _listing(university.corpus, {}).run(arguments, Reader.anonymous())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"shape": "csv"}, "shape must be 'rag' or 'tool_api', got 'csv'"),
        ({"max_results": 0}, "max_results must be a positive integer, got 0"),
    ],
)
def test_bad_listing_configuration(
    university: SearchIndex, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        _listing(university.corpus, {}, **kwargs)
    with pytest.raises(ConfigError, match="tool name"):
        ListingTool("list programmes", "x", university.corpus, {})


def test_listing_spec_and_protocol(university: SearchIndex) -> None:
    tool = _listing(university.corpus, {"faculty": SCIENCE})
    assert tool.spec == {
        "type": "function",
        "function": {
            "name": "list_programmes",
            "description": "All programmes of a faculty.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    }
    assert isinstance(tool, SourceTool)
    assert tool.kind == "listing"
