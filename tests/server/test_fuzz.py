"""Bad input over real HTTP: fuzzed bodies never cause a 500 and never corrupt a conversation."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from httpx_sse import EventSource
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citelab.events import DoneEvent, ErrorEvent

from .conftest import MAX_BODY_BYTES, Live

AGENTS = ["default", "intranet", "tripwire", "disabled", "no_such_agent", "", "x" * 300]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
# Unicode garbage: any code point JSON can carry (lone surrogates cannot be UTF-8 encoded).
garbage = st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=1, max_size=120)
huge = st.builds(
    lambda ch, n: ch * n, st.sampled_from(["a", "é", "😀", "\u0301"]), st.integers(0, 70_000)
)


def question_bodies(conversation: str) -> st.SearchStrategy[Any]:
    value = st.one_of(json_values, garbage, huge)
    anything = st.fixed_dictionaries(
        {},
        optional={
            "agent": st.one_of(st.sampled_from(AGENTS), value),
            "question": st.one_of(garbage, value),
            "conversation_id": st.one_of(st.just(conversation), value),
            "surprise": value,
        },
    )
    # Nearly valid: garbage questions that do run the pipeline, many of them as follow-ups.
    nearly = st.fixed_dictionaries(
        {"question": garbage},
        optional={"agent": st.sampled_from(AGENTS), "conversation_id": st.just(conversation)},
    )
    return st.one_of(anything, nearly)


def encoded(bodies: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    return st.one_of(
        bodies.map(lambda body: json.dumps(body).encode()),
        json_values.map(lambda body: json.dumps(body).encode()),
        st.binary(max_size=200),
        garbage.map(str.encode),
    )


def post(client: httpx.Client, path: str, body: bytes, stream: bool) -> list[DoneEvent]:
    """Send ``body``; assert no server error; return the answers it produced."""
    accept = "text/event-stream" if stream else "application/json"
    headers = {"Content-Type": "application/json", "Accept": accept}
    with client.stream("POST", path, content=body, headers=headers) as response:
        response.read()
        assert response.status_code < 500, response.text
        if response.status_code != 200:
            error = response.json()["error"]
            assert error["code"] != "internal_error"
            return []
        if not response.headers["content-type"].startswith("text/event-stream"):
            return [DoneEvent.model_validate(response.json())] if path.endswith("question") else []
        return list(_stream_answers(response))


def _stream_answers(response: httpx.Response) -> list[DoneEvent]:
    answers = []
    for event in EventSource(response).iter_sse():
        if event.event == "error":
            raise AssertionError(
                f"a server error mid-stream: {ErrorEvent.model_validate_json(event.data)}"
            )
        if event.event == "done":
            answers.append(DoneEvent.model_validate_json(event.data))
    return answers


def test_fuzzed_questions_never_500_nor_corrupt_a_conversation(live: Live) -> None:
    alice = live.client("alice")
    first = alice.post("/api/question", json={"question": "How much is the semester fee?"})
    conversation = first.json()["conversation_id"]
    kept_turns: list[int] = []

    @settings(
        max_examples=120,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(body=encoded(question_bodies(conversation)), stream=st.booleans())
    def fuzz(body: bytes, stream: bool) -> None:
        for answer in post(alice, "/api/question", body, stream):
            if answer.conversation_id == conversation:
                kept_turns.append(answer.turn)

    fuzz()
    record = asyncio.run(live.service.conversation(conversation, live.users["alice"].reader))
    assert record.turns[0].question == "How much is the semester fee?"
    assert record.turns[0].answer == first.json()["text"]
    # Every fuzzed question that was a valid follow-up added exactly one turn, in order.
    assert kept_turns == list(range(2, 2 + len(kept_turns)))
    assert len(record.turns) == 1 + len(kept_turns)
    follow = {"question": "What does the fee include?", "conversation_id": conversation}
    resumed = alice.post("/api/question", json=follow)
    assert resumed.status_code == 200
    assert resumed.json()["turn"] == len(record.turns) + 1


def test_fuzzed_feedback_never_500(live: Live) -> None:
    alice = live.client("alice")
    answer = alice.post("/api/question", json={"question": "How much is the semester fee?"}).json()
    value = st.one_of(json_values, garbage, huge)
    bodies = st.fixed_dictionaries(
        {},
        optional={
            "conversation_id": st.one_of(st.just(answer["conversation_id"]), value),
            "turn": st.one_of(st.integers(-3, 3), value),
            "value": st.one_of(st.sampled_from(["up", "down"]), value),
            "comment": value,
        },
    )

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(body=encoded(bodies))
    def fuzz(body: bytes) -> None:
        post(alice, "/api/feedback", body, stream=False)

    fuzz()


def test_an_oversized_fuzz_body_is_413_not_500(live: Live) -> None:
    body = json.dumps({"question": "😀" * MAX_BODY_BYTES}).encode()
    response = live.client("alice").post(
        "/api/question", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
