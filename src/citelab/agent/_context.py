"""The per-run context and the record of every round.

A :class:`RunContext` belongs to one run (one turn of one agent) and is never a global slot:
:func:`run_scope` binds it to a ``contextvars`` variable for the duration of the run, so two
runs on one event loop (or in two threads) each see only their own. The loop consumes the
model's stream inside that scope, because a tool-calling model's later rounds only run while
the stream is being read: leaving the scope earlier would drop the held sources before the
second round is built.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from string import Template

from pydantic import BaseModel, ConfigDict, Field

from citelab._errors import CitelabError
from citelab.agent._config import HookSwitches
from citelab.contract import SuggestedReply
from citelab.corpus import Corpus, Reader
from citelab.models import Message, TokenUsage
from citelab.retrieval import SourceTool
from citelab.sources import MergeStrategy, RetrievalSettings, Source

__all__ = [
    "NoRunContext",
    "RoundRecord",
    "RunContext",
    "ToolCallRecord",
    "current_run",
    "run_scope",
]


class NoRunContext(CitelabError):
    """A hook or helper needed the current run's context outside of any run."""

    code = "no_run_context"


class ToolCallRecord(BaseModel):
    """One tool call (or the service's forced search) and what it did to the held sources."""

    model_config = ConfigDict(extra="forbid")

    call_id: str
    """The call id the tool message echoes (``forced`` for the service's own search)."""
    name: str
    """The tool called."""
    arguments: str
    """The JSON arguments exactly as the model wrote them."""
    forced: bool = False
    """True for the first turn's search the service ran itself, before the model."""
    error: str | None = None
    """Why the call failed (unknown tool, bad arguments); the model was told the same."""
    returned: dict[int, str] = Field(default_factory=dict)
    """Every source of this call under its final number → its uri (what a rewrite shows)."""
    added: dict[int, str] = Field(default_factory=dict)
    """The sources this call added to the held list: number → uri."""
    message: str = ""
    """The tool message content the model reads next (rewritten or raw)."""


class RoundRecord(BaseModel):
    """One model call: what it was shown, what it called, and what it wrote."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=1)
    """1-based round number within the turn."""
    messages: list[Message]
    """The messages the model was shown, system prompt first."""
    tools: list[str] = Field(default_factory=list)
    """The tool names offered."""
    visible_numbering: dict[int, str] = Field(default_factory=dict)
    """Number → source uri as the model could see it in ``messages``: later ``<source>``
    elements override earlier ones; raw tool JSON results count by position 1..n."""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    """The tools the model called in this round, in order."""
    text: str = ""
    """The text the model wrote in this round."""
    finish_reason: str = "stop"
    """Why the model stopped (``stop``, ``tool_calls``, ``length``…)."""
    usage: TokenUsage | None = None
    """The call's tokens: as the model reported them, else estimated (``usage.estimated``)."""


@dataclass
class RunContext:
    """Everything one run holds: who runs, what they may read, and the sources held so far."""

    agent_id: str
    """The agent this run belongs to; hooks ignore events for any other agent."""
    base_prompt: str
    """The agent's own system prompt (the contract is appended to it)."""
    reader: Reader
    """Who asks: retrieval and access checks use it."""
    settings: RetrievalSettings
    """How tool rows become sources."""
    template: Template
    """The contract template the system-prompt hook fills."""
    tools: Mapping[str, SourceTool]
    """The source tools the model may call, by name."""
    corpus: Corpus | None = None
    """The corpus to re-check access and load translations from."""
    hooks: HookSwitches = field(default_factory=HookSwitches)
    """Which citation hooks run."""
    merge: MergeStrategy | None = None
    """How a tool round joins the held sources (``None``: ``merge_round``)."""
    sources: list[Source] = field(default_factory=list)
    """The held sources, numbered; follow-ups start from the conversation's."""
    rounds: list[RoundRecord] = field(default_factory=list)
    """Every model round so far."""
    forced: list[ToolCallRecord] = field(default_factory=list)
    """Searches the service forced before the model ran."""
    runner_id: str = ""
    """The turn's runner id."""
    suggested_replies: list[SuggestedReply] = field(default_factory=list)
    """Follow-up chips the model proposed in its last round."""


_CURRENT: ContextVar[RunContext | None] = ContextVar("citelab_run_context", default=None)


def current_run() -> RunContext:
    """The context of the run in progress in this task or thread."""
    context = _CURRENT.get()
    if context is None:
        raise NoRunContext("no agent run is in progress here (use run_scope)")
    return context


@contextmanager
def run_scope(context: RunContext) -> Iterator[RunContext]:
    """Bind ``context`` as the current run until the block ends (then restore the previous)."""
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)
