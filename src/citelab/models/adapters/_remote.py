"""What the vendor-SDK adapters share: configuration, SDK clients, and one error mapping.

:class:`SDKModel` is the base of :class:`~citelab.models.OpenAIModel` and
:class:`~citelab.models.AnthropicModel`. Both SDKs are generated from one template, so the
parts that do not depend on the wire format exist here once:

* configuration: the arguments, then ``<VENDOR>_BASE_URL`` and ``<VENDOR>_API_KEY``; a key is
  required only when no ``base_url`` is set;
* SDK clients, kept per event loop (a client's connections belong to the loop that opened
  them) and reused; ``pools`` clients, each with its own connection pool, take calls in turn,
  and share one TLS context;
* timeouts and retries are the SDK's (``timeout`` seconds per request, up to ``max_retries``
  retries with backoff on connection errors, 408, 409, 429 and 5xx, honouring
  ``Retry-After``);
* every failure is translated at this boundary: no answer in time is
  :class:`~citelab.ModelTimeout`; an unreachable endpoint, or a 429 or 503 that outlasted the
  retries, is :class:`~citelab.ModelUnavailable` (with the response's ``Retry-After``);
  any other failure is :class:`~citelab.ModelError` — each naming the endpoint.

An adapter names its SDK in a :class:`Vendor` and writes the wire-specific steps:
``_request`` (citelab's messages → the API's request), ``_streamed`` and ``_whole`` (the
answer → deltas) and ``_check`` (does the endpoint serve the model).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import itertools
import os
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypedDict

from citelab._errors import (
    ConfigError,
    MissingDependency,
    ModelError,
    ModelTimeout,
    ModelUnavailable,
)
from citelab.models._types import Message, ModelDelta, ToolChoice, ToolSpec

__all__ = ["SDKModel", "SDKSettings", "Vendor", "status_message"]


@dataclass(frozen=True)
class Vendor:
    """One vendor SDK, by the names the generated SDKs share."""

    prefix: str
    """The model-name prefix (``openai`` in ``openai:gpt-4o``), also the environment's."""
    package: str
    """The SDK's import name."""
    client: str
    """Its async client class."""
    base_error: str
    """The root of its exceptions."""
    default_url: str
    """Where requests go without a ``base_url``."""
    feature: str
    """What needs the SDK, for the missing-dependency message."""
    extra: str | None = None
    """The ``pip install 'citelab[…]'`` extra that brings it, when it is optional."""

    def sdk(self) -> Any:
        """The SDK module, or :class:`~citelab.MissingDependency` saying how to install it."""
        try:
            return importlib.import_module(self.package)
        except ImportError as exc:
            raise MissingDependency(self.package, self.feature, extra=self.extra) from exc


class SDKSettings(TypedDict, total=False):
    """The settings every SDK adapter takes (see :class:`SDKModel`), for adapters that add
    their own."""

    base_url: str | None
    api_key: str | None
    timeout: float
    max_retries: int
    stream: bool
    temperature: float | None
    options: Mapping[str, Any] | None
    name: str | None


