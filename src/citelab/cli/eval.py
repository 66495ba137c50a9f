"""``citelab eval``: run an evaluation suite and write its report.

``citelab eval --suite default`` runs the bundled suite (the offline model over every fixture
dataset, with the ablations) and writes ``evaluations/reports/default/``: tables (CSV, and
Parquet when pyarrow is installed), ``run.json`` and ``report.html``. A second run resumes:
finished cases are not run again, and model calls are answered from the disk cache.
``--executor ray [--address ADDR] [--workers N]`` runs the cases on a Ray cluster instead of
in this process, with the same results (see the README's "Sweeps on a Ray cluster");
``--executor`` takes any registered executor (``citelab list executors``) or a ``module:attr``.
``--executor processes [--workers N]`` scores in worker processes on this machine.

Failures are loud: a model that cannot be reached or does not exist stops the run before
the first case; a run with failed turns prints them grouped by cause and exits 1 (unless
``--allow-failures``); resuming runs failed cases again (unless ``--keep-failed``) and cases
recorded under another configuration (unless ``--reuse-changed``). A run whose suite states
gates (``[[gates]]``, or findings with ``required = true``) prints each gate's verdict and
exits 3 when one did not pass: see :data:`EXIT_CODES`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from citelab.cli._common import (
    RegisteredNames,
    add_judge_card_argument,
    add_label_map_argument,
    add_labels_argument,
    print_judges,
)
from citelab.cli._run_log import (
    add_log_arguments,
    add_price_argument,
    check_log_targets,
    log_run,
    prices_of,
)

__all__ = ["EXIT_CODES", "register", "run"]

EXIT_CODES = """\
exit codes:
  0    the run finished: no turn failed, every gate passed (or is not informative and
       not required)
  1    turns failed (printed by cause; --allow-failures exits 0 or 3 instead)
  2    bad input or configuration: the suite, an option, a model name (the message says where)
  3    a gate did not pass: a [[gates]] check or a required finding failed, could not be
       tested, or is required and not informative (it compared identical answers); the
       results and report are written
  130  interrupted (Ctrl-C); the same command resumes the run
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="run an evaluation suite and write its report",
        description=(
            "Run a suite (a name in evaluations/suites/ or a TOML/YAML path): every variant × "
            "model × dataset case through the answer service, then score citations and write "
            "CSV tables, run.json and a self-contained report.html."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--suite", default="default", metavar="NAME|PATH", help="suite to run (default: default)"
    )
    parser.add_argument(
        "--model",
        action="append",
        default=None,
        metavar="SPEC",
        help="run these models instead of the suite's (repeatable; e.g. extractive, "
        "openai:<model>)",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="output folder (default: evaluations/reports/<suite>/)"
    )
    parser.add_argument("--limit", type=int, metavar="N", help="at most N cases per dataset")
    parser.add_argument(
        "--concurrency", type=int, metavar="N", help="cases run at once (default: the suite's)"
    )
    parser.add_argument(
        "--rescore",
        action="store_true",
        help="score the recorded cases in the output folder again, without running models",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="ask the models every time (for timing them)"
    )
    parser.add_argument(
        "--stream-calls",
        action="store_true",
        help="stream the calls of models that can also answer whole (OpenAI-compatible ones "
        "answer whole by default in evaluations: nothing watches their tokens)",
    )
    parser.add_argument(
        "--executor",
        choices=RegisteredNames("citelab.evals.execution", "EXECUTORS"),
        metavar="NAME",
        default="local",
        help="where the work runs: a registered executor (%(choices)s; citelab list "
        "executors) or a module:attr factory; local (the default) is this process, processes "
        "scores in worker processes, ray is a Ray cluster (needs citelab[ray])",
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="the Ray cluster to use with --executor ray (e.g. head-node:6379; default: a "
        "local cluster started for the run)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="Ray workers (actors) with --executor ray, worker processes beside this one "
        "with --executor processes (default: one per CPU; processes: one per CPU but one)",
    )
    parser.add_argument(
        "--allow-failures",
        action="store_true",
        help="do not exit 1 when turns failed (the errors are still printed and reported; "
        "a failed gate still exits 3)",
    )
    parser.add_argument(
        "--keep-failed",
        action="store_true",
        help="when resuming, keep recorded cases whose turns failed instead of running them again",
    )
    parser.add_argument(
        "--reuse-changed",
        action="store_true",
        help="when resuming, keep recorded cases made under another configuration (model, "
        "endpoint, agent settings) instead of running them again",
    )
    parser.add_argument(
        "--no-preflight",
        action="store_true",
        help="do not ask the models' endpoints whether they answer before the run starts",
    )
    add_judge_card_argument(parser)
    add_price_argument(parser)
    add_log_arguments(parser)
    add_labels_argument(parser)
    add_label_map_argument(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the outcome as JSON (summary, findings, gates with their verdicts, "
        "failed turns, exit code) instead of tables",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from citelab.cli._common import (
        EXIT_GATE_FAILED,
        gate_fails,
        print_gates,
        print_json,
        table_records,
    )
    from citelab.evals import load_suite, rescore
    from citelab.evals import run as run_suite
    from citelab.evals.labels import parse_label_map
    from citelab.evals.runner import default_output_dir

    _check_options(args)
    prices = prices_of(args)
    check_log_targets(args)
    suite = load_suite(args.suite)
    _check_model_names(args.model or [])  # before anything starts (a progress bar included)
    out = args.out or default_output_dir(suite)
    if args.rescore:
        result = rescore(
            out,
            suite,
            executor=args.executor,
            address=args.address,
            workers=args.workers,
            judge_cards=args.judge_cards,
            allow_in_sample=args.allow_in_sample,
            labels=args.labels,
            label_map=parse_label_map(args.label_map),
        )
    else:
        try:
            result = run_suite(
                suite,
                out_dir=out,
                models=args.model,
                limit=args.limit,
                concurrency=args.concurrency,
                progress=not args.quiet,
                cache=not args.no_cache,
                stream_calls=args.stream_calls,
                rerun_failed=not args.keep_failed,
                reuse_changed=args.reuse_changed,
                preflight=not args.no_preflight,
                executor=args.executor,
                address=args.address,
                workers=args.workers,
                judge_cards=args.judge_cards,
                prices=prices,
                allow_in_sample=args.allow_in_sample,
                labels=args.labels,
                label_map=parse_label_map(args.label_map),
            )
        except KeyboardInterrupt:  # Ctrl-C: say what is kept and how to go on
            print(_interrupted_message(Path(out)), file=sys.stderr)
            return 130
    log_run(args, out)
    findings = result.config.get("findings", [])
    gates = result.config.get("gates", [])
    gates_passed = not any(gate_fails(gate) for gate in gates)
    errors = result.errors()
    failed_turns = int(errors["count"].sum()) if not errors.empty else 0
    if failed_turns and not args.allow_failures:
        code = 1
    else:
        code = 0 if gates_passed else EXIT_GATE_FAILED
    if args.json:
        print_json(
            {
                "out": str(out),
                "report": f"{out}/report.html",
                "turns": len(result.turns),
                "failed_turns": failed_turns,
                "summary": table_records(result.to_pandas("variant")),
                "findings": findings,
                "gates": gates,
                "gates_passed": gates_passed,
                "judges": [judge.model_dump(mode="json") for judge in result.judges()],
                "exit_code": code,
            }
        )
    else:
        summary = result.to_pandas("variant")
        _print_summary(summary)
        print_judges(result, result.corrected(summary=summary))
        _print_findings(findings)
        print_gates(gates)
    print(f"report: {out}/report.html", file=sys.stderr)
    if failed_turns:
        _print_errors(errors, len(result.turns))
        if args.allow_failures:
            print("--allow-failures: not exiting 1 for the failed turns", file=sys.stderr)
    return code


def _check_options(args: argparse.Namespace) -> None:
    """The options that argparse cannot check alone, before anything starts."""
    from citelab._errors import ConfigError

    for option in ("limit", "concurrency", "workers"):
        value = getattr(args, option)
        if value is not None and value < 1:
            raise ConfigError(f"--{option} must be at least 1, got {value}")
    # citelab's own executors; a user's executor is told what it was given
    if args.executor in ("local", "processes") and args.address is not None:
        raise ConfigError("--address needs --executor ray")
    if args.executor == "local" and args.workers is not None:
        raise ConfigError("--workers needs --executor processes or ray")


def _interrupted_message(out: Path) -> str:
    """What an interrupted run kept (the finished cases in ``records.jsonl``, read as the
    file stands) and that running the same command again resumes it."""
    records = out / "records.jsonl"
    kept, failed = _kept_records(records)
    if kept == 0:
        return (
            "citelab eval: interrupted before any case finished; nothing is kept, and the same "
            "command starts the run again"
        )
    again = f" ({failed} of them failed and will run again)" if failed else ""
    return (
        f"citelab eval: interrupted; {kept} finished case run(s) are kept in {records}{again}. "
        "Run the same command again to resume: finished cases are not run again, only the "
        "rest (--no-cache does not change that)."
    )


def _kept_records(path: Path) -> tuple[int, int]:
    """How many finished case runs ``path`` holds (what a resumed run keeps: the last valid
    record per key), and how many of them have a failed turn."""
    from citelab.evals.records import read_records

    try:
        records = read_records(path)
    except OSError:
        return 0, 0
    failed = sum(any(turn.error is not None for turn in r.turns) for r in records.values())
    return len(records), failed


def _check_model_names(specs: list[str]) -> None:
    """Every ``--model`` names a registered model (building or reaching it is the preflight's
    part, which ``--no-preflight`` skips)."""
    from citelab._errors import ConfigError
    from citelab.models import MODELS

    for spec in specs:
        try:
            MODELS.check(spec)
        except ConfigError as exc:
            raise ConfigError(f"--model: {exc}") from exc


def _print_errors(errors: Any, turns: int) -> None:
    """The failed turns, grouped by cause: count, first message and where it happened."""
    failed = int(errors["count"].sum())
    causes = len(errors)
    print(
        f"error: {failed} of {turns} turns failed ({causes} cause{'s' * (causes != 1)}):",
        file=sys.stderr,
    )
    for row in errors.to_dict("records"):
        where = f"{row['variant']} · {row['model']} · {row['dataset']}/{row['case_id']}"
        print(
            f"  {row['count']} × {row['first_message']}\n      first in {where} turn {row['turn']}",
            file=sys.stderr,
        )


def _print_summary(summary: Any) -> None:
    if summary.empty:
        print("no applicable turns were scored")
        return
    table = summary.pivot_table(
        index="metric", columns=["variant", "model"], values="value", sort=False
    )
    print(table.round(3).to_string())


_MARKS = {"holds": "✔", "fails": "✘", "untestable": "○", "uninformative": "≡"}
"""✔ as predicted, ✘ not shown, ○ not testable here, ≡ not informative (identical answers)."""


def _print_findings(findings: list[dict[str, Any]]) -> None:
    """The findings as checked (``run.json``'s ``findings``)."""
    for finding in findings:
        mark = _MARKS[finding["verdict"]]
        print(f"{mark} {finding['finding']['title']}\n    {finding['sentence']}")
