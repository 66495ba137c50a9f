"""The OpenAI-compatible adapter: any chat-completions endpoint through the ``openai`` SDK.

Works with OpenAI itself and with servers that speak its API (vLLM, llama.cpp, Ollama,
``citelab serve-model``). Configuration, clients, timeouts, retries and the error mapping are
those of every SDK adapter (:mod:`citelab.models._remote`): the arguments, then the
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` environment variables; a key is required only when
no ``base_url`` is set (local servers usually need none). ``timeout`` is also the longest
pause between two streamed chunks.

Calls go through the SDK's ``chat.completions.create``: streamed (its Server-Sent Events
reader and typed chunks), or with ``stream=False`` one completion (for callers that do not
show tokens as they come); both yield the same deltas. Servers that answer oddly (an error
object in a stream, a body that is not JSON, no choices) are a :class:`~citelab.ModelError`
that says so.

A few SDK clients per event loop, each with its own pool, take the calls in turn (see
``pools``), so calls share keep-alive connections. :meth:`OpenAIModel.aclose` (or
``async with``) closes the current loop's clients.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from citelab._errors import ModelError
from citelab.models._remote import SDKModel, Vendor, status_message
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
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletionChunk

__all__ = ["OpenAIModel"]

_OPENAI = Vendor(
    prefix="openai",
    package="openai",
    client="AsyncOpenAI",
    base_error="OpenAIError",
    default_url="https://api.openai.com/v1",
    feature="The OpenAI adapter",
)
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}


class OpenAIModel(SDKModel):
    """A chat model behind an OpenAI-compatible endpoint; see the module docs. Takes the
    arguments of :class:`~citelab.models._remote.SDKModel`."""

    vendor = _OPENAI
    pools = 8
    """httpcore probes every idle connection of a pool with a system call whenever a request
    starts or ends, so a burst of n calls on one pool makes about n² probes: 0.9 ms of CPU per
    call at 200 calls at once, which eight pools bring down to 0.1 ms. A pool opens
    connections only as calls need them."""

    async def _check(self, client: AsyncOpenAI) -> None:
        """``GET /models/{model}`` first; a 404 is "no such model" when ``GET /models``
        answers (its list is quoted), else the server has no models API and a one-token
        completion decides."""
        import openai

        try:
            await client.models.retrieve(self.model)
            return
        except openai.NotFoundError:
            pass
        try:
            listed = [card.id async for card in client.models.list()]
        except openai.NotFoundError:
            listed = None
        if listed is not None:
            offered = ", ".join(repr(name) for name in listed[:10]) or "none"
            raise ModelError(
                f"{self.name}: model {self.model!r} does not exist at {self.endpoint} "
                f"(it serves: {offered})"
            )
        try:
            await client.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": "ping"}], max_tokens=1
            )
        except openai.NotFoundError as exc:
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
        """The arguments of ``chat.completions.create``; ``options`` go in the body as given
        (``extra_body``: servers take options the SDK does not know)."""
        request: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        optional = {
            "tools": list(tools) if tools else None,
            "tool_choice": tool_choice if tools else None,
            "seed": seed,
            "temperature": self.temperature,
        }
        request.update({key: value for key, value in optional.items() if value is not None})
        if self.options:
            request["extra_body"] = dict(self.options)
        return request

    async def _streamed(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        finish: FinishReason | None = None
        stream = await self._client().chat.completions.create(**request, stream=True)
        async with contextlib.aclosing(self._chunks(stream)) as chunks:
            async for chunk in chunks:
                for delta in _chunk_deltas(chunk):
                    if isinstance(delta, FinishDelta):
                        finish = delta.reason
                    else:
                        yield delta
        if finish is None:
            raise ModelError(f"{self.name}: the stream from {self.endpoint} ended unfinished")
        yield FinishDelta(reason=finish)

    async def _chunks(self, stream: Any) -> AsyncGenerator[ChatCompletionChunk, None]:
        """The SDK's chunks; one that is not a JSON object, or an error the server sent in
        the stream, is a :class:`~citelab.ModelError` saying so."""
        import openai
        from openai.types.chat import ChatCompletionChunk

        try:
            async for chunk in stream:
                if not isinstance(chunk, ChatCompletionChunk):
                    raise ModelError(
                        f"{self.name}: a streamed chunk from {self.endpoint} is not a JSON object"
                    )
                yield chunk
        except json.JSONDecodeError as exc:
            raise ModelError(
                f"{self.name}: a streamed chunk from {self.endpoint} is not JSON: {exc}"
            ) from exc
        except openai.APITimeoutError:
            raise  # a stall: a ModelTimeout, as for every SDK adapter (see _remote)
        except openai.APIConnectionError as exc:  # the SDK wraps a connection lost mid-body
            raise ModelError(
                f"{self.name}: the answer from {self.endpoint} broke off: {exc.__cause__ or exc}"
            ) from exc
        except openai.APIError as exc:  # an error object the server sent in the stream
            failure = _error_text(exc.body)
            raise ModelError(f"{self.name}: {self.endpoint} failed: {failure}") from exc
        finally:
            await stream.close()

    async def _whole(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        from openai.types.chat import ChatCompletion

        completion = await self._client().chat.completions.create(**request)
        if not isinstance(completion, ChatCompletion):  # the SDK hands back what is not JSON
            shape = "JSON" if isinstance(completion, str) else "a JSON object"
            raise ModelError(f"{self.name}: the completion from {self.endpoint} is not {shape}")
        error = getattr(completion, "error", None)  # a field no completion has: servers' errors
        if error:
            raise ModelError(f"{self.name}: {self.endpoint} failed: {_error_text(error)}")
        choices = getattr(completion, "choices", None)
        if not choices:
            raise ModelError(f"{self.name}: {self.endpoint} returned no choices")
        choice = next((c for c in choices if c.index == 0), choices[0])
        message = choice.message
        if message.content:
            yield TextDelta(text=message.content)
        calls = [call for call in message.tool_calls or [] if call.type == "function"]
        for index, call in enumerate(calls):
            yield ToolCallDelta(
                index=index,
                id=call.id,
                name=call.function.name,
                arguments=call.function.arguments or "",
            )
        yield FinishDelta(reason=_finish(str(choice.finish_reason or "stop")))


def _chunk_deltas(chunk: ChatCompletionChunk) -> Iterator[ModelDelta]:
    """The deltas of the first choice of a chunk (other choices and usage-only chunks have
    none), and its finish, if it finished."""
    for choice in chunk.choices:
        if choice.index != 0:
            continue
        delta = choice.delta
        if delta.content:
            yield TextDelta(text=delta.content)
        for position, call in enumerate(delta.tool_calls or []):
            function = call.function
            yield ToolCallDelta(
                index=call.index if call.index >= 0 else position,
                id=call.id,
                name=function.name if function else None,
                arguments=(function.arguments if function else None) or "",
            )
        if choice.finish_reason:
            yield FinishDelta(reason=_finish(str(choice.finish_reason)))


def _error_text(error: Any) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return str(error)


def _finish(reason: str) -> FinishReason:
    return _FINISH.get(reason, "stop")
