"""``citelab score``: score answers citelab did not produce (ALCE files, vendor responses).

``citelab score results.json --format alce --out report/`` reads an ALCE result file and
writes the same tables, ``run.json`` and ``report.html`` as ``citelab eval``; ``--json``
prints each metric's value and interval as JSON on stdout instead of a table. Either way the
judge of each judged metric is named with its card and κ, citation recall and precision are
also shown corrected for the judge's error, and warnings (no card, low κ, an ``_alce`` metric
not judged by ALCE's judge) go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from citelab.cli._common import (
    RegisteredNames,
    add_judge_card_argument,
    add_label_map_argument,
    add_labels_argument,
    print_judges,
)

__all__ = ["ENVELOPE_HELP", "register", "run"]

ENVELOPE_HELP = """\
A judge reads each cited source's text. A vendor response usually cites a URL and a title
only: give the passages in an envelope (one JSON value, a list, or JSON Lines):

  {"id": "ferry-1", "question": "When does the ferry leave?",
   "response": <the vendor's response as the API returned it>,
   "sources": [{"uri": "https://harbour.example/ferry", "title": "Ferry timetable",
                "content": "The ferry leaves at 9 am from pier 3 every day."}]}

"uri" is what the response cites; Anthropic's request "documents" may stand in for
"sources". Without a passage (no content, none in the response, no source quotes) a source
is not judgeable: its citations are left out of recall and precision, listed on stderr and
in --json and run.json (without_passage), never scored 0. Anthropic responses are scored per
cited span (citation_recall_span), the others per sentence.

example:
  citelab score answers.jsonl --format openai-chat --json

A cited URL matches a given "uri" after tracking parameters (utm_*, gclid, fbclid…), the
fragment, a trailing slash, a default port and the host's case are set aside; an answer none
of whose citations can be judged is listed with the URLs it cites and the sources it gave.

exit codes: 0 scored; 2 bad input or configuration (the message says where), or no citation
in INPUT can be judged (no cited source has a passage: the message lists what did not match).
"""

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score answers from a file (ALCE results, vendor responses, AnswerMessages)",
        description=(
            "Score the answers of INPUT with citelab's scorers (ALCE-compatible recall and "
            "precision for ALCE files) and print the summary; --out writes the tables, "
            "run.json and report.html."
        ),
        epilog=ENVELOPE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("input", metavar="INPUT", help="a JSON or JSON Lines file of answers")
    parser.add_argument(
        "--format",
        dest="answer_format",
        choices=RegisteredNames("citelab.evals", "ANSWER_FORMATS"),
        metavar="FORMAT",
        default="alce",
        help="a registered format (%(choices)s; default: alce) or a module:attr reader",
    )
    parser.add_argument(
        "--judge",
        metavar="NAME|JSON|module:attr",
        help="the support judge: a registered name (citelab judges list), a JSON "
        'configuration ({"name": "llm", "model": ...}) or module:attr (default: citelab\'s '
        "default offline judge, lexical_trained)",
    )
    parser.add_argument(
        "--scorers",
        nargs="+",
        metavar="NAME|JSON",
        help="scorers to run, by name or JSON configuration (default: citation recall and "
        "precision; ALCE files also in ALCE-compatible mode)",
    )
    add_judge_card_argument(parser)
    add_labels_argument(parser)
    add_label_map_argument(parser)
    parser.add_argument("--qampari", action="store_true", help="ALCE's QAMPARI list mode")
    parser.add_argument("--out", metavar="DIR", help="write tables, run.json and report.html")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="multiply values (100 for ALCE's tables)"
    )
    parser.add_argument(
        "--workers", type=int, metavar="N", help="answers scored at once (default: the judge's)"
    )
    parser.add_argument(
        "--processes",
        type=int,
        metavar="N",
        help="processes that score (default: one per CPU for 1,000 answers or more with "
        "citelab's scorers and offline judges; 1: this process only)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from citelab._errors import ConfigError
    from citelab.evals import DEFAULT_JUDGE, score_answers
    from citelab.evals.external import nothing_judged_message, summary_json
    from citelab.evals.labels import parse_label_map

    if args.workers is not None and args.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {args.workers}")
    result = score_answers(
        args.input,
        args.answer_format,
        judge=parse_spec(args.judge, "--judge") if args.judge is not None else DEFAULT_JUDGE,
        scorers=[parse_spec(s, "--scorers") for s in args.scorers] if args.scorers else None,
        out_dir=args.out,
        qampari=True if args.qampari else None,
        workers=args.workers,
        processes=args.processes,
        judge_cards=args.judge_cards,
        allow_in_sample=args.allow_in_sample,
        labels=args.labels,
        label_map=parse_label_map(args.label_map),
    )
    if args.json:
        print(json.dumps(summary_json(result, args.scale), indent=2))
        for judge in result.judges():
            for warning in judge.warnings:
                print(f"WARNING: {warning}", file=sys.stderr)
    else:
        corrected = result.corrected()  # computed once: the table and the judges' lines
        _print_table(summary_json(result, args.scale, corrected=corrected)["metrics"])
        print_judges(result, corrected)
    for note in result.config.get("notes", []):
        print(f"note: {note}", file=sys.stderr)  # what a converter left out, what had no passage
    if args.out:
        print(f"report: {args.out}/report.html", file=sys.stderr)
    nothing = nothing_judged_message(result.config)
    if nothing:
        print(f"citelab score: {nothing}", file=sys.stderr)
        return 2
    return 0


def parse_spec(value: str, option: str) -> str | dict[str, Any]:
    """A name (or module:attr) as is; a JSON object as its configuration."""
    from citelab._errors import ConfigError

    if not value.lstrip().startswith("{"):
        return value
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise ConfigError(f"{option}: not JSON: {exc}") from exc
    if not isinstance(parsed, dict) or "name" not in parsed:
        raise ConfigError(f"{option}: a JSON configuration needs a 'name'")
    return parsed


def _print_table(metrics: dict[str, dict[str, Any]]) -> None:
    """One line per metric: value, interval and answers, or why it has no value."""
    rows = []
    for metric, figures in metrics.items():
        left_out = figures.get("unjudgeable", 0)
        if figures["value"] is None:
            why = f"not judgeable ({left_out} units without passage)" if left_out else "n/a"
            rows.append([metric, why, "", "", "0", ""])
            continue
        if figures["ci_low"] is None:
            cells = [f"{figures['value']:.3f}", "too few", "units"]
        else:
            cells = [f"{figures[key]:.3f}" for key in ("value", "ci_low", "ci_high")]
        rows.append([metric, *cells, str(figures["answers"]), str(left_out or "")])
    head = ["metric", "value", "ci_low", "ci_high", "answers", "not judgeable"]
    widths = [max(len(str(row[i])) for row in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        print("  ".join(str(cell).rjust(width) for cell, width in zip(row, widths, strict=True)))
