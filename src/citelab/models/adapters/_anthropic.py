"""The Anthropic adapter: Claude (or any Messages-compatible server) through the ``anthropic`` SDK.

``get_model("anthropic:claude-sonnet-4-5")`` builds ``AnthropicModel("claude-sonnet-4-5")``.
Configuration, first match wins: the arguments, then ``ANTHROPIC_BASE_URL`` and
``ANTHROPIC_API_KEY``. A key is required only when no ``base_url`` is set (``citelab
serve-model`` needs none: point ``base_url`` at its address without ``/v1``).

Requests go out as streamed Messages calls (``stream=False`` asks for one message instead);
messages, tools and tool choice are converted as :mod:`citelab.models.adapters._anthropic_wire`
describes, and the streamed events become citelab's deltas. Timeouts and retries are the
SDK's, and failures map to citelab's model errors, as for every SDK adapter
(:mod:`citelab.models.adapters._remote`). The SDK is an optional dependency (``pip install
'citelab[anthropic]'``), imported when a model is built.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any, Unpack

from citelab._errors import ConfigError, ModelError
from citelab.models._types import (
    FinishDelta,
    Message,
    ModelDelta,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
)
from citelab.models.adapters._anthropic_wire import EventReader, finish_reason, to_messages_request
from citelab.models.adapters._remote import SDKModel, SDKSettings, Vendor, status_message

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["AnthropicModel"]

_ANTHROPIC = Vendor(
    prefix="anthropic",
    package="anthropic",
    client="AsyncAnthropic",
    base_error="AnthropicError",
    default_url="https://api.anthropic.com",
    feature="The Anthropic adapter",
    extra="anthropic",
)


class AnthropicModel(SDKModel):
    """A Messages API model; see the module docs. Takes the arguments of
    :class:`~citelab.models.adapters._remote.SDKModel`, and ``max_tokens`` (the API requires
    one)."""

    vendor = _ANTHROPIC

    def __init__(
        self, model: str, *, max_tokens: int = 1024, **settings: Unpack[SDKSettings]
    ) -> None:
        super().__init__(model, **settings)
        if max_tokens < 1:
            raise ConfigError(f"{self.name}: max_tokens must be >= 1")
        self.max_tokens = max_tokens

    async def _check(self, client: AsyncAnthropic) -> None:
        """A one-token message: a 404 is "no such model"."""
        import anthropic

        try:
            await client.messages.create(
                model=self.model, max_tokens=1, messages=[{"role": "user", "content": "ping"}]
            )
        except anthropic.NotFoundError as exc:
            raise ModelError(
                f"{self.name}: model {self.model!r} does not exist at {self.endpoint}: "
                f"{status_message(exc)}"
            ) from exc

    def _request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        tool_choice: ToolChoice | None,
        seed: int | None,
    ) -> dict[str, Any]:
        """The Messages request; ``seed`` is left out (the API has none)."""
        request = {"model": self.model, "max_tokens": self.max_tokens}
        request.update(to_messages_request(messages, tools, tool_choice))
        if self.temperature is not None:
            request["temperature"] = self.temperature
        request.update(self.options)
        return request

    async def _streamed(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        reader = EventReader()
        stream = await self._client().messages.create(**request, stream=True)
        async with contextlib.aclosing(_events(stream)) as events:
            async for event in events:
                if event.get("type") == "error":
                    raise ModelError(f"{self.name}: {self.endpoint} failed: {event.get('error')}")
                for delta in reader.read(event):
                    yield delta
        if reader.finish is None:
            raise ModelError(f"{self.name}: the stream from {self.endpoint} ended unfinished")
        yield FinishDelta(reason=reader.finish, usage=reader.usage)

    async def _whole(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        message = await self._client().messages.create(**request)
        calls = 0
        for block in message.content:
            if block.type == "text" and block.text:
                yield TextDelta(text=block.text)
            elif block.type == "tool_use":
                arguments = _json(block.input)
                yield ToolCallDelta(index=calls, id=block.id, name=block.name, arguments=arguments)
                calls += 1
        usage = TokenUsage(
            input_tokens=message.usage.input_tokens, output_tokens=message.usage.output_tokens
        )
        yield FinishDelta(reason=finish_reason(message.stop_reason), usage=usage)


async def _events(stream: Any) -> AsyncGenerator[dict[str, Any], None]:
    """The SDK's typed stream events as plain dicts (the reader works on the wire shape)."""
    try:
        async for event in stream:
            yield event.model_dump(mode="json")
    finally:
        await stream.close()


def _json(value: Any) -> str:
    import json

    return json.dumps(value if isinstance(value, dict) else {}, ensure_ascii=False)
