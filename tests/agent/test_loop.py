from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from citelab import InvalidInput, ModelError
from citelab.agent import (
    AgentHook,
    HookSwitches,
    NoRunContext,
    RunContext,
    SystemPromptEvent,
    ToolResultEvent,
    current_run,
    run_agent,
)
from citelab.corpus import Reader
from citelab.events import Reference
from citelab.models import (
    ExtractiveModel,
    FinishDelta,
    Message,
    ModelDelta,
    ScriptedModel,
    TextDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    message_text,
)
from citelab.sources import Source, parse_markers

from ._builders import PROMPT, SECRET, town_context, town_corpus

pytestmark = pytest.mark.anyio

QUESTION = "When does the library open on Saturdays?"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def ask(question: str = QUESTION) -> list[Message]:
    return [{"role": "user", "content": question}]


def held(context: RunContext, *entity_ids: str) -> list[Source]:
    """Sources for ``entity_ids``, numbered 1..n, with their full text (as a follow-up holds)."""
    assert context.corpus is not None
    sources = []
    for number, entity_id in enumerate(entity_ids, start=1):
        document = context.corpus.get("page", entity_id)
        assert document is not None
        translation = document.translations["en"]
        sources.append(
            Source(
                number=number,
                entity_type="page",
                entity_id=entity_id,
                title=translation.title,
                content=translation.content,
            )
        )
    return sources


