"""``citelab compare RUN_A RUN_B``: two evaluation runs side by side.

Reads two folders written by ``citelab eval`` (two models, two prompt versions, before and
after a change), matches their cases by dataset and case id, and writes a comparison report:
run B minus run A per metric with paired bootstrap intervals, both runs' values, and the case
browser over both (filter "differs from baseline" to see the cases that changed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare two evaluation runs case by case",
        description=(
            "Compare two folders written by citelab eval: cases matched by dataset and id, "
            "run B minus run A per metric with paired bootstrap intervals, and a report "
            "with the case browser over both runs."
        ),
    )
    parser.add_argument("run_a", metavar="RUN_A", help="the baseline run's folder")
    parser.add_argument("run_b", metavar="RUN_B", help="the run compared with it")
    parser.add_argument(
        "--out", metavar="DIR", help="output folder (default: RUN_B/compare-<name of RUN_A>)"
    )
    parser.add_argument(
        "--labels", nargs=2, metavar=("A", "B"), help="names of the runs (default: folder names)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from citelab.evals import compare_runs, write_comparison

    comparison = compare_runs(args.run_a, args.run_b, args.labels)
    out = Path(args.out) if args.out else Path(args.run_b) / f"compare-{Path(args.run_a).name}"
    written = write_comparison(comparison, out)
    a, b = comparison.labels
    print(
        f"{comparison.matched} cases matched; {comparison.only[0]} only in {a}, "
        f"{comparison.only[1]} only in {b}"
    )
    _print_differences(comparison.result.differences(), a, b)
    print(f"report: {written['report.html']}", file=sys.stderr)
    return 0


def _print_differences(frame: Any, a: str, b: str) -> None:
    if frame.empty:
        print("no metric was scored on cases both runs have")
        return
    print(f"{b} minus {a} (paired 95% interval; * excludes 0):")
    for row in frame.to_dict("records"):
        mark = "*" if row["excludes_zero"] else " "
        print(
            f"  {mark} {row['model']:<20} {row['metric']:<28} {row['difference']:+.3f} "
            f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]  {int(row['cases'])} cases"
        )
