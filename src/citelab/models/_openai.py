"""The OpenAI-compatible adapter: any chat-completions endpoint through the ``openai`` SDK.

Works with OpenAI itself and with servers that speak its API (vLLM, llama.cpp, Ollama,
``citelab serve-model``). Configuration, first match wins: the arguments, then the
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` environment variables. A key is required only when
no ``base_url`` is set (local servers usually need none).

Timeouts and retries are the SDK's: ``timeout`` seconds per request (also the longest pause
between two streamed chunks), and up to ``max_retries`` retries with exponential backoff on
connection errors, 408, 409, 429 and 5xx. Every failure surfaces as ``citelab.ModelError``
naming the endpoint.

The SDK sends the request (headers, retries, status errors) but the body is read here: the
SDK's typed parse builds pydantic objects for every streamed chunk, which cost 3-5 ms of CPU
per call, more than everything else a call does; ``json.loads`` of each chunk reads the same
fields. ``stream=False`` asks for one JSON completion instead of Server-Sent Events (cheaper
still, for callers that do not show tokens as they come); it yields the same deltas.

SDK clients are kept per event loop (a client's connections belong to the loop that opened
them) and reused, so calls share keep-alive connections. A few clients, each with its own
pool, take the calls in turn (see ``_POOLS``). :meth:`OpenAIModel.aclose` (or ``async with``)
closes the current loop's clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import itertools
import json
import os
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from citelab._errors import ConfigError, ModelError, ModelTimeout, ModelUnavailable
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
    import httpx
    from openai import APIStatusError, AsyncOpenAI

__all__ = ["OpenAIModel"]

_OPENAI_URL = "https://api.openai.com/v1"
_POOLS = 8
"""SDK clients (connection pools) per event loop, taking calls in turn. httpcore probes every
idle connection of a pool with a system call whenever a request starts or ends, so a burst of
n calls on one pool makes about n² probes: 0.9 ms of CPU per call at 200 calls at once, which
eight pools bring down to 0.1 ms. A pool opens connections only as calls need them."""
_PATH = "/chat/completions"
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
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[AsyncOpenAI]] = (
            weakref.WeakKeyDictionary()
        )
        self._turns = itertools.count()
        self._ssl: Any = None

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
        timeouts, transport = _http_errors()
        timed_out: tuple[type[Exception], ...] = (openai.APITimeoutError, *timeouts)
        try:
            deltas = self._streamed(request) if self.streaming else self._whole(request)
            async with contextlib.aclosing(deltas):  # an abandoned stream frees its connection
                async for delta in deltas:
                    yield delta
        except timed_out as exc:
            raise ModelTimeout(
                f"{self.name}: no answer from {self.endpoint} within {self.timeout:g} s"
            ) from exc
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise ModelUnavailable(f"{self.name}: cannot reach {self.endpoint}: {cause}") from exc
        except transport as exc:
            raise ModelError(
                f"{self.name}: the answer from {self.endpoint} broke off: {exc}"
            ) from exc
        except openai.APIStatusError as exc:
            message = (
                f"{self.name}: {self.endpoint} answered HTTP {exc.status_code}: "
                f"{_error_message(exc)}"
            )
            if exc.status_code in (429, 503):  # busy or rate-limited: asking later may work
                raise ModelUnavailable(message, _retry_after(exc)) from exc
            raise ModelError(message) from exc
        except openai.OpenAIError as exc:
            raise ModelError(f"{self.name}: {exc}") from exc

    async def check_available(self) -> None:
        """Ask the endpoint whether it answers and serves this model, in one or two quick
        requests (no retries); raise :class:`~citelab.ModelError` saying which it is not.

        ``GET /models/{model}`` first; a 404 is "no such model" when ``GET /models`` answers
        (its list is quoted), else the server has no models API and a one-token completion
        decides. Runners call this before a long run, so a wrong URL or model name fails at
        once instead of once per case.
        """
        import openai

        client = openai.AsyncOpenAI(
            api_key=self._api_key or "unused",
            base_url=self.base_url,
            timeout=min(self.timeout, 15.0),
            max_retries=0,
        )
        try:
            async with client:
                await self._check(client)
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise ModelError(f"{self.name}: cannot reach {self.endpoint}: {cause}") from exc
        except openai.APIStatusError as exc:
            raise ModelError(
                f"{self.name}: {self.endpoint} answered HTTP {exc.status_code}: "
                f"{_error_message(exc)}"
            ) from exc

    async def _check(self, client: AsyncOpenAI) -> None:
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
                f"{_error_message(exc)}"
            ) from exc

    async def prepare(self) -> None:
        """Open the running loop's SDK clients now (their TLS set-up included), so the first
        calls do not pay for it; connections still open on first use."""
        clients = self._clients.setdefault(asyncio.get_running_loop(), [])
        while len(clients) < _POOLS:
            clients.append(self._open_client())

    async def aclose(self) -> None:
        """Close the SDK clients of the running event loop, if any were opened."""
        for client in self._clients.pop(asyncio.get_running_loop(), []):
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
        """The next of the running loop's SDK clients, opened when first needed."""
        clients = self._clients.setdefault(asyncio.get_running_loop(), [])
        turn = next(self._turns) % _POOLS
        if turn < len(clients):
            return clients[turn]
        client = self._open_client()
        clients.append(client)
        return client

    def _open_client(self) -> AsyncOpenAI:
        import openai

        shared = self._ssl_context()
        return openai.AsyncOpenAI(
            api_key=self._api_key or "unused",
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            http_client=openai.DefaultAsyncHttpxClient(verify=shared) if shared else None,
        )

    def _ssl_context(self) -> Any:
        """One TLS context for all the clients (loading the CA certificates costs about 20 ms,
        a hundred calls' worth of client CPU), made as the SDK's HTTP library makes its
        default one; None when that library does not offer to (each client then makes its own).
        """
        if self._ssl is None:
            import openai

            library = openai.DefaultAsyncHttpxClient.__mro__[1].__module__.partition(".")[0]
            make = getattr(importlib.import_module(library), "create_ssl_context", None)
            self._ssl = make() if make is not None else False
        return self._ssl or None

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
        # ``content``): given as ``body``, the SDK deep-copies it and encodes it in Python,
        # which cost more client CPU per call than the rest of the request (measured).
        content = json.dumps(
            {**request, "stream": stream}, ensure_ascii=False, separators=(",", ":")
        ).encode()
        return await self._client().post(
            _PATH, cast_to=httpx.Response, content=content, stream=stream
        )

    async def _streamed(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        finish: FinishReason | None = None
        done = False
        response = await self._post(request, stream=True)
        try:
            async for data in _sse_data(response.aiter_lines()):
                # After [DONE] the body is read to its end, not dropped: an HTTP/1.1
                # connection with unread body cannot be kept alive for the next call.
                done = done or data.startswith("[DONE]")
                if done:
                    continue
                for delta in self._chunk(data):
                    if isinstance(delta, FinishDelta):
                        finish = delta.reason
                    else:
                        yield delta
        finally:
            await response.aclose()
        if finish is None:
            raise ModelError(f"{self.name}: the stream from {self.endpoint} ended unfinished")
        yield FinishDelta(reason=finish)

    def _chunk(self, data: str) -> list[ModelDelta]:
        chunk = self._json(data, "a streamed chunk")
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
        yield FinishDelta(reason=_finish(str(choice.get("finish_reason") or "stop")))

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


@functools.cache
def _http_errors() -> tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]]:
    """Timeout and other request errors of the HTTP library the SDK reads the body with
    (``httpx``; ``httpx2`` for openai 3), which reading a raw body raises unwrapped."""
    modules: list[Any] = [importlib.import_module("httpx")]
    with contextlib.suppress(ImportError):
        modules.append(importlib.import_module("httpx2"))
    timeouts = tuple(module.TimeoutException for module in modules)
    requests = tuple(module.RequestError for module in modules)
    return timeouts, requests


def _retry_after(exc: Any) -> float | None:
    """The ``Retry-After`` seconds an upstream error response gave, if any."""
    value = exc.response.headers.get("retry-after", "")
    try:
        return float(value) if value else None
    except ValueError:
        return None  # an HTTP date: not worth parsing for a hint


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
