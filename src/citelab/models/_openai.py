"""The OpenAI-compatible adapter: any chat-completions endpoint through the ``openai`` SDK.

Works with OpenAI itself and with servers that speak its API (vLLM, llama.cpp, Ollama,
``citelab serve-model``). Configuration, first match wins: the arguments, then the
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` environment variables. A key is required only when
no ``base_url`` is set (local servers usually need none).

Timeouts and retries are the SDK's: ``timeout`` seconds per request (also the longest pause
between two streamed chunks), and up to ``max_retries`` retries with exponential backoff on
connection errors, 408, 409, 429 and 5xx. Every failure surfaces as ``citelab.ModelError``
naming the endpoint.

One SDK client is kept per event loop (a client's connections belong to the loop that opened
them); :meth:`OpenAIModel.aclose` (or ``async with``) closes the current loop's client.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from citelab._errors import ConfigError, ModelError
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
    from openai import APIStatusError, AsyncOpenAI
    from openai.types.chat.chat_completion_chunk import ChoiceDelta

__all__ = ["OpenAIModel"]

_OPENAI_URL = "https://api.openai.com/v1"
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}


class OpenAIModel:
    """A chat model behind an OpenAI-compatible endpoint; see the module docs."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        stream: bool = True,
        temperature: float | None = None,
        options: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        if not model:
            raise ConfigError("OpenAIModel: the model name is empty")
        self.model = model
        self.name = name or f"openai:{model}"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if self._api_key is None and self.base_url is None:
            raise ConfigError(
                f"{self.name}: no API key; pass api_key= or set OPENAI_API_KEY "
                "(or point base_url / OPENAI_BASE_URL at a server that needs none)"
            )
        self.timeout = timeout
        self.max_retries = max_retries
        self.streaming = stream
        self.temperature = temperature
        self.options = dict(options or {})
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def endpoint(self) -> str:
        """The base URL requests go to."""
        return self.base_url or _OPENAI_URL

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        import openai

        request = self._request(messages, tools, tool_choice, seed)
        try:
            deltas = self._streamed(request) if self.streaming else self._whole(request)
            async for delta in deltas:
                yield delta
        except openai.APITimeoutError as exc:
            raise ModelError(
                f"{self.name}: no answer from {self.endpoint} within {self.timeout:g} s"
            ) from exc
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise ModelError(f"{self.name}: cannot reach {self.endpoint}: {cause}") from exc
        except openai.APIStatusError as exc:
            raise ModelError(
                f"{self.name}: {self.endpoint} answered HTTP {exc.status_code}: "
                f"{_error_message(exc)}"
            ) from exc
        except openai.OpenAIError as exc:
            raise ModelError(f"{self.name}: {exc}") from exc

    async def aclose(self) -> None:
        """Close the SDK client of the running event loop, if one was opened."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _client(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            from openai import AsyncOpenAI

            client = AsyncOpenAI(
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
        seed: int | None,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        optional = {
            "tools": list(tools) if tools else None,
            "tool_choice": tool_choice if tools else None,
            "seed": seed,
            "temperature": self.temperature,
        }
        request.update({key: value for key, value in optional.items() if value is not None})
        request.update(self.options)
        return request

    async def _streamed(self, request: dict[str, Any]) -> AsyncIterator[ModelDelta]:
        finish: FinishReason | None = None
        stream = await self._client().chat.completions.create(**request, stream=True)
        async with stream:
            async for chunk in stream:
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    for delta in _chunk_deltas(choice.delta):
                        yield delta
                    if choice.finish_reason:
                        finish = _finish(choice.finish_reason)
        if finish is None:
            raise ModelError(f"{self.name}: the stream from {self.endpoint} ended unfinished")
        yield FinishDelta(reason=finish)

    async def _whole(self, request: dict[str, Any]) -> AsyncIterator[ModelDelta]:
        completion = await self._client().chat.completions.create(**request)
        if not completion.choices:
            raise ModelError(f"{self.name}: {self.endpoint} returned no choices")
        choice = completion.choices[0]
        if choice.message.content:
            yield TextDelta(text=choice.message.content)
        calls = [call for call in choice.message.tool_calls or [] if call.type == "function"]
        for index, call in enumerate(calls):
            yield ToolCallDelta(
                index=index, id=call.id, name=call.function.name, arguments=call.function.arguments
            )
        yield FinishDelta(reason=_finish(choice.finish_reason))


def _chunk_deltas(delta: ChoiceDelta) -> list[ModelDelta]:
    deltas: list[ModelDelta] = []
    if delta.content:
        deltas.append(TextDelta(text=delta.content))
    for call in delta.tool_calls or []:
        function = call.function
        deltas.append(
            ToolCallDelta(
                index=call.index,
                id=call.id,
                name=function.name if function else None,
                arguments=(function.arguments or "") if function else "",
            )
        )
    return deltas


def _error_message(exc: APIStatusError) -> str:
    """The server's own error message when the body has OpenAI's shape, else the SDK's."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(exc.message)


def _finish(reason: str) -> FinishReason:
    return _FINISH.get(reason, "stop")
