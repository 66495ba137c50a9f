"""Helpers the benchmarks share: a served model in a process of its own, and its CPU time.

Benchmarks run as scripts (``python benchmarks/bench_x.py``), so this folder is on
``sys.path`` and they import this module as ``_common``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ServedModel", "cpu_seconds", "ms_each", "served_model"]


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) a process used so far; None where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ms_each(cpu_seconds: float | None, count: int) -> str:
    """``cpu_seconds`` shared by ``count`` calls, in ms each (two decimals), or ``n/a``."""
    return "n/a" if cpu_seconds is None else f"{cpu_seconds * 1000 / count:.2f}"


@dataclass
class ServedModel:
    """A running ``citelab serve-model``: where it answers and which process it is."""

    base_url: str
    pid: int

    def cpu_seconds(self) -> float | None:
        """CPU seconds the server used so far (see :func:`cpu_seconds`)."""
        return cpu_seconds(self.pid)


@contextmanager
def served_model(*options: str) -> Iterator[ServedModel]:
    """``citelab serve-model`` with ``options`` (``--latency-ms``, ``--model``…) on a free
    loopback port, in its own process (so its CPU work does not compete with the client for
    one GIL, and the two are told apart); stopped by pid."""
    command = [sys.executable, "-m", "citelab", "serve-model", "--port", "0", *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        found = re.search(r"(http://\S+)", process.stdout.readline())
        if found is None:
            raise RuntimeError("citelab serve-model did not announce its address")
        yield ServedModel(found.group(1), process.pid)
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