def search(query: str, **extra: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": "rag_search", "arguments": {"query": query, **extra}}]}


# --- the system prompt hook ---------------------------------------------------------------------


async def test_system_prompt_hook_appends_to_the_agents_own_prompt() -> None:
    context = town_context()
    model = ScriptedModel([{"text": "The library opens at 10:00 [1]."}])
    await run_agent(context, model, ask(), force_search=QUESTION)
    system = model.seen[0][0]
    assert system["role"] == "system"
    prompt = system["content"]
    assert prompt.startswith(PROMPT)
    contract_at = prompt.index("## How to cite")
    assert contract_at > len(PROMPT)
    assert prompt.index('<source number="1" uri="entity:page/library"') > contract_at


async def test_switching_the_prompt_hook_off_leaves_the_agents_prompt_alone() -> None:
    context = town_context(hooks=HookSwitches(system_prompt=False))
    model = ScriptedModel([{"text": "No idea."}])
    await run_agent(context, model, ask(), force_search=QUESTION)
    assert model.seen[0][0]["content"] == PROMPT
    assert context.sources  # the forced search still held its sources


async def test_later_hooks_layer_on_top_of_the_contract() -> None:
    class Footer(AgentHook):
        def on_system_prompt(self, event: SystemPromptEvent) -> None:
            event.prompt += "\nFOOTER"

    context = town_context()
    model = ScriptedModel([{"text": "Done."}])
    await run_agent(context, model, ask(), hooks=[Footer()])
    prompt = message_text(model.seen[0][0])
    assert prompt.startswith(PROMPT)
    assert prompt.endswith("FOOTER")
    assert prompt.index("## How to cite") < prompt.index("FOOTER")


async def test_hooks_ignore_events_of_another_agent() -> None:
    from citelab.agent import ContractPromptHook

    context = town_context(agent_id="town")
    hook = ContractPromptHook()
    event = SystemPromptEvent(agent_id="someone-else", prompt="theirs")
    from citelab.agent import run_scope

    with run_scope(context):
        hook.on_system_prompt(event)
    assert event.prompt == "theirs"


# --- the run context ----------------------------------------------------------------------------


async def test_round_two_sources_survive_because_the_stream_runs_inside_the_scope() -> None:
    seen_during_stream: list[list[str]] = []

    class Spy:
        """Answers in round 2, recording what the run context holds while it streams."""

        name = "spy"

        def __init__(self) -> None:
            self.calls = 0

        async def stream(
            self,
            messages: Sequence[Message],
            tools: Sequence[ToolSpec] | None = None,
            *,
            tool_choice: ToolChoice | None = None,
            seed: int | None = None,
        ) -> AsyncIterator[ModelDelta]:
            self.calls += 1
            seen_during_stream.append([s.uri for s in current_run().sources])
            if self.calls == 1:
                arguments = json.dumps({"query": "parking permit cost"})
                yield ToolCallDelta(index=0, id="c1", name="rag_search", arguments=arguments)
                yield FinishDelta(reason="tool_calls")
                return
            await asyncio.sleep(0)
            yield TextDelta(text="Permits cost 40 crowns [2].")
            seen_during_stream.append([s.uri for s in current_run().sources])
            yield FinishDelta(reason="stop")

    context = town_context(max_results=1)
    run = await run_agent(context, Spy(), ask(), force_search=QUESTION)
    assert seen_during_stream[0] == ["entity:page/library"]
    assert seen_during_stream[1] == ["entity:page/library", "entity:page/parking"]
    assert seen_during_stream[2] == seen_during_stream[1]
    assert [s.uri for s in run.sources] == seen_during_stream[1]
    round_two_prompt = message_text(run.rounds[1].messages[0])
    assert 'number="1" uri="entity:page/library"' in round_two_prompt
    assert 'number="2" uri="entity:page/parking"' in round_two_prompt
    with pytest.raises(NoRunContext):
        current_run()  # the scope closed when the run ended, not before


async def test_no_context_outside_a_run() -> None:
    with pytest.raises(NoRunContext, match="run_scope"):
        current_run()


# --- the tool-message rewrite -------------------------------------------------------------------


def stale_markers(run_text: str, context: RunContext, visible: dict[int, str]) -> list[int]:
    """Markers whose number, after the run, names another source than the model saw."""
    final = {source.number: source.uri for source in context.sources}
    return [
        number
        for marker in parse_markers(run_text)
        for number in marker.numbers
        if visible.get(number) != final.get(number)
    ]


@pytest.mark.parametrize("model_kind", ["extractive", "scripted"])
async def test_with_the_rewrite_numbers_do_not_go_stale(model_kind: str) -> None:
    context = town_context(max_results=1)
    context.sources = held(context, "library", "pool")
    model = (
        ExtractiveModel()
        if model_kind == "extractive"
        else ScriptedModel([search("parking permit"), {"text": "Permits cost 40 crowns [3]."}])
    )
    run = await run_agent(context, model, ask("How much does a residents' parking permit cost?"))
    call = run.rounds[0].tool_calls[0]
    assert call.returned == {3: "entity:page/parking"}
    assert call.message.startswith('<sources>\n<source number="3" uri="entity:page/parking"')
    assert "[3]" in run.text
    assert stale_markers(run.text, context, run.rounds[-1].visible_numbering) == []


async def test_without_the_rewrite_a_naive_model_cites_stale_numbers() -> None:
    context = town_context(max_results=1, hooks=HookSwitches(tool_rewrite=False))
    context.sources = held(context, "library", "pool")
    run = await run_agent(
        context, ExtractiveModel(), ask("How much does a residents' parking permit cost?")
    )
    call = run.rounds[0].tool_calls[0]
    assert json.loads(call.message)["results"][0]["entity_id"] == "parking"
    # The raw JSON is read by position: "1" now means parking to the model, library to us.
    assert run.rounds[1].visible_numbering[1] == "entity:page/parking"
    assert "[1]" in run.text
    assert stale_markers(run.text, context, run.rounds[-1].visible_numbering) == [1]


async def test_a_later_round_never_renumbers_an_earlier_entity() -> None:
    context = town_context(max_results=2)
    model = ScriptedModel(
        [
            search("ferry crossing cost"),
            search("library saturday opening ferry"),
            {"text": "Done [1]."},
        ]
    )
    run = await run_agent(context, model, ask(), force_search=QUESTION, max_rounds=3)
    first = {uri: n for n, uri in run.forced[0].returned.items()}
    for record in run.rounds:
        for call in record.tool_calls:
            for number, uri in call.returned.items():
                first.setdefault(uri, number)
                assert first[uri] == number, f"{uri} renumbered in round {record.index}"
    assert {s.uri: s.number for s in run.sources} == first
    assert sorted(first.values()) == list(range(1, len(first) + 1))


async def test_the_replace_ablation_renumbers_from_one() -> None:
    context = town_context(max_results=1, merge="replace")
    context.sources = held(context, "library", "pool")
    model = ScriptedModel([search("parking permit"), {"text": "Permits [1]."}])
    run = await run_agent(context, model, ask())
    assert [(s.number, s.uri) for s in run.sources] == [(1, "entity:page/parking")]
    assert run.rounds[0].tool_calls[0].added == {1: "entity:page/parking"}


async def test_a_listing_tool_keeps_its_summary_above_the_numbered_sources() -> None:
    context = town_context(max_results=1, listing=True)
    model = ScriptedModel([{"tool_calls": [{"name": "transport_pages"}]}, {"text": "See [1]."}])
    run = await run_agent(context, model, ask("What transport is there?"))
    message = run.rounds[0].tool_calls[0].message
    summary, block = message.split("\n\n", 1)
    assert summary.startswith("Listed 2 entities where topic = transport")
    assert block.startswith("<sources>")
    assert {s.uri for s in run.sources} == {"entity:page/parking", "entity:page/ferry"}
    assert 'title="Ferry timetable"' in block


# --- bad tool calls, limits and failures ----------------------------------------------------------


async def test_unknown_tools_and_bad_arguments_become_tool_messages() -> None:
    context = town_context()
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "weather", "arguments": {}}]},
            {"tool_calls": [{"name": "rag_search", "arguments": {"q": "x"}}]},
            {"tool_calls": [{"name": "rag_search", "arguments": "not json"}]},
            {"text": "Sorry."},
        ]
    )
    run = await run_agent(context, model, ask(), max_rounds=4)
    errors = [record.tool_calls[0].error for record in run.rounds[:3]]
    assert errors[0] == "unknown tool 'weather' (available: rag_search)"
    assert errors[1] is not None
    assert "missing required argument 'query'" in errors[1]
    assert "unexpected argument 'q'" in errors[1]
    assert errors[2] is not None
    assert "not JSON" in errors[2]
    tool_messages = [m for m in model.seen[3] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [f"Error: {e}" for e in errors]
    assert run.text == "Sorry."


async def test_exceeding_max_rounds_names_the_limit() -> None:
    context = town_context()
    model = ScriptedModel([search("library"), search("pool")])
    with pytest.raises(ModelError, match="max_rounds=2"):
        await run_agent(context, model, ask(), max_rounds=2)
    with pytest.raises(InvalidInput, match="max_rounds"):
        await run_agent(context, model, ask(), max_rounds=0)


async def test_the_last_allowed_round_is_asked_for_an_answer() -> None:
    context = town_context(max_results=1)
    context.sources = held(context, "library", "pool")
    # The extractive model would search again, but not when told tool_choice="none".
    run = await run_agent(
        context, ExtractiveModel(), ask("How much does a parking permit cost?"), max_rounds=1
    )
    assert len(run.rounds) == 1
    assert run.rounds[0].tool_calls == []


async def test_a_model_failing_mid_stream_is_a_model_error_after_the_pieces_sent() -> None:
    tokens: list[str] = []
    model = ScriptedModel([{"text": ["The library ", "opens ", "at 10."], "error_after": 2}])
    with pytest.raises(ModelError, match="scripted model error"):
        await run_agent(town_context(), model, ask(), on_token=tokens.append)
    assert tokens == ["The library ", "opens "]


async def test_a_foreign_exception_from_the_model_is_wrapped() -> None:
    class Broken:
        name = "broken"

        async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelDelta]:
            yield TextDelta(text="Half")
            raise ConnectionResetError("peer went away")

    with pytest.raises(ModelError, match="model 'broken' failed: ConnectionResetError"):
        await run_agent(town_context(), Broken(), ask())


