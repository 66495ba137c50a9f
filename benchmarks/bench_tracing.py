"""What tracing adds to an answer, measured side by side in one run.

The pipeline of ``bench_pipeline.py``'s figure 1 (the instant model citing ten sources, about
ten held sources, in-memory stores, the three fixture corpora) answers the same questions
with tracing off and with tracing on: the OpenTelemetry SDK's batch processor exporting
OTLP/HTTP protobuf to a receiver on loopback (a thread of this process that reads and counts
what arrives, as a collector would). The two take turns ``--rounds`` times; each line is the
median per answer over all rounds, and the spans the receiver decoded are counted, so "on"
is known to have exported. For tracing off against the code before tracing existed, run
``bench_pipeline.py --before CHECKOUT`` (figure 1, side by side in fresh processes).

    .venv/bin/python benchmarks/bench_tracing.py [--quick] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from bench_pipeline import CORPORA, InstantModel, agents, questions
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore


@contextmanager
def receiver() -> Iterator[tuple[str, list[int]]]:
    """An OTLP/HTTP receiver on loopback; yields its traces url and the span counts it got."""
    counts: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            request = ExportTraceServiceRequest.FromString(body)
            counts.append(sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces", counts
    finally:
        server.shutdown()
        server.server_close()


async def per_answer(provider: TracerProvider | None, count: int) -> list[float]:
    """Seconds per answer over ``count`` questions of each corpus."""
    service = AnswerService(
        agents("instant"),
        models={"instant": InstantModel()},
        store=MemoryConversationStore(),
        logs=MemoryLogStore(),
        tracer_provider=provider,
    )
    await service.prepare()
    times: list[float] = []
    for name in CORPORA:
        for question in questions(name, count):
            started = time.perf_counter()
            await service.answer(name, question)
            times.append(time.perf_counter() - started)
    await service.aclose()
    return times


async def main(count: int, rounds: int) -> None:
    off: list[float] = []
    on: list[float] = []
    with receiver() as (url, counts):
        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(url)))
        await per_answer(None, 2)  # warm up: indexes, imports
        await per_answer(provider, 2)
        for _ in range(rounds):
            off += await per_answer(None, count)
            on += await per_answer(provider, count)
        started = time.perf_counter()
        provider.shutdown()
        flush = time.perf_counter() - started
    answers = len(on)
    off_ms, on_ms = statistics.median(off) * 1000, statistics.median(on) * 1000
    print(f"{answers} answers each way, {rounds} rounds taking turns (median per answer)")
    print(f"  tracing off: {off_ms:7.2f} ms")
    print(f"  tracing on:  {on_ms:7.2f} ms  (+{on_ms - off_ms:.2f} ms, x{on_ms / off_ms:.2f})")
    print(f"  spans the receiver decoded: {sum(counts)} ({sum(counts) / answers:.1f} per answer)")
    print(f"  final flush at shutdown: {flush * 1000:.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run")
    parser.add_argument("--rounds", type=int, default=3, help="turns of off and on")
    arguments = parser.parse_args()
    asyncio.run(main(10 if arguments.quick else 40, arguments.rounds))
