"""``citelab compare RUN_A RUN_B [RUN_C…]``: evaluation runs side by side.

Reads folders written by ``citelab eval`` (two models, two prompt versions, before and after
a change), matches their cases by dataset and case id, and writes a comparison report: each
run after the first minus the first per metric with paired bootstrap intervals, every run's
values, and the case browser over all of them (filter "differs from baseline" to see the
cases that changed). With three runs or more it prints one table of every run's figures
with its paired interval against the first (``figures.csv``).

``--non-inferior METRIC=MARGIN`` (repeatable; ``*`` for every metric) is a gate for CI: B
(every run after the first) must not be worse than A on METRIC by more than MARGIN with 95%
confidence (the paired interval's worse end; ``--confidence`` changes the level). The command
exits 3 when one does not pass (see ``EXIT_CODES``).
"""

from __future__ import annotations

import argparse
import math
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
        help="compare evaluation runs case by case",
        description=(
            "Compare two or more folders written by citelab eval: cases matched by dataset "
            "and id, each run minus the first (RUN_A) per metric with paired bootstrap "
            "intervals, and a report with the case browser over the runs."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="run folders: the baseline first (RUN_A), then the runs compared with it",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="output folder (default: <the last run>/compare-<name of RUN_A>)",
    )
    parser.add_argument(
        "--labels",
        nargs="+",
        metavar="NAME",
        help="names of the runs, one per run (default: folder names)",
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
    from citelab.evals.report import compare_many, write_comparison

    margins = [_margin(text) for text in args.non_inferior]
    if not 0 < args.confidence < 1:
        from citelab._errors import ConfigError

        raise ConfigError(f"--confidence must lie between 0 and 1, got {args.confidence}")
    if len(args.runs) < 2:
        from citelab._errors import ConfigError

        raise ConfigError(f"give two run folders or more (RUN_A RUN_B …), got {len(args.runs)}")
    comparison = compare_many(args.runs, args.labels)
    first, last = Path(args.runs[0]), Path(args.runs[-1])
    out = Path(args.out) if args.out else last / f"compare-{first.name}"
    written = write_comparison(comparison, out, non_inferior=margins, confidence=args.confidence)
    from citelab.cli._common import (
        EXIT_GATE_FAILED,
        gate_fails,
        print_gates,
        print_json,
        table_records,
    )

    differences = comparison.result.differences(
        baseline=comparison.labels[0], confidence=args.confidence
    )
    gates = comparison.result.config.get("gates", [])
    passed = not any(gate_fails(gate) for gate in gates)
    code = 0 if passed else EXIT_GATE_FAILED
    if len(comparison.labels) > 2:
        _print_many(comparison, differences, args, written, code)
        return code
    a, b = comparison.labels
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


def _print_many(
    comparison: Any, differences: Any, args: argparse.Namespace, written: Any, code: int
) -> None:
    """Three runs or more: one table of every run's figures, with its paired interval
    against the first (``figures.csv``); ``--json`` prints it as rows."""
    from citelab.cli._common import print_gates, print_json, table_records
    from citelab.evals.report import figures_table

    summary = comparison.result.summary()
    figures = figures_table(comparison, summary=summary, differences=differences)
    gates = comparison.result.config.get("gates", [])
    if args.json:
        print_json(
            {
                "labels": list(comparison.labels),
                "baseline": comparison.labels[0],
                "matched_cases": comparison.matched,
                "only": dict(zip(comparison.labels, comparison.only, strict=True)),
                "confidence": args.confidence,
                "figures": table_records(figures),
                "differences": table_records(differences),
                "gates": gates,
                "gates_passed": code == 0,
                "report": str(written["report.html"]),
                "exit_code": code,
            }
        )
    else:
        only = ", ".join(
            f"{n} only in {label}"
            for label, n in zip(comparison.labels, comparison.only, strict=True)
        )
        print(f"{comparison.matched} cases matched by every run; not in every run: {only}")
        _print_figures(figures, comparison.labels[0])
        print_gates(gates)
    print(f"report: {written['report.html']}", file=sys.stderr)


def _print_figures(frame: Any, base: str) -> None:
    if frame.empty:
        print("no metric was scored")
        return
    print(f"every run's value [95% interval], and minus {base} (paired interval; * excludes 0):")
    for (model, metric), rows in frame.groupby(["model", "metric"], sort=False):
        print(f"  {model} · {metric}")
        for row in rows.to_dict("records"):
            value = _interval(row["value"], row["ci_low"], row["ci_high"], "")
            line = f"    {row['run']!s:<24} {value}"
            if row["run"] != base and _present(row["difference"]):
                mark = "*" if row["excludes_zero"] is True else " "
                diff = _interval(
                    row["difference"], row["difference_ci_low"], row["difference_ci_high"], "+"
                )
                line += f"   {mark} {diff}  {int(row['paired_cases'])} cases"
            print(line)


def _interval(value: Any, low: Any, high: Any, sign: str) -> str:
    if not _present(value):
        return "—"
    if not (_present(low) and _present(high)):
        return f"{value:{sign}.3f}"
    return f"{value:{sign}.3f} [{low:{sign}.3f}, {high:{sign}.3f}]"


def _present(value: Any) -> bool:
    return isinstance(value, int | float) and not math.isnan(value)


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
    from citelab.evals.results import MIN_UNITS

    if frame.empty:
        print("no metric was scored on cases both runs have")
        return
    print(f"{b} minus {a} (paired interval; * excludes 0):")
    for row in frame.to_dict("records"):
        mark = "*" if row["excludes_zero"] else " "
        interval = f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
        if row.get("too_few"):
            few = float(row["units"]) < MIN_UNITS
            interval = "— too few units" if few else "— no spread (every resample the same)"
        print(
            f"  {mark} {row['model']:<20} {row['metric']:<28} {row['difference']:+.3f} "
            f"{interval}  {int(row['cases'])} cases"
        )