async def test_a_failing_callback_is_not_blamed_on_the_model() -> None:
    def gone(piece: str) -> None:
        raise BrokenPipeError("client disconnected")

    with pytest.raises(BrokenPipeError):
        await run_agent(town_context(), ScriptedModel([{"text": "Hi."}]), ask(), on_token=gone)


# --- streaming events ----------------------------------------------------------------------------


async def test_references_fire_before_the_first_token_and_again_when_sources_grow() -> None:
    events: list[tuple[str, Any]] = []

    async def on_references(references: list[Reference]) -> None:
        events.append(("references", [r.uri for r in references]))

    def on_token(piece: str) -> None:
        events.append(("token", piece))

    context = town_context(max_results=1)
    model = ScriptedModel([search("parking permit"), {"text": ["Permits ", "", "cost 40 [2]."]}])
    run = await run_agent(
        context,
        model,
        ask(),
        force_search=QUESTION,
        on_token=on_token,
        on_references=on_references,
    )
    assert events == [
        ("references", ["entity:page/library"]),
        ("references", ["entity:page/library", "entity:page/parking"]),
        ("token", "Permits "),
        ("token", "cost 40 [2]."),
    ]
    assert run.text == "Permits cost 40 [2]."


async def test_references_fire_once_even_when_nothing_is_held() -> None:
    fired: list[list[Reference]] = []
    await run_agent(
        town_context(), ScriptedModel([{"text": "Hello."}]), ask(), on_references=fired.append
    )
    assert fired == [[]]


