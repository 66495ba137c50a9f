"""The README's and notebooks' example questions, and every suggested reply, get answers from
the offline model over the bundled university corpus (issue #13, item 8)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from citelab._paths import CACHE_ENV
from citelab.answers import Answer, AnswerService
from citelab.corpus import Reader

EXAMPLES = [
    ("What does the Data Science MSc cost?", ["312 euros", "Data Science MSc"]),  # README
    (
        # #32: "How long does the MSc take …" got no duration, only a BSc sentence.
        "How many semesters and ECTS credits is the Data Science MSc, and how much is the "
        "semester fee?",
        ["312 euros", "four-semester", "120 ECTS"],
    ),
    ("When do applications for the Data Science MSc close?", ["31 May"]),
    (
        "How much is the semester fee, and when do applications for the Data Science MSc close?",
        ["312 euros", "31 May"],
    ),
    ("How much is the semester fee?", ["312 euros"]),
]
NO_ANSWER = ["Can I bring my dog to the swimming pool?", "Which sources do you have?"]


@pytest.fixture
async def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[AnswerService]:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    async with AnswerService(database=tmp_path / "db.sqlite") as running:
        yield running


async def _ask(service: AnswerService, question: str, conversation: str | None = None) -> Answer:
    return await service.answer("default", question, conversation, Reader.anonymous())


@pytest.mark.anyio
@pytest.mark.parametrize(("question", "facts"), EXAMPLES, ids=[q for q, _ in EXAMPLES])
async def test_example_questions_get_the_facts_the_corpus_holds(
    service: AnswerService, question: str, facts: list[str]
) -> None:
    answer = await _ask(service, question)
    for fact in facts:
        assert fact in answer.text
    assert answer.references


@pytest.mark.anyio
@pytest.mark.parametrize("question", [q for q, _ in EXAMPLES[:2]] + NO_ANSWER)
async def test_every_suggested_reply_gets_a_cited_answer(
    service: AnswerService, question: str
) -> None:
    first = await _ask(service, question)
    assert first.suggested_replies, "no follow-ups offered"
    for reply in first.suggested_replies:
        followed = await _ask(service, reply.message or reply.label, first.conversation_id)
        assert followed.references, f"{reply.label!r} led to no answer: {followed.text}"


@pytest.mark.anyio
async def test_no_answer_chips_do_not_go_in_a_circle(service: AnswerService) -> None:
    first = await _ask(service, "Can I bring my dog to the swimming pool?")
    assert not first.references
    labels = [reply.label for reply in first.suggested_replies]
    assert "Which sources do you have?" not in labels
    followed = await _ask(service, labels[0], first.conversation_id)
    assert followed.references
    assert [r.label for r in followed.suggested_replies] != labels
