"""OpenTelemetry spans for the answer pipeline, only when the user asked for them.

A turn is traced when a tracer provider is given (``AnswerService(tracer_provider=...)``) or
the standard exporter variables are set (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_ENDPOINT``): then citelab builds one provider per process that exports
OTLP over HTTP/protobuf (what Langfuse, Phoenix and Jaeger accept), configured by the other
``OTEL_*`` variables as the SDK reads them. Otherwise nothing from ``opentelemetry`` is
imported and :func:`span` costs one context-variable read. The spans follow the GenAI
semantic conventions (``gen_ai.*`` attributes); the service opens the turn's span and names
the log entry's trace after it, the agent loop opens the rest inside it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from citelab._errors import MissingDependency
from citelab._version import __version__

__all__ = ["TRACES_ENDPOINT_VARIABLES", "Span", "span", "tracer_from", "tracing"]

TRACES_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
"""Either one set (and ``OTEL_SDK_DISABLED`` not ``true``) turns tracing on."""

_current: ContextVar[Any | None] = ContextVar("citelab_tracer", default=None)
_lock = threading.Lock()
_from_env: list[Any] = []  # the process's own provider, built once when the variables ask


class Span:
    """One open span, or nothing (when the turn is not traced): ``set`` is then a no-op."""

    def __init__(self, otel_span: Any | None = None) -> None:
        self._span = otel_span

    def set(self, key: str, value: Any) -> None:
        """Set attribute ``key`` (``None`` values are left out)."""
        if self._span is not None and value is not None:
            self._span.set_attribute(key, value)

    def update(self, attributes: Mapping[str, Any]) -> None:
        """Set each of ``attributes``."""
        for key, value in attributes.items():
            self.set(key, value)

    @property
    def recording(self) -> bool:
        """True when the turn is traced (worth computing what only a span would show)."""
        return self._span is not None

    @property
    def trace_id(self) -> str | None:
        """The trace's id as 32 lowercase hex digits (``None`` when not traced)."""
        if self._span is None:
            return None
        return format(self._span.get_span_context().trace_id, "032x")


def tracer_from(provider: Any | None = None, env: Mapping[str, str] | None = None) -> Any | None:
    """The tracer a service traces with: ``provider``'s, else the process's OTLP exporter's
    when ``env`` (default: the environment) sets an endpoint, else ``None``."""
    if provider is not None:
        return provider.get_tracer("citelab", __version__)
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if not any(env.get(name, "").strip() for name in TRACES_ENDPOINT_VARIABLES):
        return None
    return _env_provider(env).get_tracer("citelab", __version__)


def _env_provider(env: Mapping[str, str]) -> Any:
    with _lock:
        if not _from_env:
            _from_env.append(_otlp_provider(env))
        return _from_env[0]


def _otlp_provider(env: Mapping[str, str]) -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise MissingDependency("opentelemetry-sdk", "Exporting traces", extra="otel") from exc
    named = {} if env.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: "citelab"}
    provider = TracerProvider(resource=Resource.create(named))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


@contextmanager
def tracing(tracer: Any | None) -> Iterator[None]:
    """Spans opened inside go to ``tracer`` (``None``: not traced)."""
    token = _current.set(tracer)
    try:
        yield
    finally:
        _current.reset(token)


@contextmanager
def span(
    name: str, attributes: Mapping[str, Any] | None = None, *, client: bool = False
) -> Iterator[Span]:
    """A child of the current span named ``name``, when tracing; else a :class:`Span` that
    records nothing. ``client`` marks a call to another service (a model). An exception
    leaving the block is recorded on the span, with ``error.type``."""
    tracer = _current.get()
    if tracer is None:
        yield Span()
        return
    from opentelemetry.trace import SpanKind

    kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
    kept = {key: value for key, value in (attributes or {}).items() if value is not None}
    with tracer.start_as_current_span(name, kind=kind, attributes=kept) as opened:
        try:
            yield Span(opened)
        except BaseException as exc:
            opened.set_attribute("error.type", type(exc).__qualname__)
            raise
