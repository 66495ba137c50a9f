"""Answers whose sources carry no passage: reported, and scored as not judgeable, never 0.

A Chat Completions or Responses answer cites pages by URL only; ``citelab demo``'s message
names its sources with descriptions (a summary, not the text). Before, both scored recall
and precision 0.0 without a word; now the sources without passage are listed (``run.json``,
``--json``, stderr, the report) and the statements citing them are not judgeable.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from citelab.cli import main
from citelab.contract import build_message
from citelab.contract.convert import to_anthropic
from citelab.evals import read_answers, score_answers

FERRY = "The ferry leaves at 9 am from pier 3."
FERRY_PAGE = "The ferry leaves at 9 am from pier 3 every day. Tickets cost 9 euros."
URL = "https://harbour.example/ferry"
CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-search-preview",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {
                "role": "assistant",
                "content": FERRY,
                "annotations": [
                    {
                        "type": "url_citation",
                        "url_citation": {
                            "url": URL,
                            "title": "Ferry timetable",
                            "start_index": 0,
                            "end_index": len(FERRY) - 1,
                        },
                    }
                ],
            },
        }
    ],
}
RESPONSES = {
    "id": "resp_1",
    "object": "response",
    "output": [
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": FERRY,
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url": URL,
                            "title": "Ferry timetable",
                            "start_index": 0,
                            "end_index": len(FERRY) - 1,
                        }
                    ],
                }
            ],
        }
    ],
}
DEMO_MESSAGE = Path(__file__).parents[3] / "fixtures" / "messages" / "example.json"


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("answer_format", "response"), [("openai-chat", CHAT), ("openai-responses", RESPONSES)]
)
def test_url_citations_without_passages_are_reported_not_scored_zero(
    tmp_path: Path, answer_format: str, response: dict[str, Any]
) -> None:
    result = score_answers(write(tmp_path, "a.json", response), answer_format)
    assert result.summary().empty  # no value at all: not 0.0
    assert result.config["without_passage"] == [
        {"answer": "0", "number": 1, "uri": URL, "title": "Ferry timetable"}
    ]
    assert result.config["unjudgeable"] == {"citation_recall": 1, "citation_precision": 1}


def test_the_envelope_gives_the_passages(tmp_path: Path) -> None:
    envelope = {
        "id": "q1",
        "question": "When does the ferry leave?",
        "response": CHAT,
        "sources": [{"uri": URL, "content": FERRY_PAGE}],
    }
    result = score_answers(write(tmp_path, "a.json", envelope), "openai-chat")
    assert result.config["without_passage"] == []
    assert result.config["unjudgeable"] == {"citation_recall": 0, "citation_precision": 0}
    assert list(result.summary()["value"]) == [1.0, 1.0]


def test_citelab_score_says_which_sources_lack_a_passage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "chat.json", CHAT)
    # Nothing in the file can be judged: the figures are printed, and the command fails.
    assert main(["score", str(path), "--format", "openai-chat", "--json"]) == 2
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["without_passage"][0]["uri"] == URL
    recall = payload["metrics"]["citation_recall"]
    assert recall["value"] is None
    assert recall["unjudgeable"] == 1
    assert "1 source(s) in 1 answer(s) have no passage" in captured.err
    assert URL in captured.err
    assert "not judgeable" in captured.err
    assert main(["score", str(path), "--format", "openai-chat"]) == 2
    table = capsys.readouterr().out
    assert "citation_recall" in table
    assert "not judgeable" in table


def test_the_demo_message_has_no_passages_and_says_so(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "citelab", "demo"], capture_output=True, text=True, check=True
    )
    path = tmp_path / "demo.json"
    path.write_text(done.stdout, encoding="utf-8")
    (answer,) = read_answers(path, "citelab")
    # The descriptions are summaries of the pages, not their text: no passage.
    assert [source.content for source in answer.sources] == ["", "", ""]
    out = tmp_path / "report"
    result = score_answers(path, "citelab", out_dir=out)
    assert len(result.config["without_passage"]) == 3
    assert result.summary().empty
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["unjudgeable"]["citation_recall"] == 5
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "3 source(s) in 1 answer(s) have no passage" in report
    assert "Exam weeks on campus" in report


def test_a_citelab_message_with_source_quotes_is_judged_on_them(tmp_path: Path) -> None:
    text = "The ferry leaves at 9 am [1]."
    anchor = {"sourceUri": URL, "citedText": text[:24], "startIndex": 0, "endIndex": 24}
    quote = {"anchorIndex": 0, "sourceUri": URL, "text": FERRY_PAGE}
    message = build_message(
        text,
        [{"uri": URL, "title": "Ferry", "description": "Times"}],
        anchors=[anchor],
        source_quotes=[quote],
    )
    (answer,) = read_answers(write(tmp_path, "m.json", message.to_wire()), "citelab")
    assert answer.sources[0].content == FERRY_PAGE
    result = score_answers(write(tmp_path, "m.json", message.to_wire()), "citelab")
    assert list(result.summary()["value"]) == [1.0, 1.0]


def test_anthropic_cited_text_is_the_passage_without_the_documents(tmp_path: Path) -> None:
    text = "The ferry leaves at 9 am from pier 3."
    anchor = {"sourceUri": URL, "citedText": text, "startIndex": 0, "endIndex": len(text)}
    quote = {"anchorIndex": 0, "sourceUri": URL, "text": FERRY_PAGE}
    message = build_message(
        text, [{"uri": URL, "title": "Ferry"}], anchors=[anchor], source_quotes=[quote]
    )
    blocks = to_anthropic(message)
    assert blocks[0]["citations"][0]["cited_text"] == FERRY_PAGE
    result = score_answers(write(tmp_path, "a.json", {"content": blocks}), "anthropic")
    assert result.config["without_passage"] == []
    assert list(result.summary()["value"]) == [1.0, 1.0]


def test_anthropic_answers_are_scored_per_cited_span(tmp_path: Path) -> None:
    # One sentence, two text blocks: the first cited, the second an uncited claim. Per
    # sentence the uncited claim sinks the cited one (recall 0); per span the cited block is
    # a statement of its own and supported, and the uncited rest of the sentence is not one.
    response = {
        "content": [
            {
                "type": "text",
                "text": "The ferry leaves at 9 am",
                "citations": [
                    {
                        "type": "char_location",
                        "document_index": 0,
                        "document_title": "Ferry",
                        "cited_text": "The ferry leaves at 9 am from pier 3 every day.",
                        "start_char_index": 0,
                        "end_char_index": 47,
                    }
                ],
            },
            {"type": "text", "text": " and it is the fastest boat in Norway."},
        ]
    }
    path = write(tmp_path, "a.json", response)
    spans = score_answers(path, "anthropic").summary().set_index("metric")["value"]
    assert dict(spans) == {"citation_recall_span": 1.0, "citation_precision_span": 1.0}
    sentences = score_answers(path, "anthropic", scorers=["citation_recall"]).summary()
    assert list(sentences["value"]) == [0.0]
