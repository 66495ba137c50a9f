"""The tests' chromium launcher (``tests/browser/_chromium.py``), for the benchmarks that
drive a browser: one recipe for both, kept out of the package.

Benchmarks run as scripts with this folder on ``sys.path``; this module adds ``tests/`` so
the recipe is imported from where the tests keep it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))

from browser._chromium import LAUNCH_ARGS, chromium_executable, launched_chromium

__all__ = ["LAUNCH_ARGS", "chromium_executable", "launched_chromium"]
