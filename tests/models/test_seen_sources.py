"""Reading the numbered sources a model was shown back from its messages."""

from __future__ import annotations

import json

from citelab.models import Message, View, current_view, round_views, sources_in_message

from ._builders import (
    DATA_SCIENCE,
    FEES,
    HISTORY,
    LIBRARY_ROW,
    POOL_ROW,
    numbered_results,
    raw_results,
    search_call,
    source,
    system,
    user,
)


def _uris(view: View) -> dict[int, str]:
    return {n: s.uri for n, s in view.items()}


def test_blocks_in_system_and_tool_messages_are_read_with_their_numbers() -> None:
    messages: list[Message] = [
        system(DATA_SCIENCE, HISTORY),
        user("history?"),
        search_call("c1", "fees"),
        numbered_results("c1", source(3, FEES)),
    ]
    view = current_view(messages)
    assert _uris(view) == {1: DATA_SCIENCE.uri, 2: HISTORY.uri, 3: FEES.uri}
    assert view[3].title == "Tuition fees"
    assert view[3].content == FEES.content


def test_a_later_element_with_the_same_number_overrides_an_earlier_one() -> None:
    messages: list[Message] = [
        system(DATA_SCIENCE, HISTORY),
        user("q"),
        search_call("c1", "fees"),
        numbered_results("c1", source(2, FEES)),
    ]
    assert _uris(current_view(messages)) == {1: DATA_SCIENCE.uri, 2: FEES.uri}


def test_raw_rag_search_json_is_numbered_by_position() -> None:
    tool = raw_results("c1", POOL_ROW, LIBRARY_ROW)
    seen = sources_in_message(tool)
    assert [(s.number, s.uri, s.title) for s in seen] == [
        (1, "entity:page/pool", "Sports centre"),
        (2, "entity:page/library", "Library"),
    ]
    assert seen[0].content == POOL_ROW["content"]


def test_listing_tool_output_is_read_with_metadata_and_field_values() -> None:
    rows = [
        {"label": "Physics", "degree": "MSc", "_metadata": {"type": "program", "id": "p-msc"}},
        {"label": "Physics", "degree": "BSc", "_metadata": {"type": "program", "id": "p-bsc"}},
    ]
    tool = {
        "role": "tool",
        "tool_call_id": "c1",
        "content": json.dumps({"outputs": {"results": rows}}),
    }
    seen = sources_in_message(tool)  # type: ignore[arg-type]
    assert [s.uri for s in seen] == ["entity:program/p-msc", "entity:program/p-bsc"]
    assert [s.content for s in seen] == ["Physics · MSc", "Physics · BSc"]


def test_user_messages_show_the_sources_they_quote() -> None:
    from citelab.sources._block import render_sources_block

    quoted = user("what does this mean?\n" + render_sources_block([DATA_SCIENCE]))
    assert [s.uri for s in sources_in_message(quoted)] == [DATA_SCIENCE.uri]
    assert sources_in_message(user("[1] is wrong, isn't it?")) == []


def test_non_result_tool_output_shows_no_sources() -> None:
    assert sources_in_message(raw_results("c1")) == []
    not_json = {"role": "tool", "tool_call_id": "c1", "content": "42 rows deleted"}
    assert sources_in_message(not_json) == []  # type: ignore[arg-type]


def test_round_views_keep_one_view_per_model_call() -> None:
    messages: list[Message] = [
        system(DATA_SCIENCE),
        user("q"),
        search_call("c1", "pool"),
        raw_results("c1", POOL_ROW),
        search_call("c2", "library"),
        raw_results("c2", LIBRARY_ROW, POOL_ROW),
    ]
    views = [_uris(v) for v in round_views(messages)]
    assert views == [
        {1: DATA_SCIENCE.uri},
        {1: "entity:page/pool"},
        {1: "entity:page/library", 2: "entity:page/pool"},
    ]
