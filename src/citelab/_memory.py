"""A pause of the cyclic garbage collector, used by the evaluations' bulk steps only.

Corpus loading and index building no longer pause the collector (see docs/performance.md,
"Retired"); the evaluations' call sites are to be measured against a user-facing figure and
then kept (moved to one private module) or dropped.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_garbage_collection"]


@contextmanager
def paused_garbage_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector for a bulk step, restoring its state afterwards.

    Reference counting still frees everything as usual; only cycle detection waits until
    the block ends, so it does not walk the many objects the step creates and keeps alive.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
