"""The fault injector: seeded, at the set rates, each fault doing what it says, recorded."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citelab import ConfigError
from citelab.models import (
    FaultRates,
    Injection,
    Message,
    PerturbedModel,
    ScriptedModel,
    TextDelta,
    collect,
    get_model,
    inject_faults,
    round_views,
)
from citelab.models.offline._markers import marker_numbers, rewrite_markers
from citelab.sources._block import BlockSource

from .._builders import (
    DATA_SCIENCE,
    FEES,
    HISTORY,
    LIBRARY_ROW,
    POOL_ROW,
    numbered_results,
    raw_results,
    search_call,
    system,
    user,
)

POOL = BlockSource(4, "entity:page/pool", "Sports centre", str(POOL_ROW["content"]))
LIBRARY = BlockSource(5, "entity:page/library", "Library", str(LIBRARY_ROW["content"]))


def _history() -> list[Message]:
    """Round 1 saw 1..3 from the prompt; round 2 saw the raw search output renumber 1 and 2
    (pool, library); the agent then rewrote the tool message back to stable numbers."""
    return [
        system(DATA_SCIENCE, HISTORY, FEES),
        user("Tell me about the campus."),
        search_call("c1", "campus"),
        raw_results("c1", POOL_ROW, LIBRARY_ROW),
        search_call("c2", "more campus"),
        numbered_results("c2", DATA_SCIENCE, HISTORY, POOL, LIBRARY),
    ]


def _answer(markers: int, numbers: tuple[int, ...] = (1, 2, 3, 4, 5)) -> str:
    return " ".join(f"Claim {i} [{numbers[i % len(numbers)]}]." for i in range(markers))


def _model(rates: dict[str, float], text: str, seed: int = 0, calls: int = 1) -> PerturbedModel:
    inner = ScriptedModel([{"text": [text]} for _ in range(calls)])
    return PerturbedModel(inner, rates, seed)


async def _run(
    model: PerturbedModel, messages: list[Message] | None = None, seed: int | None = None
) -> str:
    turn = await collect(model.stream(messages or _history(), seed=seed))
    return turn.text


@pytest.mark.anyio
async def test_the_same_seed_gives_the_same_faults() -> None:
    rates = {"wrong": 0.2, "stale": 0.2, "out_of_range": 0.1, "dropped": 0.2}
    text = _answer(50)
    runs = []
    for _ in range(2):
        model = _model(rates, text, seed=11)
        runs.append((await _run(model), model.records[0].injections))
    assert runs[0] == runs[1]
    other = _model(rates, text, seed=12)
    assert await _run(other) != runs[0][0]


@pytest.mark.anyio
async def test_empirical_rates_match_the_set_rates() -> None:
    rates = {"wrong": 0.15, "stale": 0.1, "out_of_range": 0.05, "dropped": 0.2}
    calls = 20
    model = _model(rates, _answer(100), seed=3, calls=calls)
    for call in range(calls):
        await _run(model, seed=call)
    markers = sum(record.markers for record in model.records)
    assert markers == 2000
    counts: Counter[str] = Counter(injection.kind for injection in model.injections)
    for kind, rate in FaultRates.model_validate(rates).model_dump().items():
        assert abs(counts[kind] / markers - rate) < 0.03, (kind, counts[kind] / markers)


@pytest.mark.anyio
async def test_wrong_uses_another_number_of_the_current_view() -> None:
    model = _model({"wrong": 1.0}, _answer(40))
    await _run(model)
    injections = model.records[0].injections
    assert len(injections) == 40
    for injection in injections:
        assert injection.injected in {1, 2, 3, 4, 5} - {injection.original}
    assert {i.original_uri for i in injections} >= {DATA_SCIENCE.uri, FEES.uri}


@pytest.mark.anyio
async def test_stale_uses_a_number_an_earlier_round_gave_another_entity() -> None:
    model = _model({"stale": 1.0}, _answer(40))
    await _run(model)
    injections = model.records[0].injections
    assert len(injections) == 40
    *earlier, current = round_views(_history())
    for injection in injections:
        assert injection.kind == "stale"
        assert injection.injected is not None
        before = {view[injection.injected].uri for view in earlier if injection.injected in view}
        assert injection.entity_uri_before in before
        assert injection.entity_uri_before != injection.original_uri
        # The number has meant something else since: that is what makes it stale.
        assert current[injection.injected].uri != injection.entity_uri_before


@pytest.mark.anyio
async def test_stale_needs_history_and_injects_nothing_without_it() -> None:
    model = _model({"stale": 1.0}, _answer(10))
    text = await _run(model, [system(DATA_SCIENCE, HISTORY, FEES), user("q")])
    assert model.records[0].injections == []
    assert text == _answer(10)


@pytest.mark.anyio
async def test_out_of_range_goes_beyond_every_source() -> None:
    model = _model({"out_of_range": 1.0}, _answer(30))
    text = await _run(model)
    assert all(injection.injected and injection.injected > 5 for injection in model.injections)
    assert all(n > 5 for n in marker_numbers(text))


@pytest.mark.anyio
async def test_dropped_removes_the_marker_and_its_space() -> None:
    model = _model({"dropped": 1.0}, "Fees are due in March [3]. Dogs stay out [4][5].")
    assert await _run(model) == "Fees are due in March. Dogs stay out."
    assert [(i.marker_index, i.original, i.injected) for i in model.injections] == [
        (0, 3, None),
        (1, 4, None),
        (2, 5, None),
    ]


@pytest.mark.anyio
async def test_the_streamed_text_is_exactly_the_recorded_rewrite() -> None:
    rates = {"wrong": 0.25, "out_of_range": 0.25, "dropped": 0.25}
    original = _answer(30)
    model = _model(rates, original, seed=5)
    deltas = [d async for d in model.stream(_history())]
    pieces = [d.text for d in deltas if isinstance(d, TextDelta)]
    assert len(pieces) > 30  # still streamed piecewise
    record = model.records[0]
    assert "".join(pieces) == record.text
    assert record.original_text == original
    expected: list[int | None] = list(marker_numbers(original))
    for injection in record.injections:
        assert expected[injection.marker_index] == injection.original
        expected[injection.marker_index] = injection.injected
    assert marker_numbers(record.text) == [n for n in expected if n is not None]


@pytest.mark.anyio
async def test_tool_call_rounds_pass_through_untouched() -> None:
    inner = ScriptedModel([{"text": "Searching [1].", "tool_calls": [{"name": "rag_search"}]}])
    model = PerturbedModel(inner, {"dropped": 1.0}, seed=1)
    turn = await collect(model.stream(_history()))
    assert turn.text == "Searching [1]."
    assert turn.tool_calls[0].name == "rag_search"
    assert model.records[0].markers == 0
    assert model.records[0].injections == []


@pytest.mark.anyio
async def test_a_rate_of_zero_changes_nothing_in_the_stream() -> None:
    original = _answer(25)
    model = _model({}, original)
    assert await _run(model) == original
    assert model.injections == []


@settings(max_examples=60, deadline=None)
@given(
    numbers=st.lists(st.integers(min_value=1, max_value=9), max_size=12),
    style=st.sampled_from(["[{}]", "[{}, 7]", "[{}][2]"]),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_zero_rates_leave_any_text_unchanged(numbers: list[int], style: str, seed: int) -> None:
    text = " ".join("claim " + style.format(n) + "." for n in numbers)
    views = round_views(_history())
    perturbed, injections = inject_faults(text, views, FaultRates(), random.Random(seed))
    assert (perturbed, injections) == (text, [])


def test_rates_must_leave_room_for_one_fault_per_marker() -> None:
    with pytest.raises(ValueError, match=r"sum to 1\.2"):
        FaultRates(wrong=0.6, dropped=0.6)
    with pytest.raises(ConfigError, match="bad rates"):
        get_model("perturbed", rates={"wrong": 0.7, "stale": 0.7})


def test_markers_are_rewritten_number_by_number() -> None:
    text = "A [1, 3]. B [2][4]. See [5](http://example.test). `[7]` C [6] and [8-9]."
    assert marker_numbers(text) == [1, 3, 2, 4, 6, 8, 9]
    dropped = {1, 2, 3, 6}
    result = rewrite_markers(text, lambda i, n: None if i in dropped else n + 10)
    assert result == "A [11]. B. See [5](http://example.test). `[7]` C [16] and [18]."


@pytest.mark.parametrize(
    ("drop", "expected"),
    [
        ({0}, "Dogs stay out [5]."),
        ({1}, "Dogs stay out [4]."),
        ({0, 1}, "Dogs stay out."),
        (set(), "Dogs stay out [4][5]."),
    ],
)
def test_dropping_inside_a_chain_keeps_the_text_tidy(drop: set[int], expected: str) -> None:
    text = "Dogs stay out [4][5]."
    assert rewrite_markers(text, lambda i, n: None if i in drop else n) == expected


def test_an_unchanged_marker_keeps_its_exact_text() -> None:
    text = "Fees [2-4] and rules [1,3]."
    assert rewrite_markers(text, lambda i, n: n) == text
    assert (
        rewrite_markers(text, lambda i, n: 9 if i == 0 else n) == "Fees [9, 3, 4] and rules [1,3]."
    )


def test_injection_records_serialize_for_reports() -> None:
    injection = Injection(
        kind="stale",
        marker_index=0,
        original=1,
        injected=2,
        original_uri="entity:a/1",
        entity_uri_before="entity:b/2",
    )
    assert Injection.model_validate_json(injection.model_dump_json()) == injection
