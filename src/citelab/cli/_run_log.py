"""Options a run shares with the tools that keep runs over time: ``--price`` (what a model's
tokens cost) and ``--log-to mlflow`` (the run written to an MLflow tracking store)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_log_arguments", "add_price_argument", "check_log_targets", "log_run", "prices_of"]


def add_price_argument(parser: argparse.ArgumentParser) -> None:
    """``--price MODEL=INPUT,OUTPUT`` (repeatable), US dollars per million tokens."""
    parser.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="MODEL=IN,OUT",
        help="what a model's tokens cost, in US dollars per million input and output tokens "
        "(e.g. openai:gpt-4o-mini=0.15,0.60; repeatable; over the suite's [prices]); "
        "citelab knows no prices of its own",
    )


def prices_of(args: argparse.Namespace) -> dict[str, Any]:
    """The ``--price`` options read (a clear error for a bad one)."""
    from citelab.evals.results import parse_price

    return dict(parse_price(text) for text in args.price)


def add_log_arguments(parser: argparse.ArgumentParser) -> None:
    """``--log-to mlflow [--mlflow-uri URI] [--mlflow-experiment NAME]``."""
    parser.add_argument(
        "--log-to",
        choices=["mlflow"],
        action="append",
        default=[],
        help="also write the run to a tracking store: mlflow (needs citelab[mlflow]; "
        "parameters, figures as metrics, report.html and the tables as artifacts)",
    )
    parser.add_argument(
        "--mlflow-uri",
        metavar="URI",
        help="the MLflow tracking URI (default: MLFLOW_TRACKING_URI, else a local file "
        "store ./mlruns)",
    )
    parser.add_argument(
        "--mlflow-experiment",
        metavar="NAME",
        help="the MLflow experiment (default: citelab/<suite>)",
    )


def check_log_targets(args: argparse.Namespace) -> None:
    """Before a run starts: every ``--log-to`` target can be written (its package is
    installed), so a long run does not end in a missing-package error."""
    if "mlflow" in args.log_to:
        from citelab.evals.report import require_mlflow

        require_mlflow()
    elif args.mlflow_uri or args.mlflow_experiment:
        from citelab._errors import ConfigError

        raise ConfigError("--mlflow-uri and --mlflow-experiment need --log-to mlflow")


def log_run(args: argparse.Namespace, out: str | Path) -> None:
    """Write the run folder ``out`` where ``--log-to`` says (nothing when it says nothing)."""
    if "mlflow" not in args.log_to:
        return
    from citelab.evals.report import log_to_mlflow

    logged = log_to_mlflow(out, uri=args.mlflow_uri, experiment=args.mlflow_experiment)
    print(
        f"mlflow: run {logged.run_id} in experiment {logged.experiment!r} at {logged.uri}",
        file=sys.stderr,
    )
