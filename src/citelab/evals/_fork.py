"""Work handed to forked processes: when it is safe, and how the children get their data.

On Linux a forked child inherits the parent's memory, so what it works on is not pickled on
the way there (only its results come back). Forking is safe only from a process with no
other thread that could hold a lock at the fork (it would stay locked in the child for
good): a notebook's kernel has such threads, so there the work stays in one process. tqdm's
monitor thread, which a progress bar leaves behind, takes only tqdm's own lock, which the
forked work never uses, so it does not count.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from typing import Any

__all__ = ["can_fork", "cpus", "fork_is_safe", "forked_pool", "inherited"]


def can_fork() -> bool:
    """Whether this platform forks (Linux)."""
    return sys.platform == "linux"


def cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - not on Linux


def fork_is_safe() -> bool:
    """Linux, and no thread but the main one (and tqdm's monitor): see the module docs."""
    return can_fork() and all(
        thread is threading.main_thread() or _tqdm_monitor(thread)
        for thread in threading.enumerate()
    )


def _tqdm_monitor(thread: threading.Thread) -> bool:
    return thread.daemon and type(thread).__module__.startswith("tqdm.")


def forked_pool(workers: int, state: Any) -> ProcessPoolExecutor:
    """A pool of ``workers`` forked processes that inherit ``state`` (read it there with
    :func:`inherited`). The workers are forked when the pool starts."""
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_inherit,
        initargs=(state,),  # not pickled: a forked worker has it
    )


_INHERITED: Any = None


def _inherit(state: Any) -> None:
    global _INHERITED  # noqa: PLW0603 - the forked worker's own copy
    _INHERITED = state


def inherited() -> Any:
    """In a worker of :func:`forked_pool`: the state it was given."""
    return _INHERITED
