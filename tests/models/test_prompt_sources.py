"""The offline model reads the common numbered-source shapes, in any message, over real HTTP.

Each shape is sent through the real ``openai`` SDK to ``serve-model``'s chat-completions
route (and, in test_anthropic_model.py, through the ``anthropic`` SDK): the answer must quote
the source that answers and cite it under the number the prompt gave it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import openai
import pytest

from citelab.models import ExtractiveModel, RunningServer, serve_in_thread
from citelab.models._prompt_sources import question_of, read_sources
from citelab.models._seen import current_view

# Two invented lake descriptions; the question is answered by the one numbered 2.
ONTARIO = "Lake Ontario is the smallest of the five lakes by surface area. Its outflow is a river."
SUPERIOR = (
    "Lake Superior holds ten percent of the fresh surface water on the planet. "
    "Its deepest point lies 406 metres below the surface."
)
QUESTION = "How deep is Lake Superior at its deepest point?"

PLAIN = f"Sources:\n[1] Lake Ontario\n{ONTARIO}\n\n[2] Lake Superior\n{SUPERIOR}"
SOURCE_N = f"Source 1: Lake Ontario\n{ONTARIO}\n\nSource 2: Lake Superior\n{SUPERIOR}"
DOCUMENTS = (
    "<documents>\n"
    f'<document index="1">\n<source>ontario.md</source>\n'
    f"<document_content>\n{ONTARIO}\n</document_content>\n</document>\n"
    f'<document index="2">\n<source>superior.md</source>\n'
    f"<document_content>\n{SUPERIOR}\n</document_content>\n</document>\n"
    "</documents>"
)
MARKDOWN = f"## Sources\n\n1. **Lake Ontario**: {ONTARIO}\n2. **Lake Superior**: {SUPERIOR}"
JSON_ARRAY = json.dumps(
    [
        {"number": 1, "title": "Lake Ontario", "text": ONTARIO},
        {"number": 2, "title": "Lake Superior", "text": SUPERIOR},
    ]
)
JSON_IDS = json.dumps(
    [
        {"id": 7, "title": "Lake Ontario", "text": ONTARIO},
        {"id": 2, "title": "Lake Superior", "text": SUPERIOR},
    ]
)

SHAPES = {
    "bracket": PLAIN,
    "source-n": SOURCE_N,
    "document-index": DOCUMENTS,
    "markdown-list": MARKDOWN,
    "json-array": JSON_ARRAY,
}


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(ExtractiveModel()) as running:
        yield running


def _ask(server: RunningServer, messages: list[dict[str, object]]) -> str:
    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    completion = client.chat.completions.create(model="extractive", messages=messages)  # type: ignore[arg-type]
    return completion.choices[0].message.content or ""


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_in_the_system_prompt_gets_a_cited_answer(
    server: RunningServer, shape: str
) -> None:
    text = _ask(
        server,
        [
            {"role": "system", "content": "Answer from these sources.\n\n" + SHAPES[shape]},
            {"role": "user", "content": QUESTION},
        ],
    )
    assert "406 metres below the surface [2]." in text
    assert "[1]" not in text


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_in_the_user_message_is_cut_from_the_question(
    server: RunningServer, shape: str
) -> None:
    prompt = f"{SHAPES[shape]}\n\nQuestion: {QUESTION}"
    text = _ask(server, [{"role": "user", "content": prompt}])
    assert "406 metres below the surface [2]." in text


def test_plain_prompt_with_the_question_last_and_no_label(server: RunningServer) -> None:
    text = _ask(server, [{"role": "user", "content": f"{PLAIN}\n\n{QUESTION}"}])
    assert "406 metres below the surface [2]." in text


@pytest.mark.parametrize("shape", ["json-array", "bracket", "document-index"])
def test_each_shape_in_a_tool_result_is_read(server: RunningServer, shape: str) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    text = _ask(
        server,
        [
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": SHAPES[shape]},
        ],
    )
    assert "406 metres below the surface [2]." in text


def test_json_ids_are_the_numbers_when_they_are_integers(server: RunningServer) -> None:
    text = _ask(
        server,
        [{"role": "system", "content": JSON_IDS}, {"role": "user", "content": QUESTION}],
    )
    assert "406 metres below the surface [2]." in text
    found, _ = read_sources(json.dumps([{"id": "a", "text": "x"}, {"id": "b", "text": "y"}]))
    assert [s.number for s in found] == [1, 2]  # ids that are not numbers: by position


def test_the_same_prompt_gives_the_same_answer(server: RunningServer) -> None:
    messages: list[dict[str, object]] = [{"role": "user", "content": f"{MARKDOWN}\n\n{QUESTION}"}]
    assert len({_ask(server, messages) for _ in range(3)}) == 1


# --- the reader itself ----------------------------------------------------------------------


def test_titles_urls_and_the_rest_of_the_text() -> None:
    text = (
        "Context:\n"
        "[1] Lake Ontario (https://lakes.example/ontario)\n"
        f"{ONTARIO}\n"
        "[2] Lake Superior\n"
        "URL: https://lakes.example/superior\n"
        f"{SUPERIOR}\n"
        "Question: which lake is deepest?"
    )
    found, rest = read_sources(text)
    assert [(s.number, s.title, s.uri) for s in found] == [
        (1, "Lake Ontario", "https://lakes.example/ontario"),
        (2, "Lake Superior", "https://lakes.example/superior"),
    ]
    assert found[1].content == SUPERIOR
    assert rest.strip() == "Question: which lake is deepest?"
    assert question_of(text) == "which lake is deepest?"


def test_one_line_entries_split_title_from_text() -> None:
    found, _ = read_sources("Sources:\n[1] Lake Ontario: smallest lake.\n[2] Lake Erie — shallow.")
    assert [(s.title, s.content) for s in found] == [
        ("Lake Ontario", "smallest lake."),
        ("Lake Erie", "shallow."),
    ]


def test_markdown_links_and_indented_continuations() -> None:
    text = (
        "### Search results\n"
        "1. [Lake Ontario](https://lakes.example/ontario) - the smallest lake.\n"
        "2. **Lake Superior**\n"
        "   The deepest lake.\n"
        "\n"
        "Answer briefly."
    )
    found, rest = read_sources(text)
    assert [(s.number, s.title, s.content, s.uri) for s in found] == [
        (1, "Lake Ontario", "the smallest lake.", "https://lakes.example/ontario"),
        (2, "Lake Superior", "The deepest lake.", "source:2"),
    ]
    assert rest.strip() == "Answer briefly."


def test_numbered_instructions_without_a_sources_heading_are_not_sources() -> None:
    rules = "Rules:\n1. Cite every claim.\n2. Be brief."
    assert read_sources(rules) == ([], rules)
    assert current_view([{"role": "system", "content": rules}]) == {}


def test_a_question_that_starts_with_a_marker_is_not_a_source() -> None:
    assert read_sources("[2] says 406 metres?", strict=True)[0] == []
    assert question_of("[2] says 406 metres?") == "[2] says 406 metres?"


def test_prose_without_numbers_shows_no_sources() -> None:
    prose = "Lake Superior is deep. Lake Ontario is small."
    assert read_sources(prose) == ([], prose)
