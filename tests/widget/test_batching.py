"""Token coalescing: fewer messages, same text, same order."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citelab import InvalidInput
from citelab.widget import TokenBatcher


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_tokens_wait_for_company_until_the_interval_passes() -> None:
    sent: list[str] = []
    clock = FakeClock()
    batcher = TokenBatcher(sent.append, interval=0.02, max_tokens=100, clock=clock)
    batcher.add("a")
    batcher.add("b")
    assert sent == []
    assert batcher.pending == "ab"
    clock.now = 0.021
    batcher.add("c")
    assert sent == ["abc"]
    batcher.add("d")
    batcher.flush()
    batcher.flush()
    assert sent == ["abc", "d"]
    assert (batcher.tokens, batcher.messages) == (4, 2)


def test_a_full_batch_is_sent_at_once_and_empty_tokens_are_skipped() -> None:
    sent: list[str] = []
    batcher = TokenBatcher(sent.append, interval=60, max_tokens=3, clock=FakeClock())
    for token in ["a", "", "b", "c", "d"]:
        batcher.add(token)
    assert sent == ["abc"]
    assert batcher.tokens == 4


@pytest.mark.anyio
async def test_the_tail_of_a_paused_stream_is_sent_by_the_timer() -> None:
    sent: list[str] = []
    batcher = TokenBatcher(sent.append, interval=0.01, max_tokens=100)
    batcher.add("tail")
    assert sent == []
    for _ in range(100):
        await asyncio.sleep(0.005)
        if sent:
            break
    assert sent == ["tail"]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@settings(max_examples=60, deadline=None)
@given(
    tokens=st.lists(st.text(max_size=4), max_size=80),
    max_tokens=st.integers(min_value=1, max_value=10),
    steps=st.lists(st.floats(min_value=0, max_value=0.05), max_size=80),
)
def test_batching_never_loses_or_reorders_text(
    tokens: list[str], max_tokens: int, steps: list[float]
) -> None:
    sent: list[str] = []
    clock = FakeClock()
    batcher = TokenBatcher(sent.append, interval=0.02, max_tokens=max_tokens, clock=clock)
    for index, token in enumerate(tokens):
        clock.now += steps[index] if index < len(steps) else 0.0
        batcher.add(token)
    batcher.flush()
    assert "".join(sent) == "".join(tokens)
    assert all(sent)
    assert len(sent) <= sum(1 for token in tokens if token)
    assert batcher.messages == len(sent)


@pytest.mark.parametrize(
    ("interval", "max_tokens", "problem"),
    [
        (-1.0, 5, "interval"),
        (float("nan"), 5, "interval"),
        (0.02, 0, "max_tokens"),
        (0.02, True, "max_tokens"),
    ],
)
def test_bad_options_are_refused(interval: float, max_tokens: int, problem: str) -> None:
    with pytest.raises(InvalidInput, match=problem):
        TokenBatcher(print, interval=interval, max_tokens=max_tokens)
