"""The OpenAI-compatible adapter: any chat-completions endpoint through the ``openai`` SDK.

Works with OpenAI itself and with servers that speak its API (vLLM, llama.cpp, Ollama,
``citelab serve-model``). Configuration, clients, timeouts, retries and the error mapping are
those of every SDK adapter (:mod:`citelab.models.adapters._remote`): the arguments, then the
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` environment variables; a key is required only when
no ``base_url`` is set (local servers usually need none). ``timeout`` is also the longest
pause between two streamed chunks.

The SDK sends the request (headers, retries, status errors) but the body is read here, with
``json.loads`` of each chunk, instead of the SDK's typed parse, which builds pydantic objects
for every streamed chunk (why, with the LLM judge's figure: docs/performance.md, "OpenAIModel
reads the body itself beneath the SDK"). ``stream=False`` asks for one JSON completion
instead of Server-Sent Events, for callers that do not show tokens as they come; it yields
the same deltas.

A few SDK clients per event loop, each with its own pool, take the calls in turn (see
``pools``), so calls share keep-alive connections. :meth:`OpenAIModel.aclose` (or
``async with``) closes the current loop's clients.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from citelab._errors import ModelError
from citelab.models._types import (
    FinishDelta,
    FinishReason,
    Message,
    ModelDelta,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
)
from citelab.models.adapters._remote import SDKModel, Vendor, status_message

if TYPE_CHECKING:
    import httpx
    from openai import AsyncOpenAI

__all__ = ["OpenAIModel"]

_OPENAI = Vendor(
    prefix="openai",
    package="openai",
    client="AsyncOpenAI",
    base_error="OpenAIError",
    default_url="https://api.openai.com/v1",
    feature="The OpenAI adapter",
)
_PATH = "/chat/completions"
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}


class OpenAIModel(SDKModel):
    """A chat model behind an OpenAI-compatible endpoint; see the module docs. Takes the
    arguments of :class:`~citelab.models.adapters._remote.SDKModel`."""

    vendor = _OPENAI
    pools = 8
    """httpcore probes every idle connection of a pool with a system call whenever a request
    starts or ends, so a burst of n calls on one pool makes about n² probes; eight pools share
    them out (the figure: docs/performance.md). A pool opens connections only as calls need
    them."""

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

    async def _post(self, request: dict[str, Any], *, stream: bool) -> httpx.Response:
        """Send through the SDK (retries, status errors) and get the raw HTTP response."""
        import httpx

        # cast_to=httpx.Response is the SDK's documented way to skip its parse; with
        # stream=True the body is left unread for us. The body goes as JSON bytes (the SDK's
        # ``content``): given as ``body``, the SDK deep-copies it and encodes it in Python
        # (see docs/performance.md).
        content = json.dumps(
            {**request, "stream": stream}, ensure_ascii=False, separators=(",", ":")
        ).encode()
        client: AsyncOpenAI = self._client()
        return await client.post(_PATH, cast_to=httpx.Response, content=content, stream=stream)

    async def _streamed(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        finish: FinishReason | None = None
        usage: TokenUsage | None = None
        done = False
        # The last chunk then carries the call's usage (and no choices).
        asked = {"stream_options": {"include_usage": True}, **request}
        response = await self._post(asked, stream=True)
        try:
            async for data in _sse_data(response.aiter_lines()):
                # After [DONE] the body is read to its end, not dropped: an HTTP/1.1
                # connection with unread body cannot be kept alive for the next call.
                done = done or data.startswith("[DONE]")
                if done:
                    continue
                chunk = self._json(data, "a streamed chunk")
                usage = _usage(chunk.get("usage")) or usage
                for delta in self._chunk(chunk):
                    if isinstance(delta, FinishDelta):
                        finish = delta.reason
                    else:
                        yield delta
        finally:
            await response.aclose()
        if finish is None:
            raise ModelError(f"{self.name}: the stream from {self.endpoint} ended unfinished")
        yield FinishDelta(reason=finish, usage=usage)

    def _chunk(self, chunk: dict[str, Any]) -> list[ModelDelta]:
        deltas: list[ModelDelta] = []
        for choice in _list(chunk.get("choices")):
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            deltas.extend(_delta_pieces(_dict(choice.get("delta"))))
            if choice.get("finish_reason"):
                deltas.append(FinishDelta(reason=_finish(str(choice["finish_reason"]))))
        return deltas

    async def _whole(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        response = await self._post(request, stream=False)
        completion = self._json(response.text, "the completion")
        choices = [c for c in _list(completion.get("choices")) if isinstance(c, dict)]
        if not choices:
            raise ModelError(f"{self.name}: {self.endpoint} returned no choices")
        choice = next((c for c in choices if c.get("index", 0) == 0), choices[0])
        message = _dict(choice.get("message"))
        if isinstance(message.get("content"), str) and message["content"]:
            yield TextDelta(text=message["content"])
        calls = [c for c in _list(message.get("tool_calls")) if _is_function_call(c)]
        for index, call in enumerate(calls):
            function = _dict(call.get("function"))
            yield ToolCallDelta(
                index=index,
                id=_text(call.get("id")),
                name=_text(function.get("name")),
                arguments=_text(function.get("arguments")) or "",
            )
        yield FinishDelta(
            reason=_finish(str(choice.get("finish_reason") or "stop")),
            usage=_usage(completion.get("usage")),
        )

    def _json(self, text: str, what: str) -> dict[str, Any]:
        """Parse ``text``; an ``{"error": ...}`` body (as servers send mid-stream) raises."""
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ModelError(
                f"{self.name}: {what} from {self.endpoint} is not JSON: {exc}"
            ) from exc
        if not isinstance(value, dict):
            raise ModelError(f"{self.name}: {what} from {self.endpoint} is not a JSON object")
        if value.get("error"):
            raise ModelError(f"{self.name}: {self.endpoint} failed: {_error_text(value['error'])}")
        return value


# --- reading the body ------------------------------------------------------------------------


async def _sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The data of each Server-Sent Event (data lines joined by newlines), per the SSE spec:
    comments and other fields are skipped, an event ends at a blank line."""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


def _delta_pieces(delta: dict[str, Any]) -> Iterator[ModelDelta]:
    content = delta.get("content")
    if isinstance(content, str) and content:
        yield TextDelta(text=content)
    for position, call in enumerate(_list(delta.get("tool_calls"))):
        if not isinstance(call, dict):
            continue
        function = _dict(call.get("function"))
        index = call.get("index", position)
        yield ToolCallDelta(
            index=index if isinstance(index, int) and index >= 0 else position,
            id=_text(call.get("id")),
            name=_text(function.get("name")),
            arguments=_text(function.get("arguments")) or "",
        )


def _usage(value: Any) -> TokenUsage | None:
    """A chat completion's ``usage`` (``prompt_tokens``, ``completion_tokens``), if any."""
    usage = _dict(value)
    counts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    if not all(isinstance(count, int) and count >= 0 for count in counts):
        return None
    return TokenUsage(input_tokens=usage["prompt_tokens"], output_tokens=usage["completion_tokens"])


def _is_function_call(call: Any) -> bool:
    return isinstance(call, dict) and call.get("type", "function") == "function"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _error_text(error: Any) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return str(error)


def _finish(reason: str) -> FinishReason:
    return _FINISH.get(reason, "stop")
