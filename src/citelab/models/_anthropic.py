"""The Anthropic adapter: Claude (or any Messages-compatible server) through the ``anthropic`` SDK.

``get_model("anthropic:claude-sonnet-4-5")`` builds ``AnthropicModel("claude-sonnet-4-5")``.
Configuration, first match wins: the arguments, then ``ANTHROPIC_BASE_URL`` and
``ANTHROPIC_API_KEY``. A key is required only when no ``base_url`` is set (``citelab
serve-model`` needs none: point ``base_url`` at its address without ``/v1``).

Requests go out as streamed Messages calls (``stream=False`` asks for one message instead);
messages, tools and tool choice are converted as :mod:`citelab.models._anthropic_wire`
describes, and the streamed events become citelab's deltas. Timeouts and retries are the
SDK's; every failure surfaces as :class:`~citelab.ModelError` naming the endpoint. The SDK is
an optional dependency (``pip install 'citelab[anthropic]'``), imported when a model is built.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from citelab._errors import ConfigError, MissingDependency, ModelError
from citelab.models._anthropic_wire import EventReader, to_messages_request
from citelab.models._types import (
    FinishDelta,
    FinishReason,
    Message,
    ModelDelta,
    TextDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["AnthropicModel"]

_ANTHROPIC_URL = "https://api.anthropic.com"
_STOP_IN: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


def _sdk() -> Any:
    try:
        import anthropic
    except ImportError as exc:
        raise MissingDependency("anthropic", "The Anthropic adapter", extra="anthropic") from exc
    return anthropic


class AnthropicModel:
    """A Messages API model; see the module docs. ``max_tokens`` is required by the API."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 1024,
        timeout: float = 60.0,
        max_retries: int = 2,
        stream: bool = True,
        temperature: float | None = None,
        options: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        _sdk()
        if not model:
            raise ConfigError("anthropic: a model name is needed (anthropic:<model>)")
        if max_tokens < 1:
            raise ConfigError(f"anthropic:{model}: max_tokens must be >= 1")
        self.model = model
        self.name = name or f"anthropic:{model}"
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self._api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        if self._api_key is None and self.base_url is None:
            raise ConfigError(
                f"{self.name}: no API key; pass api_key= or set ANTHROPIC_API_KEY "
                "(or point base_url / ANTHROPIC_BASE_URL at a server that needs none)"
            )
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.streaming = stream
        self.temperature = temperature
        self.options = dict(options or {})
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncAnthropic] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def endpoint(self) -> str:
        """The base URL requests go to."""
        return self.base_url or _ANTHROPIC_URL

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        """Stream one Messages call; ``seed`` is ignored (the API has none)."""
        anthropic = _sdk()
        request = self._request(messages, tools, tool_choice)
        try:
            deltas = self._streamed(request) if self.streaming else self._whole(request)
            async for delta in deltas:
                yield delta
        except anthropic.APITimeoutError as exc:
            raise ModelError(
                f"{self.name}: no answer from {self.endpoint} within {self.timeout:g} s"
            ) from exc
        except anthropic.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise ModelError(f"{self.name}: cannot reach {self.endpoint}: {cause}") from exc
        except anthropic.APIStatusError as exc:
            raise ModelError(
                f"{self.name}: {self.endpoint} answered HTTP {exc.status_code}: {_message(exc)}"
            ) from exc
        except anthropic.AnthropicError as exc:
            raise ModelError(f"{self.name}: {exc}") from exc

    async def check_available(self) -> None:
        """Ask the endpoint once (a one-token message, no retries) whether it answers and
        serves this model; raise :class:`~citelab.ModelError` saying which it is not
        (runners call this before a long run)."""
        anthropic = _sdk()
        client = anthropic.AsyncAnthropic(
            api_key=self._api_key or "unused",
            base_url=self.base_url,
            timeout=min(self.timeout, 15.0),
            max_retries=0,
        )
        ping = {"role": "user", "content": "ping"}
        try:
            async with client:
                await client.messages.create(model=self.model, max_tokens=1, messages=[ping])
        except anthropic.NotFoundError as exc:
            raise ModelError(
                f"{self.name}: model {self.model!r} does not exist at {self.endpoint}: "
                f"{_message(exc)}"
            ) from exc
        except anthropic.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise ModelError(f"{self.name}: cannot reach {self.endpoint}: {cause}") from exc
        except anthropic.APIStatusError as exc:
            raise ModelError(
                f"{self.name}: {self.endpoint} answered HTTP {exc.status_code}: {_message(exc)}"
            ) from exc

    async def aclose(self) -> None:
        """Close the running loop's SDK client, if one was opened."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def __aenter__(self) -> AnthropicModel:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _client(self) -> AsyncAnthropic:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = _sdk().AsyncAnthropic(
                api_key=self._api_key or "unused",
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
            self._clients[loop] = client
        return client

    def _request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        tool_choice: ToolChoice | None,
    ) -> dict[str, Any]:
        request = {"model": self.model, "max_tokens": self.max_tokens}
        request.update(to_messages_request(messages, tools, tool_choice))
        if self.temperature is not None:
            request["temperature"] = self.temperature
        request.update(self.options)
        return request

    async def _streamed(self, request: dict[str, Any]) -> AsyncIterator[ModelDelta]:
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
        yield FinishDelta(reason=reader.finish)

    async def _whole(self, request: dict[str, Any]) -> AsyncIterator[ModelDelta]:
        message = await self._client().messages.create(**request)
        calls = 0
        for block in message.content:
            if block.type == "text" and block.text:
                yield TextDelta(text=block.text)
            elif block.type == "tool_use":
                arguments = _json(block.input)
                yield ToolCallDelta(index=calls, id=block.id, name=block.name, arguments=arguments)
                calls += 1
        yield FinishDelta(reason=_STOP_IN.get(str(message.stop_reason), "stop"))


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


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))
