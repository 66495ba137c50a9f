"""score_answers pauses cyclic garbage collection while it scores and leaves it as it was."""

import gc

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
