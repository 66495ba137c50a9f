"""The yes/no model the LLM-judge tests serve behind the OpenAI API.

It reads the judge's prompt as citelab's own offline judge model does
(:func:`citelab.evals.judges._judge_model.read_judge_prompt`), so the tests pin the prompt the judge
really sends, and answers by a rule simple enough to state in a test.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Sequence

from citelab.evals.judges import read_judge_prompt
from citelab.models import (
    FinishDelta,
    Message,
    Model,
    ModelDelta,
    TextDelta,
    ToolChoice,
    ToolSpec,
    message_text,
)

__all__ = ["YesNoModel"]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


class YesNoModel:
    """Says "Yes." when every word of the statement occurs in the evidence, else "No" (or
    ``reply`` when set; or what ``inner`` answers, when given), after ``pause`` seconds;
    counts its calls and the most in flight. A prompt containing ``refuse`` is answered
    "Maybe." (not a verdict)."""

    def __init__(
        self,
        name: str = "judge",
        *,
        pause: float = 0.0,
        reply: str | None = None,
        inner: Model | None = None,
    ) -> None:
        self.name = name
        self.pause = pause
        self.reply = reply
        self.inner = inner
        self.refuse: str | None = None
        self.calls = 0
        self.active = 0
        self.peak = 0

    def reset(self) -> None:
        self.calls = self.active = self.peak = 0

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        self.calls += 1
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(self.pause)
        finally:
            self.active -= 1
        prompt = message_text(messages[-1])
        if self.refuse is not None and self.refuse in prompt:
            yield TextDelta(text="Maybe.")
            yield FinishDelta(reason="stop")
            return
        if self.inner is not None:
            async for delta in self.inner.stream(messages):
                yield delta
            return
        statement, evidence = read_judge_prompt(prompt)
        verdict = "Yes." if _words(statement) <= _words(evidence) else "No"
        yield TextDelta(text=self.reply if self.reply is not None else verdict)
        yield FinishDelta(reason="stop")
