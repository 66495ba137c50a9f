"""Token counts for ``serve-model``'s ``usage`` fields (and for models that report none),
estimated without a tokenizer.

A served model has no vocabulary of its own, so a token here is a word (a run of letters and
digits) or one punctuation character: deterministic, and of the order a real tokenizer
counts for English prose. The counts fill the shapes clients read (OpenAI's ``usage`` of a
chat completion and of a response, Anthropic's ``usage``) so that code which records or
budgets tokens runs against the stand-in as it does against a vendor.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from citelab.models._types import Message, ModelTurn, TokenUsage, ToolSpec, message_text

__all__ = ["Usage", "estimate_tokens", "estimate_usage", "usage_of"]

_TOKEN = re.compile(r"\w+|[^\w\s]")


def estimate_tokens(text: str) -> int:
    """Words and punctuation characters in ``text``."""
    return sum(1 for _ in _TOKEN.finditer(text))


class Usage:
    """The estimated input and output tokens of one call."""

    def __init__(self, input_tokens: int, output_tokens: int = 0) -> None:
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add_output(self, text: str) -> None:
        """Count ``text`` (a streamed piece) as output."""
        self.output_tokens += estimate_tokens(text)

    def add_turn(self, turn: ModelTurn) -> None:
        """Count a finished turn (its text and tool calls) as output."""
        self.add_output(turn.text)
        for made in turn.tool_calls:
            self.add_output(made.name + made.arguments)

    def chat(self) -> dict[str, int]:
        """OpenAI's chat-completion ``usage``."""
        return {
            "prompt_tokens": self.input_tokens,
            "completion_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }

    def responses(self) -> dict[str, object]:
        """OpenAI's Responses ``usage`` (nothing cached, no reasoning)."""
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": self.total_tokens,
        }

    def anthropic(self) -> dict[str, int]:
        """Anthropic's Messages ``usage``."""
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


def usage_of(
    messages: Sequence[Message], tools: Sequence[ToolSpec] | None, turn: ModelTurn | None = None
) -> Usage:
    """The usage of a call: its messages and tools in, ``turn`` (when done) out."""
    shown = [message_text(message) for message in messages]
    for message in messages:
        if message["role"] == "assistant":
            for call in message.get("tool_calls", []):
                shown.append(call["function"]["name"] + call["function"]["arguments"])
    if tools:
        shown.append(json.dumps(list(tools), ensure_ascii=False))
    usage = Usage(sum(estimate_tokens(text) for text in shown))
    if turn is not None:
        usage.add_turn(turn)
    return usage


def estimate_usage(
    messages: Sequence[Message], tools: Sequence[ToolSpec] | None, turn: ModelTurn
) -> TokenUsage:
    """The :class:`TokenUsage` of a call whose model reported none, marked ``estimated``."""
    usage = usage_of(messages, tools, turn)
    return TokenUsage(
        input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, estimated=True
    )
