"""Converters against shapes the vendors' SDKs write and accept: Gemini File Search grounding
becomes scorable sources, and ``to_anthropic`` never writes a text block the Messages API
rejects. The vendor types come from the real SDKs (``google-genai``, ``anthropic``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import TextBlock, TextBlockParam
from google.genai import types as genai
from pydantic import TypeAdapter

from citelab.contract import Anchor, build_message
from citelab.contract.convert import (
    ANTHROPIC_LOSSES,
    GEMINI_LOSSES,
    file_search_uri,
    from_anthropic,
    from_gemini,
    to_anthropic,
    to_gemini,
)

STORE = "fileSearchStores/notes-4f1c2a"
FERRY = (
    "The ferry to Skarvøy leaves the north pier at 8:15 and at 16:40. Tickets cost 9 euros "
    "for adults and 4 euros for children."
)
PARKING = "Parking at the harbour costs 2 euros per hour."
ANSWER = "The ferry leaves at 8:15 and 16:40. Parking costs 2 euros per hour."


def _file_search_response() -> genai.GenerateContentResponse:
    """A File Search answer as the google-genai SDK holds it: contexts without a uri."""
    first = ANSWER.split(". ", maxsplit=1)[0]
    return genai.GenerateContentResponse(
        candidates=[
            genai.Candidate(
                content=genai.Content(role="model", parts=[genai.Part(text=ANSWER)]),
                grounding_metadata=genai.GroundingMetadata(
                    grounding_chunks=[
                        genai.GroundingChunk(
                            retrieved_context=genai.GroundingChunkRetrievedContext(
                                title="ferry.md", text=FERRY, file_search_store=STORE
                            )
                        ),
                        genai.GroundingChunk(
                            retrieved_context=genai.GroundingChunkRetrievedContext(
                                title="harbour parking.md", text=PARKING, file_search_store=STORE
                            )
                        ),
                    ],
                    grounding_supports=[
                        genai.GroundingSupport(
                            segment=genai.Segment(start_index=0, end_index=len(first) + 1),
                            grounding_chunk_indices=[0],
                        ),
                        genai.GroundingSupport(
                            segment=genai.Segment(
                                start_index=len(first) + 2,
                                end_index=len(ANSWER.encode()),
                            ),
                            grounding_chunk_indices=[1],
                        ),
                    ],
                ),
            )
        ]
    )


def test_file_search_contexts_become_sources_with_their_text() -> None:
    dropped: list[str] = []
    message = from_gemini(_file_search_response(), dropped=dropped)
    assert dropped == []
    ferry = f"gemini-file-search:{STORE}/title/ferry.md"
    parking = f"gemini-file-search:{STORE}/title/harbour%20parking.md"
    assert [(s.uri, s.name, s.description) for s in message.sources] == [
        (ferry, "ferry.md", FERRY),
        (parking, "harbour parking.md", PARKING),
    ]
    assert [(a.source_uri, a.cited_text) for a in message.anchors] == [
        (ferry, "The ferry leaves at 8:15 and 16:40."),
        (parking, "Parking costs 2 euros per hour."),
    ]
    assert [(q.anchor_index, q.source_uri, q.text) for q in message.source_quotes] == [
        (0, ferry, FERRY),
        (1, parking, PARKING),
    ]


def test_file_search_uris_are_stable_and_spelling_independent() -> None:
    rest = _file_search_response().model_dump(mode="json", by_alias=True, exclude_none=True)
    assert "fileSearchStore" in json.dumps(rest)  # the REST spelling
    from_rest = from_gemini(rest)
    from_sdk = from_gemini(_file_search_response())
    assert [s.uri for s in from_rest.sources] == [s.uri for s in from_sdk.sources]
    named = file_search_uri(STORE, "ferry.md", f"{STORE}/documents/ferry-md-0a9")
    assert named == f"gemini-file-search:{STORE}/documents/ferry-md-0a9"
    assert file_search_uri(STORE, "ferry.md", "ferry-md-0a9") == named
    assert file_search_uri(None, "a b/c.md") == "gemini-file-search:title/a%20b%2Fc.md"
    assert file_search_uri(STORE, None) is None
    assert "File Search" in " ".join(GEMINI_LOSSES.from_target)


def test_a_file_search_answer_written_back_validates_as_a_gemini_candidate() -> None:
    message = from_gemini(_file_search_response())
    candidate = to_gemini(message)
    genai.Candidate.model_validate(candidate)
    context = candidate["groundingMetadata"]["groundingChunks"][0]["retrievedContext"]
    assert context["text"] == FERRY
    again = from_gemini(candidate)
    assert [s.uri for s in again.sources] == [s.uri for s in message.sources]


@pytest.mark.slow
def test_citelab_score_scores_a_file_search_answer(tmp_path: Path) -> None:
    """Before, the contexts were dropped and the answer had no source to score."""
    path = tmp_path / "gemini.json"
    envelope = {
        "id": "ferry",
        "question": "When does the ferry leave and what does parking cost?",
        "response": _file_search_response().model_dump(mode="json", by_alias=True),
    }
    path.write_text(json.dumps(envelope), encoding="utf-8")
    env = {**os.environ, "CITELAB_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "citelab", "score", str(path), "--format", "gemini", "--json"]
    done = subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    assert metrics["citation_recall"]["value"] > 0
    assert metrics["citation_precision"]["value"] > 0


# --- to_anthropic: no empty text blocks ----------------------------------------------------


def _message(text: str, anchors: list[tuple[int, int, str]]) -> Any:
    sources = [{"uri": "https://a.example/", "title": "A"}, {"uri": "https://b.example/"}]
    return build_message(
        text,
        sources,
        anchors=[
            Anchor(source_uri=uri, cited_text=text[s:e], start_index=s, end_index=e)
            for s, e, uri in anchors
        ],
    )


_BLOCK_PARAMS = TypeAdapter(list[TextBlockParam])


@pytest.mark.parametrize(
    ("text", "anchors", "expected"),
    [
        (
            "Fees are due in May. Rooms open at 8.",
            [(20, 20, "https://a.example/"), (21, 37, "https://b.example/")],
            [("Fees are due in May. ", [0]), ("Rooms open at 8.", [1])],
        ),
        (
            "Fees are due in May.",
            [(0, 0, "https://a.example/")],
            [("Fees are due in May.", [0])],
        ),
        (
            "Fees are due. Rooms open.",
            [(0, 13, "https://a.example/"), (13, 13, "https://b.example/")],
            [("Fees are due.", [0, 1]), (" Rooms open.", [])],
        ),
        ("   ", [(1, 1, "https://a.example/")], []),
    ],
    ids=["after-a-claim", "at-the-start", "two-sources-one-block", "white-space-only"],
)
def test_to_anthropic_writes_no_empty_text_block(
    text: str, anchors: list[tuple[int, int, str]], expected: list[tuple[str, list[int]]]
) -> None:
    blocks = to_anthropic(_message(text, anchors))
    _BLOCK_PARAMS.validate_python(blocks)
    for block in blocks:
        TextBlock.model_validate(block)
        assert block["text"].strip(), "the Messages API rejects empty text blocks"
    written = [
        (block["text"], [c["document_index"] for c in block.get("citations", [])])
        for block in blocks
    ]
    assert written == expected
    assert "".join(block["text"] for block in blocks) == (text if text.strip() else "")
    assert "zero-width anchors" in " ".join(ANTHROPIC_LOSSES.to_target)
    read = from_anthropic(blocks)
    assert {a.source_uri for a in read.anchors} <= {"document:0", "document:1"}
