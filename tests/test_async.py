"""run_blocking: a coroutine run to its end from synchronous code, in a loop or not."""

from __future__ import annotations

import asyncio
import threading

import pytest

from citelab._async import run_blocking


async def where() -> tuple[int, asyncio.AbstractEventLoop]:
    """The thread and the event loop the coroutine ran on."""
    await asyncio.sleep(0)
    return threading.get_ident(), asyncio.get_running_loop()


async def fails() -> None:
    await asyncio.sleep(0)
    raise LookupError("no such answer")


def test_outside_a_loop_it_runs_in_this_thread() -> None:
    thread, loop = run_blocking(where())
    assert thread == threading.get_ident()
    assert loop.is_closed()  # a loop of its own, closed afterwards


def test_inside_a_running_loop_it_runs_on_another_loop_in_a_worker_thread() -> None:
    async def caller() -> tuple[int, asyncio.AbstractEventLoop, asyncio.AbstractEventLoop]:
        thread, loop = run_blocking(where())  # a notebook cell calling sync code
        return thread, loop, asyncio.get_running_loop()

    thread, loop, callers = asyncio.run(caller())
    assert thread != threading.get_ident()
    assert loop is not callers


@pytest.mark.parametrize("in_loop", [False, True], ids=["script", "running-loop"])
def test_what_the_coroutine_raises_reaches_the_caller(in_loop: bool) -> None:
    async def caller() -> None:
        run_blocking(fails())

    with pytest.raises(LookupError, match="no such answer"):
        asyncio.run(caller()) if in_loop else run_blocking(fails())