class SDKModel:
    """A chat model behind a vendor SDK; see the module docs. Subclasses set ``vendor``.

    ``model`` is the API's model name; ``name`` the one citelab uses (``<vendor>:<model>``);
    ``stream=False`` asks for whole answers; ``options`` are merged into every request.
    """

    vendor: Vendor
    pools = 1
    """SDK clients (connection pools) per event loop, taking calls in turn."""

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
        prefix = self.vendor.prefix
        self.vendor.sdk()
        if not model:
            raise ConfigError(f"{prefix}: the model name is empty (write {prefix}:<model>)")
        self.model = model
        self.name = name or f"{prefix}:{model}"
        env = prefix.upper()
        self.base_url = base_url or os.environ.get(f"{env}_BASE_URL") or None
        self._api_key = api_key or os.environ.get(f"{env}_API_KEY") or None
        if self._api_key is None and self.base_url is None:
            raise ConfigError(
                f"{self.name}: no API key; pass api_key= or set {env}_API_KEY "
                f"(or point base_url / {env}_BASE_URL at a server that needs none)"
            )
        self.timeout = timeout
        self.max_retries = max_retries
        self.streaming = stream
        self.temperature = temperature
        self.options = dict(options or {})
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Any]] = (
            weakref.WeakKeyDictionary()
        )
        self._turns = itertools.count()
        self._tls: Any = None

    @property
    def endpoint(self) -> str:
        """The base URL requests go to."""
        return self.base_url or self.vendor.default_url

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        """Stream one call (``seed`` reaches APIs that take one); failures as the module
        docs say."""
        request = self._request(messages, tools, tool_choice, seed)
        with self._translated(self.timeout):
            deltas = self._streamed(request) if self.streaming else self._whole(request)
            async with contextlib.aclosing(deltas):  # an abandoned stream frees its connection
                async for delta in deltas:
                    yield delta

    async def check_available(self) -> None:
        """Ask the endpoint whether it answers and serves this model, in one or two quick
        requests (no retries); raise :class:`~citelab.ModelError` saying which it is not.
        Runners call this before a long run, so a wrong URL or model name fails at once
        instead of once per case."""
        seconds = min(self.timeout, 15.0)
        with self._translated(seconds):
            async with self._new_client(timeout=seconds, max_retries=0) as client:
                await self._check(client)

    async def prepare(self) -> None:
        """Open the running loop's SDK clients now (their TLS set-up included), so the first
        calls do not pay for it; connections still open on first use."""
        clients = self._clients.setdefault(asyncio.get_running_loop(), [])
        while len(clients) < self.pools:
            clients.append(self._new_client())

    async def aclose(self) -> None:
        """Close the SDK clients of the running event loop, if any were opened."""
        for client in self._clients.pop(asyncio.get_running_loop(), []):
            await client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- the wire-specific steps -------------------------------------------------------------

    def _request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        tool_choice: ToolChoice | None,
        seed: int | None,
    ) -> dict[str, Any]:
        raise NotImplementedError

    def _streamed(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        raise NotImplementedError

    def _whole(self, request: dict[str, Any]) -> AsyncGenerator[ModelDelta, None]:
        raise NotImplementedError

    async def _check(self, client: Any) -> None:
        raise NotImplementedError

    # --- clients and errors ------------------------------------------------------------------

    def _client(self) -> Any:
        """The next of the running loop's SDK clients, opened when first needed."""
        clients = self._clients.setdefault(asyncio.get_running_loop(), [])
        turn = next(self._turns) % self.pools
        if turn < len(clients):
            return clients[turn]
        client = self._new_client()
        clients.append(client)
        return client

    def _new_client(self, *, timeout: float | None = None, max_retries: int | None = None) -> Any:
        sdk = self.vendor.sdk()
        shared = self._tls_context(sdk)
        return getattr(sdk, self.vendor.client)(
            api_key=self._api_key or "unused",
            base_url=self.base_url,
            timeout=self.timeout if timeout is None else timeout,
            max_retries=self.max_retries if max_retries is None else max_retries,
            http_client=sdk.DefaultAsyncHttpxClient(verify=shared) if shared else None,
        )

    def _tls_context(self, sdk: Any) -> Any:
        """One TLS context for all the clients (each would otherwise load the CA certificates
        itself; see docs/performance.md), made as the SDK's HTTP library makes its default
        one; None when that library does not offer to (each client then makes its own).
        """
        if self._tls is None:
            library = sdk.DefaultAsyncHttpxClient.__mro__[1].__module__.partition(".")[0]
            make = getattr(importlib.import_module(library), "create_ssl_context", None)
            self._tls = make() if make is not None else False
        return self._tls or None

    @contextlib.contextmanager
    def _translated(self, seconds: float) -> Iterator[None]:
        """Raise what fails inside as citelab's model errors (see the module docs)."""
        sdk = self.vendor.sdk()
        timeouts, transport = _http_errors()
        timed_out: tuple[type[Exception], ...] = (sdk.APITimeoutError, *timeouts)
        try:
            yield
        except timed_out as exc:
            raise ModelTimeout(
                f"{self.name}: no answer from {self.endpoint} within {seconds:g} s"
            ) from exc
        except sdk.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise ModelUnavailable(f"{self.name}: cannot reach {self.endpoint}: {cause}") from exc
        except transport as exc:
            raise ModelError(
                f"{self.name}: the answer from {self.endpoint} broke off: {exc}"
            ) from exc
        except sdk.APIStatusError as exc:
            message = (
                f"{self.name}: {self.endpoint} answered HTTP {exc.status_code}: "
                f"{status_message(exc)}"
            )
            if exc.status_code in (429, 503):  # busy or rate-limited: asking later may work
                raise ModelUnavailable(message, _retry_after(exc)) from exc
            raise ModelError(message) from exc
        except getattr(sdk, self.vendor.base_error) as exc:
            raise ModelError(f"{self.name}: {exc}") from exc


def status_message(exc: Any) -> str:
    """The server's own message of an SDK status error when its body has the vendors' shape
    (``{"error": {"message": …}}``), else the SDK's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))


@functools.cache
def _http_errors() -> tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]]:
    """Timeout and other request errors of the HTTP library the SDKs read bodies with
    (``httpx``; ``httpx2`` for the newest), which reading a body raises unwrapped."""
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
