"""Slow clients (slowloris) against citelab's header deadline and against uvicorn's public options.

``citelab._net`` subclasses uvicorn's h11 protocol to close a connection whose request
headers are not complete within ``Timeouts.header_seconds``; uvicorn itself offers no such
deadline (its ``timeout_keep_alive`` starts only after a response, ``limit_concurrency``
answers 503 to every connection over the limit, well-behaved or not). This benchmark serves a
tiny app on loopback three ways, one after the other in one run: citelab's server
(``uvicorn_server`` with a short header deadline), plain uvicorn with ``timeout_keep_alive``,
and plain uvicorn with ``limit_concurrency`` as well. Against each, ``--clients`` connections
send a request's headers a byte every ``--interval`` seconds; after ``--hold`` seconds it
prints how many of them the server still holds open, and the status and latency of
well-behaved requests sent meanwhile.

Run: ``.venv/bin/python benchmarks/bench_slow_headers.py [--clients 500] [--hold 6]``
(each line gives the load average when it was taken).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import uvicorn

from citelab._net import ServerThread, Timeouts, listening_socket

_SLOW_REQUEST = b"GET / HTTP/1.1\r\nHost: bench\r\n" + b"X-Padding: " + b"a" * 10_000


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    )
    await send({"type": "http.response.body", "body": b"ok"})


class _PlainServer:
    """uvicorn with only its public options, in a thread (stop with :meth:`stop`)."""

    def __init__(self, **options: Any) -> None:
        import threading

        self._socket = listening_socket()
        self.port = self._socket.getsockname()[1]
        config = uvicorn.Config(
            _app, log_level="error", access_log=False, lifespan="off", **options
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        while not self._server.started:
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()


async def _slow_client(port: int, interval: float, until: float, closed: list[bool]) -> None:
    """Send the headers a byte at a time until ``until``; note whether the server ended it."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        closed.append(True)
        return
    ended = False
    try:
        for byte in _SLOW_REQUEST:
            if time.monotonic() >= until:
                break
            writer.write(bytes([byte]))
            try:
                # Any answer (EOF, a 503, a 400) means the server let go of the connection.
                await asyncio.wait_for(reader.read(1), timeout=interval)
                ended = True
                break
            except TimeoutError:
                continue
    except OSError:
        ended = True
    closed.append(ended)
    writer.close()


async def _good_request(port: int) -> tuple[str, float]:
    start = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        status = (await asyncio.wait_for(reader.readline(), timeout=10)).split(b" ")[1].decode()
        writer.close()
    except (OSError, TimeoutError, IndexError):
        status = "failed"
    return status, (time.perf_counter() - start) * 1000


async def _attack(port: int, clients: int, interval: float, hold: float) -> dict[str, Any]:
    until = time.monotonic() + hold
    closed: list[bool] = []
    slow = [
        asyncio.create_task(_slow_client(port, interval, until, closed)) for _ in range(clients)
    ]
    await asyncio.sleep(min(1.0, hold / 2))
    good = []
    while time.monotonic() < until - 0.5:
        good.append(await _good_request(port))
        await asyncio.sleep(0.2)
    await asyncio.gather(*slow)
    return {"held": closed.count(False), "good": good}


def _line(name: str, result: dict[str, Any], clients: int, hold: float) -> str:
    statuses = [s for s, _ in result["good"]]
    latencies = [ms for s, ms in result["good"] if s == "200"]
    shown = (
        f"200 in median {statistics.median(latencies):.1f} ms, max {max(latencies):.1f} ms"
        if latencies
        else "never a 200"
    )
    counts = ", ".join(f"{statuses.count(s)}× {s}" for s in sorted(set(statuses)))
    return (
        f"{name:<44} held after {hold:.0f} s: {result['held']:4d} of {clients}   "
        f"well-behaved ({counts}): {shown}   "
        f"load {os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between bytes")
    parser.add_argument("--hold", type=float, default=6.0, help="seconds the attack lasts")
    parser.add_argument("--header-seconds", type=float, default=2.0)
    args = parser.parse_args()
    servers: list[tuple[str, Callable[[], Any]]] = [
        (
            f"citelab (header deadline {args.header_seconds:g} s)",
            lambda: ServerThread.start(
                _app, timeouts=Timeouts(header_seconds=args.header_seconds, keep_alive_seconds=5)
            ),
        ),
        ("uvicorn public: timeout_keep_alive=5", lambda: _PlainServer(timeout_keep_alive=5)),
        (
            f"uvicorn public: + limit_concurrency={args.clients // 2}",
            lambda: _PlainServer(timeout_keep_alive=5, limit_concurrency=args.clients // 2),
        ),
    ]
    print(
        f"{args.clients} clients sending headers a byte every {args.interval:g} s for "
        f"{args.hold:g} s; well-behaved requests meanwhile, one every 0.2 s"
    )
    for name, start in servers:
        server = start()
        try:
            result = asyncio.run(_attack(server.port, args.clients, args.interval, args.hold))
        finally:
            server.stop()
        print(_line(name, result, args.clients, args.hold), flush=True)


if __name__ == "__main__":
    main()
