from typing import Any

import pytest

from citelab import ConfigError, InvalidInput
from citelab.corpus import Reader
from citelab.retrieval import MAX_RESULTS_LIMIT, RagResult, RagSearch, SearchIndex, SourceTool

ROW_KEYS = {
    "entity_type",
    "entity_id",
    "langcode",
    "chunk_id",
    "content",
    "score",
    "title",
    "url",
    "bm25_score",
}


def test_spec_is_an_openai_function_tool(university: SearchIndex) -> None:
    spec = RagSearch(university, default_max_results=7).spec
    assert spec["type"] == "function"
    function = spec["function"]
    assert function["name"] == "rag_search"
    assert function["description"]
    parameters = function["parameters"]
    assert parameters["type"] == "object"
    assert parameters["required"] == ["query"]
    assert parameters["additionalProperties"] is False
    assert parameters["properties"]["query"]["type"] == "string"
    max_results = parameters["properties"]["max_results"]
    assert (max_results["type"], max_results["minimum"], max_results["maximum"]) == (
        "integer",
        1,
        50,
    )
    assert "default 7" in max_results["description"]


def test_run_returns_rows_best_first(university: SearchIndex) -> None:
    tool = RagSearch(university)
    output = tool.run({"query": "Data Science admission mathematics"}, Reader.anonymous())
    assert list(output) == ["results"]
    rows = output["results"]
    assert len(rows) == 5
    assert all(set(row) == ROW_KEYS for row in rows)
    scores = [row["score"] for row in rows]
    assert scores == sorted(scores, reverse=True)
    for row in rows:
        RagResult.model_validate(row)
        document = university.corpus.get(row["entity_type"], row["entity_id"])
        assert document is not None
        translation = document.translations[row["langcode"]]
        assert row["content"] in translation.content
        assert (row["title"], row["url"]) == (translation.title, translation.url)
        assert row["chunk_id"].startswith(f"{row['entity_type']}/{row['entity_id']}:")


def test_arguments_may_be_a_json_string_and_max_results_is_honoured(
    university: SearchIndex,
) -> None:
    tool = RagSearch(university, default_max_results=2)
    assert len(tool.run('{"query": "programme"}', Reader.anonymous())["results"]) == 2
    assert (
        len(tool.run('{"query": "programme", "max_results": 9}', Reader.anonymous())["results"])
        == 9
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ('{"query": ', r"rag_search: arguments are not valid JSON \(Expecting value at line 1"),
        ("[1, 2]", "rag_search: arguments must be a JSON object, got an array"),
        ("null", "rag_search: arguments must be a JSON object, got null"),
        ("", "rag_search: missing required argument 'query'"),
        ({}, "rag_search: missing required argument 'query'"),
        ({"query": "   "}, "argument 'query': Value error, must not be blank"),
        ({"query": 42}, "argument 'query': Input should be a valid string"),
        ({"query": "x" * 2001}, "argument 'query': String should have at most 2000 characters"),
        ({"query": "x", "max_results": "5"}, "argument 'max_results': Input should be a valid"),
        ({"query": "x", "max_results": True}, "argument 'max_results': Input should be a valid"),
        ({"query": "x", "max_results": 2.0}, "argument 'max_results': Input should be a valid"),
        ({"query": "x", "max_results": 0}, "argument 'max_results': Input should be greater"),
        ({"query": "x", "max_results": 51}, "argument 'max_results': Input should be less"),
        ({"query": "x", "langcode": "de"}, "unexpected argument 'langcode'"),
    ],
)
def test_bad_arguments_raise_invalid_input_naming_the_problem(
    university: SearchIndex, arguments: Any, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        RagSearch(university).run(arguments, Reader.anonymous())


def test_every_problem_is_reported_at_once(university: SearchIndex) -> None:
    with pytest.raises(InvalidInput) as info:
        RagSearch(university).run({"max_results": 0, "extra": 1}, Reader.anonymous())
    text = str(info.value)
    assert "missing required argument 'query'" in text
    assert "argument 'max_results'" in text
    assert "unexpected argument 'extra'" in text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "rag search"}, "tool name 'rag search' must be 1 to 64"),
        ({"name": ""}, "tool name '' must be"),
        ({"default_max_results": 0}, "max_results must be a positive integer, got 0"),
        ({"default_max_results": True}, "max_results must be a positive integer, got True"),
        ({"default_max_results": 51}, f"max_results must be at most {MAX_RESULTS_LIMIT}, got 51"),
    ],
)
def test_bad_configuration_is_a_config_error(
    university: SearchIndex, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        RagSearch(university, **kwargs)


def test_a_custom_name_appears_in_spec_and_errors(university: SearchIndex) -> None:
    tool = RagSearch(university, name="search_programmes")
    assert tool.spec["function"]["name"] == "search_programmes"
    with pytest.raises(InvalidInput, match=r"^search_programmes: missing"):
        tool.run({}, Reader.anonymous())


def test_reader_language_only_keeps_the_readers_translations(helpcentre: SearchIndex) -> None:
    everywhere = RagSearch(helpcentre)
    german_only = RagSearch(helpcentre, reader_language_only=True)
    reader = Reader.anonymous(langcode="de")
    query = {"query": "Ledgerly Rechnung invoice facture", "max_results": 20}
    assert {r["langcode"] for r in everywhere.run(query, reader)["results"]} > {"de"}
    assert {r["langcode"] for r in german_only.run(query, reader)["results"]} == {"de"}


def test_tools_follow_the_source_tool_protocol(university: SearchIndex) -> None:
    tool = RagSearch(university)
    assert isinstance(tool, SourceTool)
    assert tool.kind == "rag_search"


def test_restricted_documents_reach_only_readers_with_access(intranet: SearchIndex) -> None:
    tool = RagSearch(intranet)
    query = {"query": "Operation Larkspur assembly restructuring", "max_results": 50}
    anonymous = tool.run(query, Reader.anonymous())["results"]
    staff = tool.run(query, Reader(user_id="bob", roles=frozenset({"staff"})))["results"]
    hr = tool.run(query, Reader(user_id="alice", roles=frozenset({"staff", "hr"})))["results"]
    for rows in (anonymous, staff):
        assert "32" not in {row["entity_id"] for row in rows}
        assert not any("Larkspur" in row["content"] + row["title"] for row in rows)
    assert hr[0]["entity_id"] == "32"
