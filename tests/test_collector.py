"""citelab's one collector policy: no cycle collection inside bulk scoring, the caller's
collector state after it (on success and on an error)."""

import gc
from collections.abc import Iterator

import pytest

from citelab._collector import bulk_scoring


@pytest.fixture
def collector_state() -> Iterator[None]:
    was = gc.isenabled()
    yield
    gc.enable() if was else gc.disable()


@pytest.mark.usefixtures("collector_state")
def test_the_collector_pauses_inside_and_is_the_callers_again_after() -> None:
    gc.enable()
    with bulk_scoring():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError, match="scorer failed"), bulk_scoring():
        raise ValueError("scorer failed")
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_state")
def test_a_callers_own_pause_stays_a_pause() -> None:
    gc.disable()
    with bulk_scoring():
        assert not gc.isenabled()
    assert not gc.isenabled()


@pytest.mark.usefixtures("collector_state")
def test_score_answers_scores_with_the_collector_paused_and_restores_it() -> None:
    from citelab.evals import score_answers

    seen: list[bool] = []

    class Watching:
        name = "watching"

        def supports(self, statement: str, evidence: str) -> bool:
            seen.append(gc.isenabled())
            return True

        def config(self) -> dict[str, str]:
            return {"name": self.name}

    gc.enable()
    data = {
        "data": [
            {
                "question": "Where?",
                "output": "Paris is in France [1].",
                "docs": [{"title": "Paris", "text": "Paris is in France."}],
            }
        ]
    }
    score_answers(data, "alce", judge=Watching(), processes=1)
    assert seen
    assert not any(seen)
    assert gc.isenabled()
