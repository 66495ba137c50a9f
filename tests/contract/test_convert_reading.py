"""Reading vendor responses as vendors write them: the reading bugs of issue #12.

Where the vendor's SDK is installed (the dev extra), each input is first validated by the
SDK's own response type, so the shapes tested are ones the vendor really produces.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from citelab import InvalidInput
from citelab.contract.convert import (
    GEMINI_LOSSES,
    anthropic_document_source,
    from_anthropic,
    from_cohere,
    from_gemini,
)


def validated(module: str, attr: str, data: dict[str, Any]) -> None:
    """Validate ``data`` with the vendor SDK's type when that SDK is installed."""
    try:
        sdk = importlib.import_module(module)
    except ImportError:
        return
    model = sdk
    for part in attr.split("."):
        model = getattr(model, part)
    model.model_validate(data)  # type: ignore[attr-defined]


# --- Cohere ---------------------------------------------------------------------------------


def cohere_message() -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "The user asks about fees."},
            {"type": "text", "text": "Fees are due in May."},
        ],
        "citations": [
            {
                "start": 0,
                "end": 20,
                "text": "Fees are due in May.",
                "content_index": 1,
                "type": "TEXT_CONTENT",
                "sources": [{"type": "document", "id": "doc-1", "document": {"title": "Fees"}}],
            }
        ],
    }


def test_cohere_content_index_counts_thinking_blocks() -> None:
    data = cohere_message()
    validated("cohere", "AssistantMessageResponse", data)
    message = from_cohere({"message": data})
    assert message.text == "Fees are due in May."
    assert [(a.source_uri, a.cited_text) for a in message.anchors] == [
        ("doc-1", "Fees are due in May.")
    ]


def test_cohere_content_index_of_a_thinking_block_is_refused_with_its_place() -> None:
    data = cohere_message()
    data["citations"][0]["content_index"] = 0
    with pytest.raises(InvalidInput, match=r"citations\[0\]: content_index 0 names no text"):
        from_cohere(data)


# --- Gemini ---------------------------------------------------------------------------------


def gemini_candidate() -> dict[str, Any]:
    thought = "Let me check the fee page."
    answer = "Fees are due in May."
    return {
        "content": {
            "role": "model",
            "parts": [{"text": thought, "thought": True}, {"text": answer}],
        },
        "groundingMetadata": {
            "groundingChunks": [
                {"maps": {"uri": None, "title": "Campus office", "placeId": "places/1"}},
                {"retrievedContext": {"title": "fees.pdf", "text": "Fees are due in May."}},
                {"web": {"uri": "https://uni.example/fees", "title": "Fees"}},
                {"image": {"title": "A campus map"}},
            ],
            "groundingSupports": [
                {
                    "segment": {"partIndex": 1, "startIndex": 0, "endIndex": 20},
                    "groundingChunkIndices": [0, 1, 2],
                },
                {
                    "segment": {"partIndex": 0, "startIndex": 0, "endIndex": 9},
                    "groundingChunkIndices": [2],
                },
            ],
        },
        "citationMetadata": {"citations": [{"startIndex": 0, "endIndex": 4, "uri": "x"}]},
    }


def test_gemini_thought_parts_are_not_answer_text_and_uri_less_chunks_are_declared() -> None:
    data = gemini_candidate()
    validated("google.genai.types", "Candidate", _without_unknown_chunks(data))
    dropped: list[str] = []
    message = from_gemini({"candidates": [data]}, dropped=dropped)
    assert message.text == "Fees are due in May."
    # A retrieved context without uri is a document by its title (see the File Search tests).
    assert [s.uri for s in message.sources] == [
        "gemini-file-search:title/fees.pdf",
        "https://uni.example/fees",
    ]
    assert [(a.source_uri, a.cited_text) for a in message.anchors] == [
        ("gemini-file-search:title/fees.pdf", "Fees are due in May."),
        ("https://uni.example/fees", "Fees are due in May."),
    ]
    assert len(dropped) == 4
    assert any("groundingChunks[0] (maps)" in line for line in dropped)
    assert any("groundingChunks[3] (image)" in line for line in dropped)
    assert any("groundingSupports[1]" in line and "thought" in line for line in dropped)
    assert any("citationMetadata" in line for line in dropped)
    declared = " ".join(GEMINI_LOSSES.from_target)
    assert "thought parts" in declared
    assert "citationMetadata" in declared
    assert "maps and image chunks" in declared


def _without_unknown_chunks(data: dict[str, Any]) -> dict[str, Any]:
    # SDK versions differ in which chunk kinds they know (maps, image); validate the rest.
    chunks = [c for c in data["groundingMetadata"]["groundingChunks"] if "image" not in c]
    meta = {**data["groundingMetadata"], "groundingChunks": chunks}
    return {**data, "groundingMetadata": meta}


def test_gemini_still_refuses_what_is_wrong_with_its_place() -> None:
    data = gemini_candidate()
    data["groundingMetadata"]["groundingSupports"][0]["groundingChunkIndices"] = [9]
    with pytest.raises(InvalidInput, match=r"groundingSupports\[0\]: no grounding chunk 9"):
        from_gemini(data)


# --- Anthropic ------------------------------------------------------------------------------


def test_anthropic_request_documents_are_accepted_as_the_sources() -> None:
    documents = [
        {
            "type": "document",
            "title": "Fees",
            "source": {"type": "text", "media_type": "text/plain", "data": "Fees: May."},
        },
        {
            "type": "document",
            "source": {"type": "url", "url": "https://uni.example/library.pdf"},
            "title": "Library",
        },
    ]
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [
            {
                "type": "text",
                "text": "The library has PDFs.",
                "citations": [
                    {
                        "type": "page_location",
                        "cited_text": "PDFs",
                        "document_index": 1,
                        "document_title": "Library",
                        "start_page_number": 1,
                        "end_page_number": 2,
                    }
                ],
            }
        ],
    }
    validated("anthropic.types", "Message", response)
    message = from_anthropic(response, sources=documents)
    assert [(s.uri, s.name) for s in message.sources] == [
        ("document:0", "Fees"),
        ("https://uni.example/library.pdf", "Library"),
    ]
    assert [a.source_uri for a in message.anchors] == ["https://uni.example/library.pdf"]
    assert anthropic_document_source(documents[0], 0) == {
        "uri": "document:0",
        "title": "Fees",
        "content": "Fees: May.",
    }
