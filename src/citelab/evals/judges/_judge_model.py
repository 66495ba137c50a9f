"""An offline model that answers support-judge prompts: ``citelab serve-model --model judge``.

It reads the statement and the evidence from a prompt written like
:data:`~citelab.evals.judges.DEFAULT_JUDGE_PROMPT` (``Evidence:`` … ``Statement:`` … ``Answer``) or
like MiniCheck's (``Document:`` … ``Claim:`` …, the ``minicheck`` prompt), asks an offline
judge (:data:`~citelab.evals.DEFAULT_JUDGE` by default) and answers ``yes`` or ``no``.
Served behind the OpenAI API it lets the LLM judge run end to end — real SDK, real HTTP,
real concurrency — on a machine without model weights (tests, benchmarks, teaching).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from citelab._errors import ModelError
from citelab.evals.judges._judges import DEFAULT_JUDGE, Judge, build_judge
from citelab.models import (
    FinishDelta,
    Message,
    ModelDelta,
    TextDelta,
    ToolChoice,
    ToolSpec,
    message_text,
    source_version,
)

__all__ = ["JudgeModel", "read_judge_prompt"]


class JudgeModel:
    """Answers "yes"/"no" to judge prompts with an offline judge; see the module docs."""

    def __init__(self, judge: str | Mapping[str, Any] = DEFAULT_JUDGE, name: str = "judge") -> None:
        spec = judge if isinstance(judge, str) else dict(judge)
        self.judge: Judge = build_judge(spec)
        self.name = name
        named = spec if isinstance(spec, str) else spec.get("name")
        self._own_judge = type(self.judge).__module__.startswith("citelab.") and not (
            isinstance(named, str) and ":" in named
        )

    @property
    def code_version(self) -> str | None:
        """When its judge is one of citelab's own: this module's and the judge's module's
        names with the installed citelab version (see :mod:`citelab.models._version`), so a
        cache does not replay another release's verdicts; ``None`` for a judge imported as
        ``module:attr`` or registered by a user (its version is not citelab's to name), which
        a cache then keys like a vendor model."""
        if not self._own_judge:
            return None
        return source_version(__name__, type(self.judge).__module__)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        if not messages:
            raise ModelError("judge model: no messages")
        statement, evidence = read_judge_prompt(message_text(messages[-1]))
        yield TextDelta(text="yes" if self.judge.supports(statement, evidence) else "no")
        yield FinishDelta(reason="stop")


def read_judge_prompt(prompt: str) -> tuple[str, str]:
    """The statement and the evidence of a prompt written like the default judge prompt, or
    like MiniCheck's (``Document: …`` then ``Claim: …``, the claim last);
    :class:`~citelab.ModelError` when it has neither layout."""
    if prompt.startswith("Document: ") and "\nClaim: " in prompt:
        evidence, statement = prompt.removeprefix("Document: ").rsplit("\nClaim: ", 1)
        return statement.strip(), evidence.strip()
    if "Evidence:\n" not in prompt or "\nStatement:\n" not in prompt:
        raise ModelError(
            "judge model: the prompt has neither 'Evidence:' and 'Statement:' sections nor "
            "'Document:' and 'Claim:' lines"
        )
    evidence = prompt.split("Evidence:\n", 1)[1].split("\nStatement:\n", 1)[0].strip()
    statement = prompt.split("\nStatement:\n", 1)[1].split("\n\nAnswer", 1)[0].strip()
    return statement, evidence
