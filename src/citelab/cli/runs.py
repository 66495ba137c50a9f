"""``citelab runs [DIR]``: the run index, every run folder under a directory, newest first.

Each line is one run ``citelab eval`` (or ``citelab score --out``) wrote: when, the suite,
the models, cases and failed turns, the headline figures of its baseline variant (citation
recall and precision unless ``--metric`` names others), its gates, tokens and cost, and the
folder, which ``citelab compare`` takes. ``--json`` prints the index as one JSON document.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "runs",
        help="list past evaluation runs (suite, models, when, figures, gates, cost)",
        description=(
            "List the run folders under DIR (searched to any depth), newest first: when, "
            "suite, models, cases, failed turns, the baseline variant's headline figures, "
            "gates, tokens and cost, and the folder (for citelab compare)."
        ),
    )
    parser.add_argument(
        "directory",
        nargs="?",
        default="evaluations/reports",
        metavar="DIR",
        help="where the runs are (default: evaluations/reports)",
    )
    parser.add_argument(
        "--metric",
        action="append",
        default=None,
        metavar="NAME",
        help="a headline figure to show (repeatable; default: citation_recall and "
        "citation_precision)",
    )
    parser.add_argument("--json", action="store_true", help="print the index as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from citelab.cli._common import print_json
    from citelab.evals.report import HEADLINE_METRICS, list_runs

    metrics = args.metric or list(HEADLINE_METRICS)
    index = list_runs(args.directory, metrics)
    for problem in index.problems:
        print(f"citelab runs: skipped {problem}", file=sys.stderr)
    if args.json:
        print_json(index.model_dump(mode="json"))
        return 0
    if not index.runs:
        print(f"no runs under {index.root}")
        return 0
    _print_table(index.table(), metrics)
    return 0


def _print_table(table: Any, metrics: list[str]) -> None:
    columns = ["when", "suite", "models", "cases", "failed_turns", *metrics]
    columns += ["gates", "tokens", "cost_usd", "folder"]
    shown = table.reindex(columns=columns)
    shown["when"] = shown["when"].str.replace("+00:00", "Z", regex=False)
    for metric in metrics:
        shown[metric] = shown[metric].map(_figure)
    shown["tokens"] = [
        _tokens(v, e) for v, e in zip(shown["tokens"], table["estimated"], strict=True)
    ]
    shown["cost_usd"] = shown["cost_usd"].map(lambda v: "—" if _blank(v) else f"{v:.4f}")
    print(shown.to_string(index=False))
    if table["estimated"].any():
        print("* tokens estimated by citelab: the model reported none")


def _figure(value: Any) -> str:
    return "—" if _blank(value) else f"{value:.3f}"


def _tokens(value: Any, estimated: bool) -> str:
    return "—" if _blank(value) else f"{int(value):,}{' *' if estimated else ''}"


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
