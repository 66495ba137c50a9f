"""The OpenAI-compatible completions adapter: ``POST /completions`` (text in, text out, no
chat template) through the ``openai`` SDK's ``completions`` API.

ALCE's ``run.py`` sends its prompt to non-chat models as raw text; this adapter does the same
for any server that speaks OpenAI's completions API (vLLM, llama.cpp, ``citelab serve-model``).
Configuration, clients, retries and the error mapping are :class:`OpenAIModel`'s (the
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` variables included). The prompt is the messages'
text joined by blank lines (one user message is sent as it is); tools cannot be sent, so
asking with tools is a :class:`~citelab.ModelError`. ``options`` (``top_p``, ``max_tokens``,
``stop``, …) go into every request.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any

from citelab._errors import ModelError
from citelab.models._types import (
    FinishDelta,
    FinishReason,
    Message,
    ModelDelta,
    TextDelta,
    TokenUsage,
    ToolChoice,
    ToolSpec,
)
from citelab.models.adapters._openai import OpenAIModel

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAICompletionsModel"]

PREFIX = "openai-completions"
_FINISH: dict[str, FinishReason] = {"stop": "stop", "length": "length"}


class OpenAICompletionsModel(OpenAIModel):
    """A completion (non-chat) model behind an OpenAI-compatible endpoint; see the module
    docs. Named ``openai-completions:<model>``; takes :class:`OpenAIModel`'s arguments."""

    pools = 1

    def __init__(self, model: str, **settings: Any) -> None:
        settings.setdefault("name", f"{PREFIX}:{model}")
        super().__init__(model, **settings)

    def _request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        tool_choice: ToolChoice | None,
        seed: int | None,
    ) -> dict[str, Any]:
        if tools:
            raise ModelError(f"{self.name}: a completions endpoint takes no tools")
        prompt = "\n\n".join(str(message.get("content") or "") for message in messages)
        request: dict[str, Any] = {"model": self.model, "prompt": prompt}
        optional = {"seed": seed, "temperature": self.temperature}
        request.update({key: value for key, value in optional.items() if value is not None})
        request.update(self.options)
        return request

    async def _whole(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        client: AsyncOpenAI = self._client()
        completion = await client.completions.create(**request, stream=False)
        if not completion.choices:
            raise ModelError(f"{self.name}: {self.endpoint} returned no choices")
        choice = completion.choices[0]
        if choice.text:
            yield TextDelta(text=choice.text)
        yield FinishDelta(reason=_finish(choice.finish_reason), usage=_usage(completion.usage))

    async def _streamed(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        client: AsyncOpenAI = self._client()
        stream = await client.completions.create(**request, stream=True)
        finish: FinishReason | None = None
        usage: TokenUsage | None = None
        async with stream:
            async for chunk in stream:
                usage = _usage(chunk.usage) or usage
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    if choice.text:
                        yield TextDelta(text=choice.text)
                    if choice.finish_reason:
                        finish = _finish(choice.finish_reason)
        if finish is None:
            raise ModelError(f"{self.name}: the stream from {self.endpoint} ended unfinished")
        yield FinishDelta(reason=finish, usage=usage)


def _finish(reason: str | None) -> FinishReason:
    return _FINISH.get(reason or "stop", "stop")


def _usage(usage: Any) -> TokenUsage | None:
    if usage is None:
        return None
    return TokenUsage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens)
