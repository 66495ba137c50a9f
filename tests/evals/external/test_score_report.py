"""The report of ``citelab score`` has its own layout: what was scored (file, format, judge,
statements), what could not be judged, the summary and the answers; none of an evaluation
run's empty sections ("Variants", "Numbering stability", "models: alce")."""

from __future__ import annotations

import json
from pathlib import Path

from citelab.evals import score_answers

ALCE = {
    "data": [
        {
            "question": "When are fees due?",
            "docs": [{"title": "Fees", "text": "Tuition fees are due in May."}],
            "output": "Tuition fees are due in May [1].",
        }
    ]
}


def test_the_score_report_says_what_was_scored_and_nothing_empty(tmp_path: Path) -> None:
    path = tmp_path / "asqa_results.json"
    path.write_text(json.dumps(ALCE), encoding="utf-8")
    score_answers(path, "alce", out_dir=tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<h1>citelab score: asqa_results</h1>" in page
    assert "<li><b>file</b>: asqa_results.json</li>" in page
    assert "<li><b>format</b>: alce</li>" in page
    assert "<li><b>judge</b>: lexical_trained (threshold=0.412513, digest=" in page
    assert "<li><b>statements</b>: each sentence of the answer, with its markers</li>" in page
    for absent in ("<h2>Variants</h2>", "Numbering stability", "models</b>: alce", "Differences"):
        assert absent not in page, absent
    # Every statement supported: a resampled interval would be [1.000, 1.000]; the page
    # shows Wilson's, marked, and says too few units.
    assert 'citation_recall_alce ↑</th><td class="num">1.000 [0.' in page
    assert "[1.000, 1.000]" not in page
    assert 'title="Wilson\'s interval">W</span>' in page


def test_a_metric_with_nothing_judgeable_says_so_in_the_report(tmp_path: Path) -> None:
    response = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "The ferry leaves at 9 am.",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url_citation": {
                                "url": "https://harbour.example/ferry",
                                "title": "Ferry",
                                "start_index": 0,
                                "end_index": 24,
                            },
                        }
                    ],
                }
            }
        ]
    }
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(response), encoding="utf-8")
    score_answers(path, "openai-chat", out_dir=tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "not judgeable: 1 units without passage" in page
    assert "1 source(s) in 1 answer(s) have no passage to judge" in page
