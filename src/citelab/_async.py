"""Running a coroutine to its end from synchronous code, inside a running event loop or not."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_blocking"]

T = TypeVar("T")


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end and return its result (or raise what it raised).

    Outside an event loop (a script) it runs on a new loop, as :func:`asyncio.run` does.
    Inside a running loop (a notebook, an ``async`` caller), which cannot be re-entered, it
    runs on a loop of its own in a worker thread; the caller's loop waits meanwhile, so
    ``await`` the coroutine itself where you can.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
