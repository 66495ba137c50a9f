"""How many SSE answer streams `citelab serve` holds at once, and how fast each one starts.

Starts `citelab serve` in a child process (loopback only) with the offline extractive model,
paced like a real model (--piece-delay seconds per text piece) so that streams stay open while
others start. Then, side by side in one run:

  1 stream alone          time to the `references` event with an idle server
  N streams at once       N clients open their streams together; every stream must end
                          with `done`; peak = streams open (references seen, done not yet)
                          at the same moment, measured by the clients

and prints the median and p99 time to `references` under load, and their ratio to the idle
figure. Bounded in count (--streams) and time (--timeout seconds).

It also prices the transport: one answer after another with an unpaced agent, through
`AnswerService.answer` in this process, and through the server as JSON and as SSE (ratios
against the in-process call). And it holds JSON load: --bursts bursts of --json-answers JSON
answers, --json-concurrency at a time over kept-alive connections, counting every error
(a `ReadError` on a reused connection included) and the server's resident memory after each
burst (it must stay flat).

    .venv/bin/python benchmarks/bench_server.py [--quick] [--streams N] [--piece-delay S]
        [--json-answers N] [--json-concurrency C] [--bursts B]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from httpx_sse import aconnect_sse

AGENTS = """
[agents.default]
prompt = "You answer questions about Hollin University."
corpus = "university"
model = "extractive"
model_options = {{ piece_delay = {delay} }}

[agents.default.retrieval]
max_results = 10
entity_cap = 5

[agents.unpaced]
prompt = "You answer questions about Hollin University."
corpus = "university"
model = "extractive"

[agents.unpaced.retrieval]
max_results = 10
entity_cap = 5
"""
QUESTIONS = [
    "How much is the semester fee?",
    "What does the semester fee include?",
    "How do I apply for a master's programme?",
    "Where can I find student housing?",
    "What programmes does the Faculty of Science offer?",
]


@dataclass
class Load:
    """What the clients saw."""

    to_references: list[float] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    open_now: int = 0
    peak: int = 0


class Server:
    """`citelab serve` in its own process group, on a free loopback port."""

    def __init__(self, folder: Path, delay: float) -> None:
        agents = folder / "agents.toml"
        agents.write_text(AGENTS.format(delay=delay), encoding="utf-8")
        self.token = "bench-" + os.urandom(12).hex()
        command = [sys.executable, "-m", "citelab", "serve", "--port", "0"]
        command += ["--agents", str(agents), "--token", self.token, "--db", str(folder / "db")]
        self.log = (folder / "serve.log").open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self.log, text=True, start_new_session=True
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", first)
        if found is None:
            self.stop()
            raise SystemExit(f"citelab serve did not start: {first!r}")
        self.url = found.group(1)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.log.close()


async def one_stream(client: httpx.AsyncClient, question: str, load: Load) -> None:
    started = time.perf_counter()
    seen_references = False
    try:
        body = {"question": question}
        async with aconnect_sse(client, "POST", "/api/question", json=body) as source:
            if source.response.status_code != 200:
                load.errors.append(f"HTTP {source.response.status_code}")
                return
            async for event in source.aiter_sse():
                if event.event == "references" and not seen_references:
                    seen_references = True
                    load.to_references.append(time.perf_counter() - started)
                    load.open_now += 1
                    load.peak = max(load.peak, load.open_now)
                elif event.event == "error":
                    load.errors.append(f"error event: {event.data[:120]}")
                elif event.event == "done":
                    load.durations.append(time.perf_counter() - started)
    except (httpx.HTTPError, OSError) as exc:
        load.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        if seen_references:
            load.open_now -= 1


async def run_load(url: str, token: str, streams: int, timeout: float) -> Load:
    load = Load()
    limits = httpx.Limits(max_connections=streams + 8, max_keepalive_connections=streams + 8)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(
        base_url=url, headers=headers, limits=limits, timeout=httpx.Timeout(timeout)
    ) as client:
        tasks = [one_stream(client, QUESTIONS[i % len(QUESTIONS)], load) for i in range(streams)]
        try:
            await asyncio.wait_for(asyncio.gather(*tasks), timeout)
        except TimeoutError:
            load.errors.append(f"the run did not finish within {timeout} s")
    return load


async def per_answer_over_http(url: str, token: str, count: int, stream: bool) -> float:
    """Seconds per answer, one after another, with the unpaced agent."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
        started = time.perf_counter()
        for i in range(count):
            body = {"agent": "unpaced", "question": QUESTIONS[i % len(QUESTIONS)]}
            if stream:
                async with aconnect_sse(client, "POST", "/api/question", json=body) as source:
                    events = [event.event async for event in source.aiter_sse()]
                    assert events[-1] == "done", events
            else:
                response = await client.post("/api/question", json=body)
                assert response.status_code == 200, response.text
        return (time.perf_counter() - started) / count


async def per_answer_in_process(folder: Path, count: int) -> float:
    """Seconds per answer through the answer service directly (same agents, SQLite too)."""
    from citelab.agent import load_agents
    from citelab.answers import AnswerService

    service = AnswerService(load_agents(folder / "agents.toml"), database=folder / "direct")
    await service.answer("unpaced", QUESTIONS[0], on_token=lambda _: None)  # warm
    started = time.perf_counter()
    for i in range(count):
        question = QUESTIONS[i % len(QUESTIONS)]
        await service.answer("unpaced", question, on_token=lambda _: None)
    return (time.perf_counter() - started) / count


