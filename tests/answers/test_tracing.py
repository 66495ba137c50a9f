"""OpenTelemetry traces of a turn, exported over real OTLP/HTTP to a receiver on loopback that
decodes the protobuf ``ExportTraceServiceRequest`` (opentelemetry-proto's classes): span names,
parents, GenAI attributes, and the trace id the log entry and feedback name. Without any
configuration nothing from ``opentelemetry`` is imported (a fresh interpreter shows it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from citelab import ModelError
from citelab.answers import MemoryLogStore
from citelab.models import ModelDelta

from .conftest import ServiceFactory, scripted, scripted_agent
from .test_feedback import FakeScorer

pytestmark = pytest.mark.anyio

QUESTION = "When does the library open?"


class Received:
    """What the receiver decoded: every span, with its resource's attributes."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.lock = threading.Lock()

    def add(self, path: str, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        with self.lock:
            self.paths.append(path)
            for resource_spans in request.resource_spans:
                resource = _attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(_span(span, resource, scope_spans.scope.name))

    def named(self, prefix: str) -> list[dict[str, Any]]:
        return [span for span in self.spans if span["name"].startswith(prefix)]


def _span(span: Any, resource: dict[str, Any], scope: str) -> dict[str, Any]:
    return {
        "name": span.name,
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent": span.parent_span_id.hex() or None,
        "kind": span.kind,
        "start": span.start_time_unix_nano,
        "attributes": _attributes(span.attributes),
        "resource": resource,
        "scope": scope,
    }


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


@pytest.fixture
def receiver() -> Iterator[tuple[str, Received]]:
    """An OTLP/HTTP traces receiver on loopback; yields its base url and what it got."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            assert self.headers.get("Content-Type") == "application/x-protobuf"
            received.add(self.path, body)
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _children(spans: list[dict[str, Any]], parent: dict[str, Any]) -> list[str]:
    ordered = sorted(
        (s for s in spans if s["parent"] == parent["span_id"]), key=lambda s: s["start"]
    )
    return [span["name"] for span in ordered]


async def test_a_turn_exports_its_spans_and_feedback_scores_that_trace(
    make_service: ServiceFactory, receiver: tuple[str, Received]
) -> None:
    """Before, the log entry named a random trace id that no trace had."""
    url, received = receiver
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{url}/v1/traces")))
    search = {"tool_calls": [{"name": "rag_search", "arguments": {"query": "library hours"}}]}
    model = scripted(search, {"text": "The library opens at 8 [1]."})
    logs, scorer = MemoryLogStore(), FakeScorer()
    service = make_service(
        scripted_agent(),
        models={"scripted": model},
        logs=logs,
        scorer=scorer,
        tracer_provider=provider,
    )
    answer = await service.answer("scripted", QUESTION)
    await service.feedback.record(answer.conversation_id, 1, "up")
    provider.shutdown()

    assert set(received.paths) == {"/v1/traces"}
    spans = received.spans
    [turn] = [s for s in spans if s["parent"] is None]
    assert turn["name"] == "invoke_agent scripted"
    assert {s["trace_id"] for s in spans} == {turn["trace_id"]}
    assert _children(spans, turn) == [
        "retrieval rag_search",
        "chat scripted",
        "execute_tool rag_search",
        "chat scripted",
        "finalize_citations",
    ]
    # The log entry, the answer and the feedback's score all name the exported trace.
    [entry] = await logs.entries()
    assert answer.trace_id == entry.trace_id == turn["trace_id"]
    assert [call["trace_id"] for call in scorer.calls] == [turn["trace_id"]]

    assert turn["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert turn["attributes"]["gen_ai.agent.name"] == "scripted"
    assert turn["attributes"]["gen_ai.conversation.id"] == answer.conversation_id
    assert turn["attributes"]["citelab.log_id"] == answer.log_id
    assert turn["scope"] == "citelab"
    first, second = received.named("chat ")
    for chat in (first, second):
        attributes = chat["attributes"]
        assert chat["kind"] == 3  # SPAN_KIND_CLIENT: a call to the model
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.request.model"] == "scripted"
        assert attributes["gen_ai.usage.input_tokens"] > 0
        assert attributes["gen_ai.usage.output_tokens"] > 0
        assert attributes["citelab.usage.estimated"] is True
    assert first["attributes"]["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert second["attributes"]["gen_ai.response.finish_reasons"] == ["stop"]
    assert (first["attributes"]["citelab.round"], second["attributes"]["citelab.round"]) == (1, 2)
    # The second round read the first one's tool result: more tokens in.
    assert (
        second["attributes"]["gen_ai.usage.input_tokens"]
        > first["attributes"]["gen_ai.usage.input_tokens"]
    )
    [tool] = received.named("execute_tool ")
    assert tool["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert tool["attributes"]["gen_ai.tool.name"] == "rag_search"
    assert tool["attributes"]["gen_ai.tool.call.id"]
    [retrieval] = received.named("retrieval ")
    assert retrieval["attributes"]["gen_ai.operation.name"] == "retrieval"
    assert retrieval["attributes"]["citelab.retrieval.results"] > 0
    [finalize] = received.named("finalize_citations")
    assert finalize["attributes"]["citelab.sources.cited"] == len(answer.sources) == 1


async def test_a_failed_turn_is_a_span_with_its_error(
    make_service: ServiceFactory, receiver: tuple[str, Received]
) -> None:
    url, received = receiver
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{url}/v1/traces")))
    service = make_service(
        scripted_agent(), models={"scripted": BrokenModel()}, tracer_provider=provider
    )
    with pytest.raises(ModelError, match="backend down"):
        await service.answer("scripted", QUESTION)
    provider.shutdown()
    [turn] = [s for s in received.spans if s["parent"] is None]
    assert turn["attributes"]["error.type"] == "ModelError"
    [chat] = received.named("chat ")
    assert chat["parent"] == turn["span_id"]
    assert chat["attributes"]["error.type"] == "ModelError"


class BrokenModel:
    """A model whose backend is down."""

    name = "scripted"

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelDelta]:
        raise RuntimeError("backend down")
        yield  # pragma: no cover - makes this an async generator


_CHILD = """
import asyncio, json, sys
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
logs = MemoryLogStore()
service = AnswerService(store=MemoryConversationStore(), logs=logs, index_dir=sys.argv[1])
answer = service.answer_sync("default", "How much is the semester fee?")
[entry] = asyncio.run(logs.entries())
loaded = sorted(name for name in sys.modules if name.split(".")[0] == "opentelemetry")
print(json.dumps({"trace_id": answer.trace_id, "logged": entry.trace_id, "otel": loaded}))
"""


def _run_child(tmp_path: Path, **variables: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(CITELAB_CACHE_DIR=str(tmp_path / "cache"), **variables)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path / "indexes")],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_standard_variable_sends_the_turn_to_the_endpoint(
    tmp_path: Path, receiver: tuple[str, Received]
) -> None:
    """``OTEL_EXPORTER_OTLP_ENDPOINT`` as OpenTelemetry users set it: the SDK's exporter
    posts to ``/v1/traces`` under it (the spans leave when the process exits)."""
    url, received = receiver
    child = _run_child(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=url)
    assert set(received.paths) == {"/v1/traces"}
    [turn] = [s for s in received.spans if s["parent"] is None]
    assert turn["name"] == "invoke_agent default"
    assert turn["trace_id"] == child["trace_id"] == child["logged"]
    assert turn["resource"]["service.name"] == "citelab"
    assert "chat extractive" in _children(received.spans, turn)


def test_the_traces_endpoint_variable_and_the_service_name_are_the_sdks(
    tmp_path: Path, receiver: tuple[str, Received]
) -> None:
    url, received = receiver
    _run_child(
        tmp_path,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{url}/custom/traces",
        OTEL_SERVICE_NAME="my-study",
    )
    assert set(received.paths) == {"/custom/traces"}
    assert {s["resource"]["service.name"] for s in received.spans} == {"my-study"}


def test_without_configuration_nothing_from_opentelemetry_is_imported(tmp_path: Path) -> None:
    child = _run_child(tmp_path)
    assert child["otel"] == []
    assert child["trace_id"]  # the log entry still names an id of its own


def test_a_disabled_sdk_sends_and_imports_nothing(
    tmp_path: Path, receiver: tuple[str, Received]
) -> None:
    url, received = receiver
    child = _run_child(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_SDK_DISABLED="true")
    assert child["otel"] == []
    assert received.spans == []
