"""score_answers pauses cyclic garbage collection while it scores and leaves it as it was."""

import gc
import json
import sys
from pathlib import Path

from citelab.evals import LexicalJudge, score_answers

DATA = {
    "data": [
        {
            "question": "When are fees due?",
            "docs": [{"title": "Fees", "text": "Fees are due in May."}],
            "output": "Fees are due in May [1].",
        }
    ]
}


def test_collection_is_on_again_afterwards() -> None:
    assert gc.isenabled()
    score_answers(DATA, "alce", judge=LexicalJudge())
    assert gc.isenabled()


def test_collection_stays_off_when_the_caller_turned_it_off() -> None:
    gc.disable()
    try:
        score_answers(DATA, "alce", judge=LexicalJudge())
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_no_collection_runs_while_a_file_is_read_and_scored(tmp_path: Path) -> None:
    # Enough answers that reading alone would trigger collections, were it not paused.
    item = DATA["data"][0]
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"data": [dict(item, id=str(n)) for n in range(3000)]}))
    during: list[str] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        frame = sys._getframe(1)
        while phase == "start" and frame is not None:
            if frame.f_code.co_name in _BULK:
                during.append(frame.f_code.co_name)
            frame = frame.f_back

    gc.callbacks.append(seen)
    try:
        result = score_answers(path, "alce", judge=LexicalJudge())
    finally:
        gc.callbacks.remove(seen)
    assert len(result.turns) == 3000
    assert during == []


# What score_answers does in bulk: reading, building records, scoring, building the tables.
_BULK = {"read_answers", "to_answers", "_records", "score_records_concurrently", "result_of"}
