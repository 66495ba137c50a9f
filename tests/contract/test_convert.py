"""Converters to and from other systems' citation shapes: round trips and declared losses."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionMessage
from openai.types.responses import ResponseOutputText

from citelab import InvalidInput
from citelab.contract import Anchor, AnswerMessage, build_message, validate_message
from citelab.contract.convert import (
    ANTHROPIC_LOSSES,
    COHERE_LOSSES,
    GEMINI_LOSSES,
    OPENAI_LOSSES,
    Losses,
    from_anthropic,
    from_cohere,
    from_gemini,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_cohere,
    to_gemini,
    to_openai_chat,
    to_openai_responses,
)

TEXT = "Rooms open at 8 ☕ [1]. 東京 campus has 24h rooms 🏫 [2]. Staff cards e\u0301 [1][2]."


def _span(claim: str) -> tuple[int, int]:
    start = TEXT.index(claim)
    return start, start + len(claim)


def _anchor(uri: str, claim: str) -> dict[str, Any]:
    start, end = _span(claim)
    return {"sourceUri": uri, "citedText": claim, "startIndex": start, "endIndex": end}


@pytest.fixture
def message() -> AnswerMessage:
    """Sources cited in first-citation order, no descriptions: what every target carries."""
    return build_message(
        TEXT,
        [
            {"uri": "https://rooms.example/hours", "title": "Opening hours"},
            {"entity_type": "node", "entity_id": "7", "title": "Tokyo campus"},
        ],
        anchors=[
            _anchor("https://rooms.example/hours", "Rooms open at 8 ☕"),
            _anchor("entity:node/7", "東京 campus has 24h rooms 🏫"),
            _anchor("https://rooms.example/hours", "Staff cards e\u0301"),
            _anchor("entity:node/7", "Staff cards e\u0301"),
        ],
    )


def _same(left: AnswerMessage, right: AnswerMessage) -> None:
    assert left.text == right.text
    assert [(s.uri, s.name) for s in left.sources] == [(s.uri, s.name) for s in right.sources]
    key = lambda a: (a.start_index, a.end_index, a.source_uri)  # noqa: E731
    assert sorted(left.anchors, key=key) == sorted(right.anchors, key=key)
    assert validate_message(right) == []


@pytest.mark.parametrize("losses", [ANTHROPIC_LOSSES, OPENAI_LOSSES, COHERE_LOSSES, GEMINI_LOSSES])
def test_every_converter_declares_its_losses(losses: Losses) -> None:
    assert losses.to_target
    assert losses.from_target
    assert all(isinstance(line, str) and line for line in (*losses.to_target, *losses.from_target))


# Anthropic


def test_anthropic_round_trip(message: AnswerMessage) -> None:
    blocks = to_anthropic(message)
    assert "".join(block["text"] for block in blocks) == TEXT
    cited = [b for b in blocks if "citations" in b]
    assert [b["text"] for b in cited] == [
        "Rooms open at 8 ☕",
        "東京 campus has 24h rooms 🏫",
        "Staff cards e\u0301",
    ]
    assert [c["document_index"] for c in cited[2]["citations"]] == [0, 1]
    assert cited[1]["citations"][0]["document_title"] == "Tokyo campus"
    _same(message, from_anthropic(blocks, sources=message.sources))
    _same(message, from_anthropic({"content": blocks}, sources=message.sources))


def test_anthropic_response_with_documents_search_results_and_tool_blocks() -> None:
    response = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hidden"},
            {"type": "text", "text": "Per the handbook, "},
            {
                "type": "text",
                "text": "fees are due in May",
                "citations": [
                    {
                        "type": "page_location",
                        "cited_text": "Tuition is due by 31 May.",
                        "document_index": 1,
                        "document_title": "Handbook",
                        "start_page_number": 3,
                        "end_page_number": 4,
                    }
                ],
            },
            {"type": "text", "text": " and "},
            {
                "type": "text",
                "text": "loans open in June",
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": "https://loans.example",
                        "title": "Loans",
                        "cited_text": "Applications open 1 June.",
                        "encrypted_index": "abc",
                    },
                    {
                        "type": "content_block_location",
                        "cited_text": "June",
                        "document_index": 0,
                        "document_title": None,
                        "start_block_index": 0,
                        "end_block_index": 1,
                    },
                ],
            },
            {"type": "tool_use", "id": "t1", "name": "rag_search", "input": {}},
        ],
    }
    message = from_anthropic(response)
    assert message.text == "Per the handbook, fees are due in May and loans open in June"
    assert [(s.uri, s.name) for s in message.sources] == [
        ("document:1", "Handbook"),
        ("https://loans.example", "Loans"),
        ("document:0", "document:0"),
    ]
    assert [(a.source_uri, a.cited_text) for a in message.anchors] == [
        ("document:1", "fees are due in May"),
        ("https://loans.example", "loans open in June"),
        ("document:0", "loans open in June"),
    ]
    assert validate_message(message) == []
    given = from_anthropic(response, sources=[{"uri": "entity:node/1"}, {"uri": "entity:node/2"}])
    assert given.anchors[0].source_uri == "entity:node/2"


def test_anthropic_cited_text_survives_a_round_trip(message: AnswerMessage) -> None:
    passage = "Reading rooms open at 8:00 every weekday ☕."
    quoted = build_message(
        message.text,
        message.sources,
        anchors=message.anchors,
        source_quotes=[
            {
                "anchorIndex": 0,
                "sourceUri": "https://rooms.example/hours",
                "text": passage,
                "startIndex": 10,
                "endIndex": 10 + len(passage),
            },
            {"anchorIndex": 1, "sourceUri": "entity:node/7", "text": "Open 24 hours."},
        ],
    )
    assert validate_message(quoted) == []
    blocks = to_anthropic(quoted)
    first = blocks[0]["citations"][0]
    assert (first["cited_text"], first["start_char_index"], first["end_char_index"]) == (
        passage,
        10,
        10 + len(passage),
    )
    second = next(b for b in blocks if b["text"].startswith("東京"))["citations"][0]
    assert (second["cited_text"], second["start_char_index"]) == ("Open 24 hours.", 0)
    back = from_anthropic(blocks, sources=quoted.sources)
    _same(quoted, back)
    assert back.source_quotes == quoted.source_quotes
    # An anchor without a quote still writes an empty cited_text, and reads back without one.
    assert to_anthropic(message)[0]["citations"][0]["cited_text"] == ""
    assert from_anthropic(to_anthropic(message), sources=message.sources).source_quotes == []


def test_anthropic_page_and_block_locations_keep_their_cited_text_without_offsets() -> None:
    blocks = [
        {
            "type": "text",
            "text": "fees are due in May",
            "citations": [
                {
                    "type": "page_location",
                    "cited_text": "Tuition is due by 31 May.",
                    "document_index": 0,
                    "start_page_number": 3,
                    "end_page_number": 4,
                }
            ],
        }
    ]
    [quote] = from_anthropic(blocks).source_quotes
    assert (quote.text, quote.start_index, quote.end_index) == (
        "Tuition is due by 31 May.",
        None,
        None,
    )
    assert quote.source_uri == "document:0"


def test_anthropic_overlapping_anchors_come_back_split() -> None:
    text = "abcdef"
    message = build_message(
        text,
        [{"uri": "a"}, {"uri": "b"}],
        anchors=[
            Anchor(source_uri="a", cited_text="abcd", start_index=0, end_index=4),
            Anchor(source_uri="b", cited_text="cdef", start_index=2, end_index=6),
        ],
    )
    back = from_anthropic(to_anthropic(message), sources=message.sources)
    assert [(a.source_uri, a.start_index, a.end_index) for a in back.anchors] == [
        ("a", 0, 2),
        ("a", 2, 4),
        ("b", 2, 4),
        ("b", 4, 6),
    ]


def test_anthropic_malformed_input_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="needs a 'content' list"):
        from_anthropic({"content": "x"})
    with pytest.raises(InvalidInput, match=r"Anthropic text block \(content\[0\]\)"):
        from_anthropic([{"type": "text", "text": 5}])
    with pytest.raises(InvalidInput, match="needs a document_index"):
        from_anthropic([{"type": "text", "text": "x", "citations": [{"type": "char_location"}]}])


# OpenAI


def test_openai_responses_round_trip_validates_with_the_sdk(message: AnswerMessage) -> None:
    part = to_openai_responses(message)
    sdk = ResponseOutputText.model_validate(part)
    assert sdk.text == TEXT
    first = sdk.annotations[0]
    assert first.type == "url_citation"
    assert TEXT[first.start_index : first.end_index] == "Rooms open at 8 ☕"
    _same(message, from_openai_responses(part))
    _same(message, from_openai_responses(sdk))
    item = {"type": "message", "role": "assistant", "content": [part]}
    _same(message, from_openai_responses({"output": [{"type": "reasoning"}, item]}))


def test_openai_file_citations_are_positions() -> None:
    message = build_message(
        "See the notes.",
        [{"uri": "openai-file:file-123", "title": "notes.pdf"}],
        anchors=[
            {"sourceUri": "openai-file:file-123", "citedText": "", "startIndex": 13, "endIndex": 13}
        ],
    )
    part = to_openai_responses(message)
    assert part["annotations"] == [
        {"type": "file_citation", "file_id": "file-123", "filename": "notes.pdf", "index": 13}
    ]
    _same(message, from_openai_responses(part))
    assert to_openai_chat(message)["annotations"] == []  # chat has no file citations


def test_openai_chat_round_trip_validates_with_the_sdk(message: AnswerMessage) -> None:
    chat = to_openai_chat(message)
    sdk = ChatCompletionMessage.model_validate(chat)
    assert sdk.annotations is not None
    assert len(sdk.annotations) == 4
    _same(message, from_openai_chat(chat))
    completion = ChatCompletion.model_validate(
        {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": chat}],
        }
    )
    _same(message, from_openai_chat(completion))


def test_openai_bad_spans_are_invalid_input(message: AnswerMessage) -> None:
    part = to_openai_responses(message)
    part["annotations"][0]["end_index"] = 10_000
    with pytest.raises(InvalidInput, match="span 0–10000 is outside the text"):
        from_openai_responses(part)
    with pytest.raises(InvalidInput, match="expected an output_text part"):
        from_openai_responses({"type": "refusal"})
    with pytest.raises(InvalidInput, match="has no choices"):
        from_openai_chat({"choices": []})


# Cohere


def test_cohere_round_trip_groups_sources_per_span(message: AnswerMessage) -> None:
    cohere = to_cohere(message)
    citations = cohere["citations"]
    assert [c["text"] for c in citations] == [
        "Rooms open at 8 ☕",
        "東京 campus has 24h rooms 🏫",
        "Staff cards e\u0301",
    ]
    assert [s["id"] for s in citations[2]["sources"]] == [
        "https://rooms.example/hours",
        "entity:node/7",
    ]
    assert citations[0]["sources"][0]["document"]["url"] == "https://rooms.example/hours"
    assert all(TEXT[c["start"] : c["end"]] == c["text"] for c in citations)
    _same(message, from_cohere(cohere))
    _same(message, from_cohere({"id": "r", "finish_reason": "COMPLETE", "message": cohere}))


def test_cohere_documents_tools_and_plan_citations() -> None:
    response = {
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "The tallest penguins live in Antarctica."}],
            "citations": [
                {
                    "start": 4,
                    "end": 20,
                    "text": "tallest penguins",
                    "type": "TEXT_CONTENT",
                    "sources": [
                        {
                            "type": "document",
                            "id": "doc:0",
                            "document": {"id": "doc:0", "title": "Tall penguins", "snippet": "..."},
                        }
                    ],
                },
                {
                    "start": 29,
                    "end": 40,
                    "text": "Antarctica.",
                    "type": "TEXT_CONTENT",
                    "sources": [
                        {
                            "type": "tool",
                            "id": "tool:1",
                            "tool_output": {"url": "https://p.example"},
                        }
                    ],
                },
                {
                    "start": 0,
                    "end": 3,
                    "text": "The",
                    "type": "PLAN",
                    "sources": [{"type": "document", "id": "doc:9"}],
                },
            ],
        }
    }
    message = from_cohere(response)
    assert [(s.uri, s.name) for s in message.sources] == [
        ("doc:0", "Tall penguins"),
        ("https://p.example", "https://p.example"),
    ]
    assert [a.cited_text for a in message.anchors] == ["tallest penguins", "Antarctica."]
    with pytest.raises(InvalidInput, match="content_index 3 names no text item"):
        from_cohere({"content": "x", "citations": [{"start": 0, "end": 1, "content_index": 3}]})


# Gemini


def test_gemini_round_trip_uses_utf8_byte_offsets(message: AnswerMessage) -> None:
    candidate = to_gemini(message)
    supports = candidate["groundingMetadata"]["groundingSupports"]
    raw = TEXT.encode("utf-8")
    for support in supports:
        segment = support["segment"]
        assert raw[segment["startIndex"] : segment["endIndex"]].decode("utf-8") == segment["text"]
    assert supports[2]["groundingChunkIndices"] == [0, 1]
    chunks = candidate["groundingMetadata"]["groundingChunks"]
    assert chunks == [
        {"web": {"uri": "https://rooms.example/hours", "title": "Opening hours"}},
        {"retrievedContext": {"uri": "entity:node/7", "title": "Tokyo campus"}},
    ]
    _same(message, from_gemini(candidate))
    _same(message, from_gemini({"candidates": [candidate]}))


def test_gemini_reads_snake_case_parts_and_omitted_zero_offsets() -> None:
    candidate = {
        "content": {"parts": [{"text": "Été 😀. "}, {"text": "Second part."}]},
        "grounding_metadata": {
            "grounding_chunks": [{"web": {"uri": "https://a.example", "title": "A"}}],
            "grounding_supports": [
                {"segment": {"end_index": 10}, "grounding_chunk_indices": [0]},
                {
                    "segment": {"part_index": 1, "start_index": 7, "end_index": 12},
                    "grounding_chunk_indices": [0],
                },
            ],
        },
    }
    message = from_gemini(candidate)
    assert message.text == "Été 😀. Second part."
    assert [a.cited_text for a in message.anchors] == ["Été 😀", "part."]


def test_gemini_offset_inside_a_character_is_invalid_input(message: AnswerMessage) -> None:
    candidate = to_gemini(message)
    emoji_end = len("Rooms open at 8 ☕".encode())
    candidate["groundingMetadata"]["groundingSupports"][0]["segment"]["endIndex"] = emoji_end - 1
    with pytest.raises(
        InvalidInput, match=r"groundingSupports\[0\].segment: UTF-8 index .* inside"
    ):
        from_gemini(candidate)
    broken = copy.deepcopy(to_gemini(message))
    broken["groundingMetadata"]["groundingSupports"][0]["groundingChunkIndices"] = [5]
    with pytest.raises(InvalidInput, match="no grounding chunk 5"):
        from_gemini(broken)
    with pytest.raises(InvalidInput, match="no candidates"):
        from_gemini({"candidates": []})
