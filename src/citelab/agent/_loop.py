"""The agent loop: rounds of system prompt → model stream → tool calls → tool results.

:func:`run_agent` runs one turn inside :func:`run_scope`, so the held sources live exactly as
long as the stream is being consumed. Each round:

1. build the system prompt: the agent's own prompt, then whatever the
   :class:`SystemPromptEvent` hooks append (the contract, guidance and numbered sources);
2. stream the model; every non-empty text piece goes to ``on_token`` (after the provisional
   references, when they changed);
3. run each tool call: an unknown tool or bad arguments becomes a tool message saying so (the
   model may correct itself); a source tool's output goes through the
   :class:`ToolResultEvent` hooks, which merge its sources and rewrite the message;
4. repeat until a round calls no tool. The last allowed round is asked for an answer
   (``tool_choice="none"``); a model that still calls tools fails the turn, naming the limit.

The answer text is every piece sent to ``on_token``, joined: nothing reaches a client that the
text does not hold, which is what makes the service's no-answer rule safe.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from citelab._errors import CitelabError, InvalidInput, ModelError
from citelab._tracing import Span, span
from citelab.agent._context import RoundRecord, RunContext, ToolCallRecord, run_scope
from citelab.agent._hooks import (
    AgentHook,
    SystemPromptEvent,
    ToolResultEvent,
    absorb_tool_output,
    default_hooks,
    ordered,
    raw_message,
)
from citelab.contract import SuggestedReply
from citelab.events import Reference
from citelab.models import (
    Message,
    Model,
    ModelDelta,
    ModelTurn,
    SystemMessage,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    collect,
    current_view,
    estimate_usage,
)
from citelab.retrieval import SourceTool
from citelab.sources import Source

__all__ = ["AgentRun", "ReferencesCallback", "TokenCallback", "run_agent"]

TokenCallback = Callable[[str], Awaitable[None] | None]
"""Receives each non-empty piece of answer text, in order (may be async)."""
ReferencesCallback = Callable[[list[Reference]], Awaitable[None] | None]
"""Receives the provisional source list (every held source), before text (may be async)."""

# rag_search refuses longer queries; a forced search uses the question's start.
_MAX_QUERY_CHARS = 2000


@dataclass
class AgentRun:
    """What one run produced, before citations are finalized."""

    text: str
    """Every text piece the model wrote (and ``on_token`` received), joined."""
    sources: list[Source]
    """The held sources at the end, numbered as the model last saw them."""
    rounds: list[RoundRecord]
    """Every model round."""
    forced: list[ToolCallRecord] = field(default_factory=list)
    """The search forced before the model, if any."""
    suggested_replies: list[SuggestedReply] = field(default_factory=list)
    """Follow-up chips from the last round."""
    system_prompt: str = ""
    """The last system prompt the model saw."""


async def run_agent(
    context: RunContext,
    model: Model,
    messages: Sequence[Message],
    *,
    max_rounds: int = 4,
    force_search: str | None = None,
    on_token: TokenCallback | None = None,
    on_references: ReferencesCallback | None = None,
    hooks: Sequence[AgentHook] = (),
    seed: int | None = None,
    tool_threads: bool = True,
) -> AgentRun:
    """Run one turn of the agent over ``messages`` (history and question, no system message).

    ``force_search`` runs the context's rag_search tool with that query before the first
    round (the service does this on a conversation's first turn). ``hooks`` are added to the
    two citation hooks. ``tool_threads`` runs source tools in a worker thread, so the event
    loop stays free for other requests while one searches (a server's case); without it they
    run in the loop, which costs less CPU where nothing but model calls waits on the loop (an
    evaluation run: the GIL serializes a search either way). Raises
    :class:`ModelError` when the model fails or exceeds ``max_rounds``.
    """
    if max_rounds < 1:
        raise InvalidInput(f"max_rounds must be at least 1, got {max_rounds}")
    loop = _Loop(context, model, ordered([*default_hooks(), *hooks]), seed)
    loop.tool_threads = tool_threads
    loop.references, loop.on_token = _References(on_references), on_token
    with run_scope(context):
        if force_search is not None:
            await loop.forced_search(force_search)
            await loop.references.update(context.sources)
        return await loop.run(list(messages), max_rounds)


class _References:
    """Fires the provisional list when it changed since it was last sent."""

    def __init__(self, callback: ReferencesCallback | None) -> None:
        self._callback = callback
        self._sent: tuple[tuple[int | None, str], ...] | None = None

    async def update(self, sources: Sequence[Source]) -> None:
        snapshot = tuple((source.number, source.uri) for source in sources)
        if self._callback is None or snapshot == self._sent:
            return
        self._sent = snapshot
        await _call(self._callback, [source.to_reference() for source in sources])


class _Loop:
    def __init__(
        self, context: RunContext, model: Model, hooks: list[AgentHook], seed: int | None
    ) -> None:
        self.context = context
        self.model = model
        self.hooks = hooks
        self.seed = seed
        self.references = _References(None)
        self.on_token: TokenCallback | None = None
        self.pieces: list[str] = []
        self.system_prompt = ""
        self.tool_threads = True

    async def _call_tool(
        self, tool: SourceTool, arguments: Mapping[str, Any] | str
    ) -> dict[str, Any]:
        if self.tool_threads:
            return await asyncio.to_thread(tool.run, arguments, self.context.reader)
        return tool.run(arguments, self.context.reader)

    async def run(self, conversation: list[Message], max_rounds: int) -> AgentRun:
        for index in range(1, max_rounds + 1):
            turn = await self._round(index, conversation, last=index == max_rounds)
            if not turn.tool_calls:
                self.context.suggested_replies = list(turn.suggested_replies)
                return self._result()
            conversation.append(turn.to_message())
            for call in turn.tool_calls:
                conversation.append(await self._tool_call(call))
            await self.references.update(self.context.sources)
        raise ModelError(
            f"agent {self.context.agent_id!r}: the model still called tools after "
            f"max_rounds={max_rounds} rounds (raise max_rounds or check the model)"
        )

    async def forced_search(self, question: str) -> None:
        tool = next((t for t in self.context.tools.values() if t.kind == "rag_search"), None)
        if tool is None:
            raise InvalidInput(f"agent {self.context.agent_id!r} has no rag_search tool to force")
        arguments = {"query": question[:_MAX_QUERY_CHARS]}
        record = ToolCallRecord(
            call_id="forced", name=tool.name, arguments=raw_message(arguments), forced=True
        )
        with span(f"retrieval {tool.name}", _tool_attributes("retrieval", tool.name)) as traced:
            output = await self._call_tool(tool, arguments)
            absorb_tool_output(self.context, tool, arguments, output, record)
            traced.set("citelab.retrieval.results", len(output.get("results") or []))
            traced.set("citelab.sources.held", len(self.context.sources))
        self.context.forced.append(record)

    # --- one round -----------------------------------------------------------------------------

    async def _round(self, index: int, conversation: list[Message], *, last: bool) -> ModelTurn:
        self.system_prompt = self._build_system_prompt()
        system: SystemMessage = {"role": "system", "content": self.system_prompt}
        shown: list[Message] = [system, *conversation]
        record = RoundRecord(
            index=index,
            messages=shown,
            tools=list(self.context.tools),
            visible_numbering={n: seen.uri for n, seen in current_view(shown).items()},
        )
        self.context.rounds.append(record)
        with span(
            f"chat {self._model_name()}", self._chat_attributes(index), client=True
        ) as traced:
            turn = await self._stream(shown, last=last)
            usage = turn.usage or estimate_usage(shown, self._specs(), turn)
            if traced.recording:
                _record_response(traced, turn, usage)
        record.text = turn.text
        record.finish_reason = turn.finish_reason
        record.usage = usage
        return turn

    def _model_name(self) -> str:
        return str(getattr(self.model, "name", None) or type(self.model).__name__)

    def _chat_attributes(self, index: int) -> dict[str, Any]:
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": self._model_name(),
            "gen_ai.request.seed": self.seed,
            "gen_ai.agent.name": self.context.agent_id,
            "citelab.round": index,
        }

    def _specs(self) -> list[ToolSpec]:
        return [cast(ToolSpec, tool.spec) for tool in self.context.tools.values()]

    def _build_system_prompt(self) -> str:
        event = SystemPromptEvent(self.context.agent_id, self.context.base_prompt)
        for hook in self.hooks:
            hook.on_system_prompt(event)
        return event.prompt

    async def _stream(self, shown: list[Message], *, last: bool) -> ModelTurn:
        specs = self._specs()
        choice: ToolChoice | None = "none" if last and specs else None
        with self._model_errors():
            stream = self.model.stream(shown, specs or None, tool_choice=choice, seed=self.seed)
        return await collect(self._tap(stream))

    async def _tap(self, stream: AsyncIterator[ModelDelta]) -> AsyncIterator[ModelDelta]:
        """Pass the deltas on, sending text pieces to the client as they arrive.

        Only the model's own failures become ``ModelError``; a failing callback (a client
        that went away) propagates unchanged.
        """
        while True:
            with self._model_errors():
                try:
                    delta = await anext(stream)
                except StopAsyncIteration:
                    return
            if isinstance(delta, TextDelta) and delta.text:
                await self._emit(delta.text)
            yield delta

    async def _emit(self, piece: str) -> None:
        await self.references.update(self.context.sources)
        self.pieces.append(piece)
        if self.on_token is not None:
            await _call(self.on_token, piece)

    @contextmanager
    def _model_errors(self) -> Iterator[None]:
        try:
            yield
        except CitelabError:
            raise
        except Exception as exc:
            name = getattr(self.model, "name", type(self.model).__name__)
            raise ModelError(f"model {name!r} failed: {type(exc).__name__}: {exc}") from exc

    # --- tools -------------------------------------------------------------------------------

    async def _tool_call(self, call: ToolCall) -> ToolMessage:
        record = ToolCallRecord(call_id=call.id, name=call.name, arguments=call.arguments)
        self.context.rounds[-1].tool_calls.append(record)
        attributes = {**_tool_attributes("execute_tool", call.name), "gen_ai.tool.call.id": call.id}
        with span(f"execute_tool {call.name}", attributes) as traced:
            tool = self.context.tools.get(call.name)
            if tool is None:
                known = ", ".join(self.context.tools) or "none"
                record.error = f"unknown tool {call.name!r} (available: {known})"
            else:
                await self._run_tool(tool, call, record)
            if record.error is not None:
                record.message = f"Error: {record.error}"
                traced.set("error.type", "tool_error")
            traced.set("citelab.sources.held", len(self.context.sources))
        return {"role": "tool", "tool_call_id": call.id, "content": record.message}

    async def _run_tool(self, tool: SourceTool, call: ToolCall, record: ToolCallRecord) -> None:
        try:
            arguments = call.parsed_arguments()
            output = await self._call_tool(tool, arguments)
        except (InvalidInput, ModelError) as exc:
            record.error = str(exc)
            return
        event = ToolResultEvent(
            agent_id=self.context.agent_id,
            tool=tool,
            arguments=arguments,
            output=output,
            message=raw_message(output),
            record=record,
        )
        for hook in self.hooks:
            hook.on_tool_result(event)
        record.message = event.message

    def _result(self) -> AgentRun:
        return AgentRun(
            text="".join(self.pieces),
            sources=list(self.context.sources),
            rounds=list(self.context.rounds),
            forced=list(self.context.forced),
            suggested_replies=list(self.context.suggested_replies),
            system_prompt=self.system_prompt,
        )


def _tool_attributes(operation: str, name: str) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": operation,
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": "function",
    }


def _record_response(traced: Span, turn: ModelTurn, usage: TokenUsage) -> None:
    """The response's GenAI attributes: why it finished and its tokens (the model's own
    ``usage`` when the turn carries one, else citelab's estimate, marked as such)."""
    traced.set("gen_ai.response.finish_reasons", [turn.finish_reason])
    traced.set("gen_ai.usage.input_tokens", usage.input_tokens)
    traced.set("gen_ai.usage.output_tokens", usage.output_tokens)
    traced.set("citelab.usage.estimated", usage.estimated)
    traced.set("citelab.tool_calls", len(turn.tool_calls))


async def _call(callback: Callable[[Any], Awaitable[None] | None], value: Any) -> None:
    result = callback(value)
    if inspect.isawaitable(result):
        await result
