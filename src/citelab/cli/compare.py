"""``citelab compare RUN_A RUN_B``: two evaluation runs side by side.

Reads two folders written by ``citelab eval`` (two models, two prompt versions, before and
after a change), matches their cases by dataset and case id, and writes a comparison report:
run B minus run A per metric with paired bootstrap intervals, both runs' values, and the case
browser over both (filter "differs from baseline" to see the cases that changed).

``--non-inferior METRIC=MARGIN`` (repeatable; ``*`` for every metric) is a gate for CI: B
must not be worse than A on METRIC by more than MARGIN with 95% confidence (the paired
interval's worse end; ``--confidence`` changes the level). The command exits 3 when one does
not pass (see ``EXIT_CODES``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["EXIT_CODES", "register", "run"]

EXIT_CODES = """\
B is not worse than A on METRIC by more than MARGIN when the paired interval of B - A (at
--confidence) has its worse end within the margin: lower end >= -MARGIN for metrics where
higher is better, upper end <= MARGIN where lower is better. A metric neither run scored
on shared cases is not testable, and fails the gate.

exit codes:
  0    compared; every --non-inferior gate passed
  2    bad input: not a run folder, nothing to match the runs by, a bad option
  3    a --non-inferior gate did not pass (the comparison and its report are written)
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare two evaluation runs case by case",
        description=(
            "Compare two folders written by citelab eval: cases matched by dataset and id, "
            "run B minus run A per metric with paired bootstrap intervals, and a report "
            "with the case browser over both runs."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_a", metavar="RUN_A", help="the baseline run's folder")
    parser.add_argument("run_b", metavar="RUN_B", help="the run compared with it")
    parser.add_argument(
        "--out", metavar="DIR", help="output folder (default: RUN_B/compare-<name of RUN_A>)"
    )
    parser.add_argument(
        "--labels", nargs=2, metavar=("A", "B"), help="names of the runs (default: folder names)"
    )
    parser.add_argument(
        "--non-inferior",
        action="append",
        default=[],
        metavar="METRIC=MARGIN",
        help="a gate: B not worse than A on METRIC by more than MARGIN (e.g. "
        "citation_precision=0.02; * for every metric; repeatable)",
    )
    parser.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="the confidence of the paired intervals the gates read (default: 0.95)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the outcome as JSON (matched cases, differences, gates with their "
        "verdicts, exit code) instead of text",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from citelab.evals import compare_runs, write_comparison

    margins = [_margin(text) for text in args.non_inferior]
    if not 0 < args.confidence < 1:
        from citelab._errors import ConfigError

        raise ConfigError(f"--confidence must lie between 0 and 1, got {args.confidence}")
    comparison = compare_runs(args.run_a, args.run_b, args.labels)
    out = Path(args.out) if args.out else Path(args.run_b) / f"compare-{Path(args.run_a).name}"
    written = write_comparison(comparison, out, non_inferior=margins, confidence=args.confidence)
    from citelab.cli._common import (
        EXIT_GATE_FAILED,
        gate_fails,
        print_gates,
        print_json,
        table_records,
    )

    a, b = comparison.labels
    differences = comparison.result.differences(confidence=args.confidence)
    gates = comparison.result.config.get("gates", [])
    passed = not any(gate_fails(gate) for gate in gates)
    code = 0 if passed else EXIT_GATE_FAILED
    if args.json:
        print_json(
            {
                "labels": [a, b],
                "matched_cases": comparison.matched,
                "only_a": comparison.only[0],
                "only_b": comparison.only[1],
                "confidence": args.confidence,
                "differences": table_records(differences),
                "gates": gates,
                "gates_passed": passed,
                "report": str(written["report.html"]),
                "exit_code": code,
            }
        )
    else:
        print(
            f"{comparison.matched} cases matched; {comparison.only[0]} only in {a}, "
            f"{comparison.only[1]} only in {b}"
        )
        _print_differences(differences, a, b)
        print_gates(gates)
    print(f"report: {written['report.html']}", file=sys.stderr)
    return code


def _margin(text: str) -> tuple[str, float]:
    """``METRIC=MARGIN`` read, with a clear error for anything else."""
    from citelab._errors import ConfigError

    metric, equals, number = text.partition("=")
    try:
        margin = float(number)
    except ValueError:
        margin = -1.0
    if not equals or not metric.strip() or margin < 0:
        raise ConfigError(
            f"--non-inferior {text!r}: write METRIC=MARGIN with a margin of 0 or more, "
            "e.g. citation_precision=0.02"
        )
    return metric.strip(), margin


def _print_differences(frame: Any, a: str, b: str) -> None:
    if frame.empty:
        print("no metric was scored on cases both runs have")
        return
    print(f"{b} minus {a} (paired interval; * excludes 0):")
    for row in frame.to_dict("records"):
        mark = "*" if row["excludes_zero"] else " "
        print(
            f"  {mark} {row['model']:<20} {row['metric']:<28} {row['difference']:+.3f} "
            f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]  {int(row['cases'])} cases"
        )
