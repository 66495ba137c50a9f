"""``citelab judges``: list the support judges, and check them against human labels.

``citelab judges calibrate [LABELS] --judge lexical --judge lexical_pairs`` prints each
judge's accuracy, macro-F1 and Cohen's κ (with 95% bootstrap intervals) on a JSONL file of
human support decisions — citelab's own labelled set when LABELS is not given; ALCE's
human-eval citation file (``--format alce``, or any ``.json``) is read too — beside the
agreement ALCE published for its NLI judge.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "judges",
        help="list support judges, or calibrate them against human labels",
        description="Support judges: list them, or calibrate them against human labels.",
    )
    commands = parser.add_subparsers(dest="judges_command", metavar="ACTION", required=True)
    listing = commands.add_parser("list", help="the registered judges, with what each does")
    listing.set_defaults(func=_list)
    calibrate = commands.add_parser(
        "calibrate",
        help="accuracy, macro-F1 and Cohen's kappa of judges on human support labels",
        description=(
            "Ask each judge every labelled pair of LABELS (JSONL: id, claim, evidence, label, "
            "category; or ALCE's human-eval citation file; default: citelab's own labelled "
            "set) and print accuracy, macro-F1 and Cohen's kappa with 95% bootstrap "
            "intervals, beside ALCE's published agreement."
        ),
    )
    calibrate.add_argument(
        "labels", nargs="?", metavar="LABELS", help="a labels JSONL file, or ALCE's JSON"
    )
    calibrate.add_argument(
        "--format",
        dest="label_format",
        choices=["auto", "jsonl", "alce"],
        default="auto",
        help="how LABELS is written (auto: a .json file is ALCE's human-eval citation format)",
    )
    calibrate.add_argument(
        "--judge",
        action="append",
        metavar="NAME|JSON|module:attr",
        help="a judge to check (repeatable; default: lexical and lexical_pairs)",
    )
    calibrate.add_argument("--json", action="store_true", help="print the figures as JSON")
    calibrate.add_argument("--by-category", action="store_true", help="add accuracy per category")
    calibrate.set_defaults(func=_calibrate)


def _list(args: argparse.Namespace) -> int:
    from citelab.cli._common import print_descriptions
    from citelab.evals import JUDGES

    print_descriptions(JUDGES.describe())
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from citelab.cli.score import parse_spec
    from citelab.evals import calibrate, calibration_table, category_accuracy

    judges = [parse_spec(j, "--judge") for j in args.judge] if args.judge else None
    fmt = args.label_format
    verdicts, metrics = (
        calibrate(args.labels, judges, label_format=fmt)
        if judges is not None
        else calibrate(args.labels, label_format=fmt)
    )
    if args.json:
        payload: dict[str, Any] = {
            "judges": json.loads(metrics.to_json(orient="records")),
            "alce_published": json.loads(
                calibration_table(metrics).tail(2).to_json(orient="records")
            ),
        }
        if args.by_category:
            payload["by_category"] = json.loads(category_accuracy(verdicts).to_json())
        print(json.dumps(payload, indent=2))
        return 0
    table = calibration_table(metrics)
    shown = ["judge", "pairs", "accuracy", "accuracy_low", "accuracy_high", "macro_f1", "kappa",
             "kappa_low", "kappa_high", "source"]  # fmt: skip
    print(table[shown].round(3).to_string(index=False))
    if args.by_category:
        print()
        print(category_accuracy(verdicts).round(3).to_string())
    return 0
