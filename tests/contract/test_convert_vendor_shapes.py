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
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from citelab.contract import Anchor, build_message
from citelab.contract.convert import (
    ANTHROPIC_LOSSES,
    GEMINI_LOSSES,
    file_search_uri,
    from_anthropic,
    from_gemini,
    from_openai_responses,
    to_anthropic,
    to_gemini,
    to_openai_responses,
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


# --- to_anthropic: every source keeps its coverage ------------------------------------------

FILE = "openai-file:file-notes"
_SOURCES = [{"uri": "https://a.example/"}, {"uri": "https://b.example/"}, {"uri": FILE}]


def _coverage(message: Any) -> dict[str, set[object]]:
    """What each source covers: the characters of its spans that are not white space, and
    each position it is cited at (counted in words' characters, so white space around a
    position does not move it)."""
    text, covered = message.text, {}
    for anchor in message.anchors:
        mine = covered.setdefault(anchor.source_uri, set())
        if anchor.start_index == anchor.end_index:
            mine.add(("at", len("".join(text[: anchor.start_index].split()))))
        mine.update(i for i in range(anchor.start_index, anchor.end_index) if not text[i].isspace())
    return {uri: cover for uri, cover in covered.items() if cover}


def _round_trip(message: Any) -> Any:
    return from_anthropic(to_anthropic(message), sources=message.sources)


def test_overlapping_anchors_keep_their_coverage() -> None:
    """Before, the white space two anchors share joined the block before it with both
    citations, so the second source covered the first claim too."""
    text = "Fees are due in May. Rooms open at 8."
    message = _message(text, [(0, 21, "https://a.example/"), (20, 37, "https://b.example/")])
    back = _round_trip(message)
    assert _coverage(back) == _coverage(message)
    assert [(a.source_uri, back.text[a.start_index : a.end_index]) for a in back.anchors] == [
        ("https://a.example/", "Fees are due in May. "),
        ("https://b.example/", "Rooms open at 8."),
    ]


def test_a_position_cited_on_an_openai_file_comes_back_as_that_position() -> None:
    """An OpenAI file citation is a position; before, it came back spanning the claim before
    it, and written back to OpenAI it moved to that claim's start."""
    part = {
        "type": "output_text",
        "text": "Fees are due in May. Rooms open at 8.",
        "annotations": [
            {"type": "file_citation", "file_id": "file-notes", "filename": "n.md", "index": 20},
            {"type": "file_citation", "file_id": "file-notes", "filename": "n.md", "index": 37},
        ],
    }
    message = from_openai_responses(part)
    blocks = to_anthropic(message)
    _BLOCK_PARAMS.validate_python(blocks)
    back = from_anthropic(blocks, sources=message.sources)
    assert [(a.source_uri, a.start_index, a.end_index) for a in back.anchors] == [
        (FILE, 20, 20),
        (FILE, 37, 37),
    ]
    assert to_openai_responses(back)["annotations"] == part["annotations"]


_WORDS = st.text(alphabet="ab .", min_size=1, max_size=12).filter(str.strip)


@st.composite
def _messages(draw: st.DrawFn) -> Any:
    """Overlapping spans on two web sources and positions (after some word) on a file."""
    text = draw(_WORDS)
    anchors: list[tuple[int, int, str]] = []
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(text) - 1))
        if draw(st.booleans()):
            end = draw(st.integers(start + 1, len(text)))
            anchors.append(
                (start, end, draw(st.sampled_from(["https://a.example/", "https://b.example/"])))
            )
        else:
            at = draw(st.integers(start, len(text)).filter(lambda i: bool(text[:i].strip())))
            anchors.append((at, at, FILE))
    return build_message(
        text,
        _SOURCES,
        anchors=[
            Anchor(source_uri=uri, cited_text=text[s:e], start_index=s, end_index=e)
            for s, e, uri in anchors
        ],
    )


@settings(max_examples=300, deadline=None)
@given(_messages())
def test_to_anthropic_round_trips_every_sources_coverage(message: Any) -> None:
    blocks = to_anthropic(message)
    _BLOCK_PARAMS.validate_python(blocks)
    assert all(block["text"].strip() for block in blocks)
    assert _coverage(_round_trip(message)) == _coverage(message)
