"""Hooks: the loop's two extension points, and the two citation hooks built on them.

The loop announces two events, as the seed's subscribers listen to them:

- :class:`SystemPromptEvent` before each model round. Hooks may *append* to ``prompt``.
  :class:`ContractPromptHook` (priority 10) appends the contract template filled with the
  numbered sources block and guidance; it never replaces the agent's own prompt, and hooks
  with a lower priority run after it and layer on top.
- :class:`ToolResultEvent` after each tool call. :class:`SourceToolHook` records rag_search
  and listing-tool output, turns it into sources, merges them onto the held list, and
  rewrites ``message`` (what the model reads next) with this call's sources under their final
  numbers. The system prompt is built before a round's tools run, so it is always one call
  behind: without the rewrite the model would cite numbers that mean something else.

Both guard on the event's agent id matching the current run's, so an event can never touch
another run's prompt or sources.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from citelab.agent._context import RunContext, ToolCallRecord, current_run
from citelab.agent._templates import render_contract
from citelab.retrieval import SourceTool
from citelab.sources import (
    Source,
    listed_summary,
    merge_round,
    numbered_round,
    process_listed,
    process_results,
    sources_block,
)

__all__ = [
    "AgentHook",
    "ContractPromptHook",
    "SourceToolHook",
    "SystemPromptEvent",
    "ToolResultEvent",
    "absorb_tool_output",
    "default_hooks",
    "guidance",
    "ordered",
    "raw_message",
    "rewritten_message",
]

NO_RESULTS = "No matching sources were found."


@dataclass
class SystemPromptEvent:
    """A round's system prompt is being built; hooks append to ``prompt``."""

    agent_id: str
    prompt: str


@dataclass
class ToolResultEvent:
    """A source tool finished; hooks may rewrite ``message``, the tool message the model reads."""

    agent_id: str
    tool: SourceTool
    arguments: Mapping[str, Any]
    output: dict[str, Any]
    message: str
    record: ToolCallRecord


class AgentHook:
    """Base class for hooks: override what you need; higher ``priority`` runs first."""

    priority: int = 0

    def on_system_prompt(self, event: SystemPromptEvent) -> None:
        """Called before each model round."""

    def on_tool_result(self, event: ToolResultEvent) -> None:
        """Called after each source tool call."""


def ordered(hooks: Iterable[AgentHook]) -> list[AgentHook]:
    """Highest priority first; equal priorities keep their given order."""
    return sorted(hooks, key=lambda hook: -hook.priority)


class ContractPromptHook(AgentHook):
    """Appends the citation contract, guidance and numbered sources to the agent's prompt."""

    priority = 10

    def on_system_prompt(self, event: SystemPromptEvent) -> None:
        context = current_run()
        if event.agent_id != context.agent_id or not context.hooks.system_prompt:
            return
        contract = render_contract(
            context.template, sources=sources_block(context.sources), guidance=guidance(context)
        )
        event.prompt = f"{event.prompt.rstrip()}\n\n{contract}"


class SourceToolHook(AgentHook):
    """Records a source tool's output, merges its sources, and rewrites the tool message."""

    def on_tool_result(self, event: ToolResultEvent) -> None:
        context = current_run()
        if event.agent_id != context.agent_id:
            return
        shown = absorb_tool_output(context, event.tool, event.arguments, event.output, event.record)
        if context.hooks.tool_rewrite:
            event.message = rewritten_message(event.tool, event.output, shown)


def default_hooks() -> list[AgentHook]:
    """The two citation hooks every run uses."""
    return [ContractPromptHook(), SourceToolHook()]


def absorb_tool_output(
    context: RunContext,
    tool: SourceTool,
    arguments: Mapping[str, Any],
    output: dict[str, Any],
    record: ToolCallRecord,
) -> list[Source]:
    """Process ``output`` into sources, merge them onto the held list, and record the call.

    Returns this call's sources under their final numbers (what a rewritten message shows).
    """
    new = _process(context, tool, arguments, output)
    held_pairs = {(source.key, source.number) for source in context.sources}
    merged = (context.merge or merge_round)(context.sources, new)
    shown = numbered_round(merged, new)
    context.sources = merged
    record.returned = {_number(s): s.uri for s in shown}
    record.added = {_number(s): s.uri for s in merged if (s.key, s.number) not in held_pairs}
    return shown


def rewritten_message(tool: SourceTool, output: Mapping[str, Any], shown: list[Source]) -> str:
    """The tool message under final numbers; a listing tool's summary stays above."""
    body = sources_block(shown) if shown else NO_RESULTS
    summary = listed_summary(output) if tool.kind == "listing" else None
    return f"{summary}\n\n{body}" if summary else body


def raw_message(output: Mapping[str, Any]) -> str:
    """The tool's structured output as the JSON a model would read without the rewrite."""
    return json.dumps(output, ensure_ascii=False)


def guidance(context: RunContext) -> str:
    """Run-specific guidance for the contract's ``$guidance`` placeholder."""
    lines = []
    if context.sources:
        lines.append("The numbered sources below are what you may cite.")
    else:
        lines.append("No sources are held yet.")
    searches = [name for name, tool in context.tools.items() if tool.kind == "rag_search"]
    listings = [name for name, tool in context.tools.items() if tool.kind == "listing"]
    if searches:
        lines.append(
            f"If they do not answer the question, call {searches[0]} with other words; "
            "its results come back with their citation numbers."
        )
    if listings:
        lines.append(f"To list entities completely, call {', '.join(listings)}.")
    lines.append("If the sources do not answer the question, say so plainly instead of guessing.")
    return " ".join(lines)


def _process(
    context: RunContext, tool: SourceTool, arguments: Mapping[str, Any], output: dict[str, Any]
) -> list[Source]:
    if tool.kind == "listing":
        return process_listed(
            output, context.settings, context.reader, corpus=context.corpus, tool=tool.name
        )
    query = arguments.get("query")
    return process_results(
        output.get("results", []),
        context.settings,
        context.reader,
        corpus=context.corpus,
        query=query if isinstance(query, str) else None,
        tool=tool.name,
    )


def _number(source: Source) -> int:
    assert source.number is not None  # merged sources are always numbered
    return source.number
