from __future__ import annotations

import sys
from typing import Any

import pytest

from citelab import Conflict, InvalidInput, MissingDependency, NotFound
from citelab.answers import (
    FEEDBACK_EXTRA_KEY,
    LangfuseScorer,
    MemoryLogStore,
    trace_scorer_from_env,
)
from citelab.corpus import Reader

from .conftest import Clock, ServiceFactory, scripted, scripted_agent

pytestmark = pytest.mark.anyio

QUESTION = "How many ECTS credits is the Data Science BSc?"


class FakeScorer:
    """Stands in for Langfuse: no Langfuse server can run in the test environment."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    def score(self, trace_id: str, *, name: str, value: float, comment: str | None) -> None:
        if self.fail:
            raise ConnectionError("langfuse is down")
        self.calls.append({"trace_id": trace_id, "name": name, "value": value, "comment": comment})


async def test_feedback_tags_replace_each_other_instead_of_piling_up(
    make_service: ServiceFactory,
) -> None:
    logs = MemoryLogStore()
    service = make_service(logs=logs, scorer=FakeScorer())
    answer = await service.answer("default", QUESTION)
    await service.feedback.record(answer.conversation_id, 1, "up")
    await service.feedback.record(answer.conversation_id, 1, "down", comment="wrong level")
    entry = await logs.get(answer.log_id or "")
    assert entry is not None
    assert [t for t in entry.tags if t.startswith("feedback:")] == ["feedback:down"]
    assert f"ai_agents_runner_{answer.runner_id}" in entry.tags
    payload = entry.extra[FEEDBACK_EXTRA_KEY]
    assert payload["value"] == "down"
    assert payload["comment"] == "wrong level"
    assert payload["turn"] == 1
    assert "ai_answers" in entry.extra  # earlier extra data is kept


async def test_feedback_scores_the_trace_when_a_scorer_is_configured(
    make_service: ServiceFactory,
) -> None:
    scorer = FakeScorer()
    service = make_service(scorer=scorer)
    answer = await service.answer("default", QUESTION)
    entry = await service.feedback.record(answer.conversation_id, 1, "up", comment="great")
    assert scorer.calls == [
        {"trace_id": answer.trace_id, "name": "user_feedback", "value": 1.0, "comment": "great"}
    ]
    assert entry.extra[FEEDBACK_EXTRA_KEY]["trace_scored"] is True


async def test_a_failing_scorer_keeps_the_rating(make_service: ServiceFactory) -> None:
    service = make_service(scorer=FakeScorer(fail=True))
    answer = await service.answer("default", QUESTION)
    entry = await service.feedback.record(answer.conversation_id, 1, "down")
    assert "feedback:down" in entry.tags
    assert entry.extra[FEEDBACK_EXTRA_KEY]["trace_scored"] is False


async def test_feedback_needs_the_agents_setting(make_service: ServiceFactory) -> None:
    agent = scripted_agent(feedback_enabled=False)
    service = make_service(agent, models={"scripted": scripted({"text": "180 [1]."})})
    answer = await service.answer("scripted", QUESTION)
    with pytest.raises(Conflict, match="does not accept feedback"):
        await service.feedback.record(answer.conversation_id, 1, "up")


async def test_feedback_follows_the_owner_rules(make_service: ServiceFactory, clock: Clock) -> None:
    service = make_service()
    alice, bob = Reader(user_id="alice"), Reader(user_id="bob")
    owned = await service.answer("default", QUESTION, user=alice)
    with pytest.raises(NotFound):
        await service.feedback.record(owned.conversation_id, 1, "up", user=bob)
    with pytest.raises(NotFound):
        await service.feedback.record(owned.conversation_id, 1, "up")
    await service.feedback.record(owned.conversation_id, 1, "up", user=alice)
    anonymous = await service.answer("default", QUESTION)
    await service.feedback.record(anonymous.conversation_id, 1, "up", user=bob)
    clock.advance(10**9)
    with pytest.raises(NotFound):
        await service.feedback.record(owned.conversation_id, 1, "up", user=alice)


@pytest.mark.parametrize(
    ("turn", "value", "error", "message"),
    [
        (2, "up", NotFound, "has no turn 2"),
        (0, "up", NotFound, "has no turn 0"),
        (1, "meh", InvalidInput, "must be one of"),
    ],
)
async def test_bad_feedback_is_refused_clearly(
    make_service: ServiceFactory, turn: int, value: Any, error: type[Exception], message: str
) -> None:
    service = make_service()
    answer = await service.answer("default", QUESTION)
    with pytest.raises(error, match=message):
        await service.feedback.record(answer.conversation_id, turn, value)


def test_no_scorer_without_langfuse_keys() -> None:
    assert trace_scorer_from_env({}) is None
    assert trace_scorer_from_env({"LANGFUSE_PUBLIC_KEY": "pk"}) is None


def test_configured_langfuse_without_the_package_names_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "langfuse", None)  # makes `import langfuse` fail
    env = {"LANGFUSE_PUBLIC_KEY": "pk", "LANGFUSE_SECRET_KEY": "sk"}
    with pytest.raises(MissingDependency, match=r"pip install 'citelab\[langfuse\]'"):
        trace_scorer_from_env(env)


@pytest.mark.parametrize("method", ["create_score", "score"])
def test_langfuse_scorer_uses_either_sdk_generation(method: str) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    class Client:
        def flush(self) -> None:
            calls.append(("flush", {}))

    def record(**kwargs: Any) -> None:
        calls.append((method, kwargs))

    client = Client()
    setattr(client, method, record)
    LangfuseScorer(client).score("t1", name="user_feedback", value=0.0, comment=None)
    assert calls == [
        (method, {"trace_id": "t1", "name": "user_feedback", "value": 0.0, "comment": None}),
        ("flush", {}),
    ]