async def test_suggested_replies_come_from_the_last_round() -> None:
    model = ScriptedModel(
        [search("pool"), {"text": "Pool [1].", "suggested_replies": [{"label": "Lanes?"}]}]
    )
    run = await run_agent(town_context(), model, ask())
    assert [r.label for r in run.suggested_replies] == ["Lanes?"]


async def test_custom_tool_result_hooks_see_the_rewritten_message() -> None:
    seen: list[str] = []

    class Recorder(AgentHook):
        priority = -1

        def on_tool_result(self, event: ToolResultEvent) -> None:
            seen.append(event.message)

    model = ScriptedModel([search("pool"), {"text": "Pool [1]."}])
    await run_agent(town_context(), model, ask(), hooks=[Recorder()])
    assert seen[0].startswith("<sources>")


# --- access and concurrency ----------------------------------------------------------------------


async def test_restricted_pages_never_reach_a_reader_without_the_role() -> None:
    question = "What is the confidential plan for the library budget?"
    for reader, visible in [(Reader.anonymous(), False), (Reader(roles={"council"}), True)]:
        context = town_context(reader=reader, max_results=5)
        model = ScriptedModel([search("confidential budget plan"), {"text": "Done."}])
        fired: list[list[Reference]] = []
        run = await run_agent(
            context, model, ask(question), force_search=question, on_references=fired.append
        )
        shown = json.dumps([r.model_dump() for r in run.rounds])
        for leak in ("entity:page/budget", SECRET, "11:00"):
            assert (leak in shown) is visible
        uris = {s.uri for s in run.sources} | {r.uri for refs in fired for r in refs}
        assert ("entity:page/budget" in uris) is visible


async def test_concurrent_runs_never_see_each_others_sources() -> None:
    corpus = town_corpus()
    questions = {
        "library": "When does the library open on Saturdays?",
        "parking": "What does a residents' parking permit cost?",
        "ferry": "When does the ferry to Gullholm leave?",
        "pool": "When does the outdoor swimming pool open?",
    }

    async def one(topic: str) -> tuple[str, RunContext, str]:
        context = town_context(corpus, max_results=1, agent_id=f"agent-{topic}")
        model = ExtractiveModel(piece_delay=0.0)
        run = await run_agent(context, model, ask(questions[topic]), force_search=questions[topic])
        return topic, context, run.text

    alone = {topic: (await one(topic))[2] for topic in questions}
    results = await asyncio.gather(*(one(topic) for topic in list(questions) * 10))
    for topic, context, text in results:
        assert text == alone[topic]
        assert [s.uri for s in context.sources] == [f"entity:page/{topic}"]
        for record in context.rounds:
            assert set(record.visible_numbering.values()) <= {f"entity:page/{topic}"}
