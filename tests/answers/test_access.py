"""Restricted intranet documents never reach a reader without access: not in sources, text,
references (provisional or final), logs, or the conversation's held sources."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from citelab._paths import fixtures_dir
from citelab.answers import Answer, MemoryConversationStore, MemoryLogStore
from citelab.corpus import Reader
from citelab.events import Reference

from .conftest import ServiceFactory, scripted, scripted_agent

pytestmark = pytest.mark.anyio


def _intranet_module() -> ModuleType:
    path = fixtures_dir() / "corpora" / "_intranet.py"
    spec = importlib.util.spec_from_file_location("_intranet_fixture", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: Distinctive word -> who may read the documents containing it (from the fixture itself).
LEAK_MARKERS: dict[str, str] = _intranet_module().LEAK_MARKERS

PROBES = [
    "What is the Harrier expense tool and how do I submit expenses?",
    "How do I connect to the VPN gateway?",
    "What is Operation Larkspur and which positions are removed?",
    "Which salary band are senior engineers in?",
    "What does the Saltmarsh cash forecast expect?",
    "Is the board considering the Quillon acquisition?",
    "Where does Bob Lindqvist live after his relocation?",
    "What is Project Bluefinch building?",
    "When was Kestrel Systems founded?",  # public: every reader gets an answer with sources
]


def readable_by(reader: Reader, who: str) -> bool:
    """Whether ``reader`` may read a document marked ``who``: clauses joined by " or ", each
    ``role <name>``, ``user <id>`` or ``users <id> and <id>`` (the fixture's own wording)."""
    for clause in who.split(" or "):
        kind, _, names = clause.partition(" ")
        wanted = set(names.split(" and "))
        if kind == "role" and wanted & reader.roles:
            return True
        if kind in ("user", "users") and reader.user_id in wanted:
            return True
    return False


def forbidden(reader: Reader) -> list[str]:
    return [word for word, who in LEAK_MARKERS.items() if not readable_by(reader, who)]


def test_the_leak_marker_wording_is_understood() -> None:
    """Guards the parser above: a reworded marker must not turn the leak test into a no-op."""
    assert forbidden(Reader.anonymous()) == list(LEAK_MARKERS)
    everyone = Reader(user_id="alice", roles=frozenset({"staff", "hr", "finance"}))
    assert forbidden(everyone) == []


def from_documents(answer: Answer) -> list[str]:
    """Everything in an answer that comes from documents, not from the user's own words."""
    parts = [
        answer.text,
        answer.message.to_json(),
        *(s.model_dump_json() for s in [*answer.sources, *answer.dropped]),
        *(a.model_dump_json() for a in answer.anchors),
        *(r.label for r in answer.suggested_replies),
    ]
    for record in answer.rounds:
        parts.extend(str(m.get("content")) for m in record.messages if m["role"] != "user")
        parts.extend(str(call.returned) + call.message for call in record.tool_calls)
        parts.append(record.text)
    parts.extend(str(call.returned) for call in answer.forced)
    return parts


async def ask_everything(make_service: ServiceFactory, reader: Reader) -> tuple[list[Answer], str]:
    """Ask every probe (first turns and follow-ups); return what reached the reader or a log."""
    logs, store = MemoryLogStore(), MemoryConversationStore()
    service = make_service(logs=logs, store=store)
    fired: list[list[Reference]] = []
    answers = []
    for probe in PROBES:
        first = await service.answer("intranet", probe, user=reader, on_references=fired.append)
        follow_up = "Tell me more about that."
        answers += [
            first,
            await service.answer("intranet", follow_up, first.conversation_id, reader),
        ]
    parts = [part for answer in answers for part in from_documents(answer)]
    parts += [r.model_dump_json() for refs in fired for r in refs]
    for entry in await logs.entries():
        system_prompt = entry.prompt.rsplit("\n\nUser: ", 1)[0]
        parts += [system_prompt, entry.output, str(entry.sources)]
    for answer in answers:
        record = await service.conversation(answer.conversation_id, reader)
        parts += [s.model_dump_json() for s in record.held_sources]
        parts += [turn.answer for turn in record.turns]
    return answers, " ".join(parts)


@pytest.mark.parametrize(
    "reader",
    [
        Reader.anonymous(),
        Reader(user_id="carol", roles=frozenset({"staff"})),
        Reader(user_id="alice", roles=frozenset({"staff"})),
        Reader(user_id="dave", roles=frozenset({"staff", "hr"})),
    ],
    ids=["anonymous", "staff", "alice", "hr"],
)
async def test_restricted_documents_never_reach_a_reader_without_access(
    make_service: ServiceFactory, reader: Reader
) -> None:
    answers, everything = await ask_everything(make_service, reader)
    for word in forbidden(reader):
        assert word not in everything, f"{word!r} leaked to {reader}"
    assert any(a.sources for a in answers)


async def test_readers_with_access_do_get_the_restricted_documents(
    make_service: ServiceFactory,
) -> None:
    _, everything = await ask_everything(
        make_service, Reader(user_id="dave", roles=frozenset({"staff", "hr"}))
    )
    assert "Harrier" in everything
    assert "Larkspur" in everything


async def test_held_sources_are_rechecked_when_access_changes(
    make_service: ServiceFactory,
) -> None:
    agent = scripted_agent("hrbot", corpus="intranet")
    model = scripted({"text": "Larkspur removes positions [1]."}, {"text": "Noted."})
    service = make_service(agent, models={"hrbot": model})
    hr = Reader(user_id="erin", roles=frozenset({"staff", "hr"}))
    first = await service.answer("hrbot", "What is Operation Larkspur?", user=hr)
    assert "Larkspur" in first.sources[0].title
    demoted = Reader(user_id="erin", roles=frozenset({"staff"}))
    larkspur = first.sources[0].uri
    held = await service.conversation(first.conversation_id, hr)
    assert larkspur in {s.uri for s in held.held_sources}
    later = await service.answer("hrbot", "Tell me more.", first.conversation_id, user=demoted)
    # The history is the user's own conversation; the sources block must not offer it again.
    system_prompt = str(model.seen[1][0]["content"])
    assert larkspur not in system_prompt
    assert "Thirty-five positions" not in system_prompt
    held = await service.conversation(later.conversation_id, demoted)
    assert larkspur not in {s.uri for s in held.held_sources}