@dataclass
class Burst:
    """One burst of JSON answers, and the server's memory after it."""

    answered: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    rss_mib: float = 0.0


async def json_burst(url: str, token: str, answers: int, concurrency: int) -> Burst:
    burst = Burst()
    gate = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Authorization": f"Bearer {token}"}

    async def one(client: httpx.AsyncClient, i: int) -> None:
        body = {"agent": "unpaced", "question": QUESTIONS[i % len(QUESTIONS)]}
        async with gate:
            try:
                response = await client.post("/api/question", json=body)
            except (httpx.HTTPError, OSError) as exc:
                burst.errors.append(f"{type(exc).__name__}: {exc}")
                return
        if response.status_code == 200:
            burst.answered += 1
        else:
            burst.errors.append(f"HTTP {response.status_code}: {response.text[:120]}")

    async with httpx.AsyncClient(
        base_url=url, headers=headers, limits=limits, timeout=120
    ) as client:
        started = time.perf_counter()
        await asyncio.gather(*(one(client, i) for i in range(answers)))
        burst.seconds = time.perf_counter() - started
    return burst


def run_bursts(server: Server, count: int, answers: int, concurrency: int) -> list[Burst]:
    bursts = []
    for _ in range(count):
        burst = asyncio.run(json_burst(server.url, server.token, answers, concurrency))
        burst.rss_mib = resident_mib(server.process.pid)
        bursts.append(burst)
    return bursts


def resident_mib(pid: int) -> float:
    """The process's resident memory (Linux /proc), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def print_bursts(bursts: list[Burst], answers: int, concurrency: int) -> None:
    print(
        f"{len(bursts)} bursts of {answers} JSON answers, {concurrency} at once "
        "(kept-alive connections); server memory after each:"
    )
    for number, burst in enumerate(bursts, 1):
        rate = burst.answered / burst.seconds if burst.seconds else 0.0
        print(
            f"  burst {number}: {burst.answered} answered, {len(burst.errors)} errors, "
            f"{burst.seconds:6.1f} s ({rate:5.1f}/s), RSS {burst.rss_mib:7.1f} MiB"
        )
        for error in sorted(set(burst.errors))[:3]:
            print(f"    error: {error}")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 streams instead of 500")
    parser.add_argument("--streams", type=int, help="concurrent streams (default 500)")
    parser.add_argument("--piece-delay", type=float, default=0.2, help="seconds per text piece")
    parser.add_argument("--timeout", type=float, default=180.0, help="bound on the loaded run")
    parser.add_argument("--json-answers", type=int, help="JSON answers per burst (default 1000)")
    parser.add_argument("--json-concurrency", type=int, default=50, help="JSON answers at once")
    parser.add_argument("--bursts", type=int, default=3, help="JSON bursts (memory after each)")
    args = parser.parse_args()
    json_answers = args.json_answers or (100 if args.quick else 1000)
    streams = args.streams or (50 if args.quick else 500)

    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder), args.piece_delay)
        try:
            asyncio.run(run_load(server.url, server.token, 1, 60))  # warm: index, imports
            count = 20 if args.quick else 100
            direct = asyncio.run(per_answer_in_process(Path(folder), count))
            as_json = asyncio.run(per_answer_over_http(server.url, server.token, count, False))
            as_sse = asyncio.run(per_answer_over_http(server.url, server.token, count, True))
            idle = asyncio.run(run_load(server.url, server.token, 1, 60))
            started = time.perf_counter()
            loaded = asyncio.run(run_load(server.url, server.token, streams, args.timeout))
            wall = time.perf_counter() - started
            bursts = run_bursts(server, args.bursts, json_answers, args.json_concurrency)
        finally:
            server.stop()

    done = len(loaded.durations)
    print(f"citelab serve, offline extractive model, {args.piece_delay} s per text piece")
    print(f"CPU cores: {os.cpu_count()}; server and clients share them")
    print(f"one answer after another ({count}), unpaced agent:")
    print(f"  AnswerService.answer in process {direct * 1000:8.1f} ms    1.00x")
    print(f"  POST /api/question, JSON         {as_json * 1000:8.1f} ms {as_json / direct:6.2f}x")
    print(f"  POST /api/question, SSE          {as_sse * 1000:8.1f} ms {as_sse / direct:6.2f}x")
    print(f"1 stream alone:   time to references {idle.to_references[0] * 1000:8.1f} ms")
    print(f"{streams} streams at once: {done} done, {len(loaded.errors)} errors, wall {wall:.1f} s")
    print(f"  peak streams open at the same moment: {loaded.peak}")
    if loaded.to_references:
        median = statistics.median(loaded.to_references)
        p99 = percentile(loaded.to_references, 0.99)
        base = idle.to_references[0]
        print(f"  time to references: median {median * 1000:8.1f} ms ({median / base:6.1f}x idle)")
        print(f"                      p99    {p99 * 1000:8.1f} ms ({p99 / base:6.1f}x idle)")
    if loaded.durations:
        print(f"  whole stream:       median {statistics.median(loaded.durations):8.2f} s")
    for error in sorted(set(loaded.errors))[:5]:
        print(f"  error: {error}")
    print_bursts(bursts, json_answers, args.json_concurrency)
    json_errors = sum(len(b.errors) for b in bursts)
    if loaded.errors or done != streams or json_errors:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
