"""citelab's one use of Python's garbage collector: no cycle collection while answers are
scored in bulk.

Scoring answers in bulk keeps a great many small containers alive (the answers, their
records and cases, the rows), nearly none of them garbage, and CPython's cycle collector
walks all of them again and again as they pile up; the scoring itself makes next to no cyclic
garbage, so pausing the collector frees nothing later that it would have freed now.
``docs/performance.md`` ("No cycle collection while answers are scored in bulk") has the
figures and the benchmark that shows them (``benchmarks/bench_score.py``).

The pause is one policy at two places: :func:`citelab.evals.score_answers` (this process)
and the ``processes`` executor's scoring workers. It changes nothing else: the collector's
state is the caller's again when the block ends (a caller's own pause stays a pause), and
reference counting frees everything that is not in a cycle, as always.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["bulk_scoring"]


@contextmanager
def bulk_scoring() -> Iterator[None]:
    """No cycle collection inside the block; the collector as it was after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
