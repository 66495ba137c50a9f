"""The README's commands as a newcomer runs them, this checkout beside another, by turns.

Each command runs in a fresh process of each checkout with that checkout's own ``.venv``,
alternating between the two so both meet the same load; the median of the rounds is printed
with the ratio (this checkout / the other). What is timed:

- ``demo``: ``make demo``'s command (``citelab eval --suite default``) into a fresh output
  folder with a fresh cache folder (indexes and model-call cache built again, as on a new
  machine);
- ``test`` (only with ``--test``; long): ``make test`` as CI runs it.

    .venv/bin/python benchmarks/bench_commands.py [--before ../baseline] [--rounds 3] [--test]

Without ``--before`` only this checkout's demo is timed. The other checkout needs its own
set-up first (``make install`` there).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def demo_seconds(checkout: Path) -> float:
    """Wall time of ``citelab eval --suite default`` in ``checkout``, fresh folders."""
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as scratch:
        env = {**os.environ, "CITELAB_CACHE_DIR": str(Path(scratch) / "cache")}
        command = [
            str(checkout / ".venv" / "bin" / "citelab"),
            *("eval", "--suite", "default", "--out", str(Path(scratch) / "out")),
        ]
        return _timed(command, checkout, env)


def test_seconds(checkout: Path) -> float:
    """Wall time of ``make test`` in ``checkout``."""
    return _timed(["make", "test"], checkout, dict(os.environ))


def _timed(command: Sequence[str], cwd: Path, env: dict[str, str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-2000:]
        raise SystemExit(f"{' '.join(command)} failed in {cwd} ({done.returncode}):\n{tail}")
    return seconds


def by_turns(
    what: str, measure: Callable[[Path], float], before: Path, rounds: int
) -> tuple[float, float]:
    """Median seconds of ``measure`` for the other checkout and this one, alternating."""
    times: dict[Path, list[float]] = {before: [], HERE: []}
    for turn in range(rounds):
        order = (before, HERE) if turn % 2 == 0 else (HERE, before)
        for checkout in order:
            times[checkout].append(measure(checkout))
            print(f"   {what} round {turn + 1}, {checkout.name}: {times[checkout][-1]:.1f} s")
    return statistics.median(times[before]), statistics.median(times[HERE])


def report(what: str, old: float, new: float) -> None:
    load = os.getloadavg()[0]
    ratio = new / old
    print(f"{what:28} before {old:7.1f} s   after {new:7.1f} s   {ratio:5.2f}×   load {load:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the other checkout (default: none)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each command per checkout")
    parser.add_argument("--test", action="store_true", help="also time make test (long)")
    parser.add_argument("--quick", action="store_true", help="one round (make bench)")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    if args.before is None:
        seconds = statistics.median(demo_seconds(HERE) for _ in range(rounds))
        print(f"make demo (its command): {seconds:.1f} s (load {os.getloadavg()[0]:.2f})")
        return
    before = args.before.resolve()
    if not (before / ".venv" / "bin" / "citelab").exists():
        raise SystemExit(f"{before} has no .venv with citelab: run make install there first")
    if shutil.which("make") is None:
        raise SystemExit("make is not installed")
    results = [("make demo (its command)", *by_turns("demo", demo_seconds, before, rounds))]
    if args.test:
        results.append(("make test", *by_turns("test", test_seconds, before, 1)))
    print()
    for what, old, new in results:
        report(what, old, new)


if __name__ == "__main__":
    main()
