"""Cited URLs against the envelope's sources: tracking parameters and trivial differences set
aside, other differences kept; an OpenAI Responses web-search answer (its citations carry
``?utm_source=openai``) judged on the passages its envelope gives, and a file none of whose
citations can be judged refused, saying which URLs matched no source.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from citelab.cli import main
from citelab.evals import score_answers
from citelab.evals.external._urls import same_page_key

FERRY = "The ferry leaves at 9 am from pier 3."
PAGE = "The ferry leaves at 9 am from pier 3 every day. Tickets cost 9 euros."
URL = "https://harbour.example/ferry"
CITED = URL + "?utm_source=openai"


def responses_answer(url: str) -> dict[str, Any]:
    """A Responses API web-search answer in its JSON shape, citing ``url``."""
    annotation = {"type": "url_citation", "url": url, "title": "Ferry timetable",
                  "start_index": 0, "end_index": len(FERRY) - 1}  # fmt: skip
    part = {"type": "output_text", "text": FERRY, "annotations": [annotation]}
    message = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
               "content": [part]}  # fmt: skip
    return {"id": "resp_1", "object": "response", "output": [message]}


def envelope(ident: str, url: str, given: str) -> dict[str, Any]:
    return {"id": ident, "question": "When does the ferry leave?",
            "response": responses_answer(url),
            "sources": [{"uri": given, "title": "Ferry", "content": PAGE}]}  # fmt: skip


def write_jsonl(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "cited",
    [
        URL + "?utm_source=openai",
        URL + "?utm_source=newsletter&utm_medium=email&utm_campaign=x",
        URL + "?gclid=abc&fbclid=def&msclkid=1",
        URL + "/",
        URL + "#timetable",
        "HTTPS://Harbour.Example:443/ferry/?utm_source=openai#top",
    ],
)
def test_a_tracked_or_trivially_different_url_is_the_same_page(cited: str) -> None:
    assert same_page_key(cited) == same_page_key(URL)


@pytest.mark.parametrize(
    "other",
    [
        URL + "?page=2",
        "http://harbour.example/ferry",
        "https://harbour.example/ferry/times",
        "https://harbour.example:8443/ferry",
        "https://www.harbour.example/ferry",
    ],
)
def test_other_differences_are_another_page(other: str) -> None:
    assert same_page_key(other) != same_page_key(URL)


def test_kept_parameters_match_in_any_order() -> None:
    assert same_page_key(URL + "?b=2&a=1&utm_source=x") == same_page_key(URL + "?a=1&b=2")


@pytest.mark.parametrize("uri", ["alce:doc/1", "openai-file:file_1", "not a url", "https://x:99x/"])
def test_uris_that_are_not_web_addresses_pass_as_written(uri: str) -> None:
    assert same_page_key(uri) == uri


def test_a_web_search_answer_with_utm_source_is_judged_on_the_given_passage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path, [envelope("q1", CITED, URL)])
    result = score_answers(path, "openai-responses")
    assert result.config["unjudgeable"] == {"citation_recall": 0, "citation_precision": 0}
    assert result.config["unjudged_answers"] == []
    assert list(result.summary()["value"]) == [1.0, 1.0]
    assert main(["score", str(path), "--format", "openai-responses", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["metrics"]["citation_recall"]["value"] == 1.0


def test_answers_without_a_judgeable_citation_are_listed_with_what_did_not_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = "https://harbour.example/parking"
    path = write_jsonl(tmp_path, [envelope("q1", CITED, URL), envelope("q2", CITED, other)])
    assert main(["score", str(path), "--format", "openai-responses"]) == 0  # q1 is judged
    err = capsys.readouterr().err
    assert "1 answer(s) have no citation that can be judged" in err
    assert (
        f"answer q2 cites {CITED}, which match none of the sources its envelope gives ({other})"
        in err
    )
    result = score_answers(path, "openai-responses")
    assert result.config["unjudged_answers"] == [
        {"answer": "q2", "cited": [CITED], "given": [other]}
    ]


def test_a_file_with_nothing_to_judge_exits_non_zero_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = "https://harbour.example/parking"
    bare = copy.deepcopy(responses_answer(CITED))
    path = write_jsonl(tmp_path, [envelope("q1", CITED, other), {"id": "q2", "response": bare}])
    assert main(["score", str(path), "--format", "openai-responses", "--json"]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["metrics"]["citation_recall"]["value"] is None
    assert "no citation in the answers can be judged" in captured.err
    assert (
        f"answer q1 cites {CITED}, which match none of the sources its envelope gives ({other})"
        in captured.err
    )
    assert f"answer q2 cites {CITED}, and its record gives no sources" in captured.err
