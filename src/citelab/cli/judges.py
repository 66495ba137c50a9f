"""``citelab judges``: list the support judges, and measure them against people's labels.

``citelab judges card LABELS --judge lexical_trained --reference T5=scores.json --out cards/`` makes
a judge card per judge (accuracy, macro-F1, κ, AUC, confusion, sensitivity and specificity
with bootstrap intervals over claims, a threshold sweep, categories, reference judges'
published outputs side by side) and prints it; ``--out`` writes each as JSON and HTML.
``citelab judges calibrate [LABELS]`` prints the same figures as one table for several judges
(the default judge, ``lexical_trained``, and ``lexical`` by default), beside ALCE's published
agreement.

LABELS is citelab's own set when not given (written and labelled by citelab's developers),
WiCE's claim or oracle-chunk files, ALCE's human-eval citation file, or JSON Lines / CSV with
named columns; how its labels were read (three-way labels → "fully supported") is printed
with every run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citelab.cli._common import add_label_map_argument

if TYPE_CHECKING:
    from citelab.evals.cards import JudgeCard, Reference
    from citelab.evals.labels import LabelSet

__all__ = ["register"]

_FORMATS = ["auto", "jsonl", "csv", "wice", "alce"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "judges",
        help="list support judges, or measure them against people's labels",
        description="Support judges: list them, or measure them against people's labels.",
    )
    commands = parser.add_subparsers(dest="judges_command", metavar="ACTION", required=True)
    listing = commands.add_parser("list", help="the registered judges, with what each does")
    listing.set_defaults(func=_list)
    _card_parser(commands)
    _calibrate_parser(commands)


def _card_parser(commands: Any) -> None:
    card = commands.add_parser(
        "card",
        help="a judge card: how far a judge agrees with people's labels",
        description=(
            "Ask the judge every labelled pair of LABELS and show its agreement with the "
            "labels on claims: accuracy, macro-F1, Cohen's kappa, AUC (when the judge gives a "
            "score), the confusion matrix, sensitivity, specificity, says-yes, PPV and NPV "
            "with 95% bootstrap intervals over claims; the threshold sweep; figures per "
            "category; reference judges' published outputs side by side on the claims they "
            "cover; ALCE's published agreement."
        ),
    )
    _label_arguments(card)
    card.add_argument(
        "--judge",
        action="append",
        metavar="NAME|JSON|module:attr",
        help="the judge (repeatable: a card each; default: the default judge, "
        "lexical_trained, as eval and score use)",
    )
    card.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a reference judge's published outputs, a JSON object {claim id: score} (e.g. "
        "WiCE's dev_scores_t5-3b-anli.json) or {claim id: true/false} (repeatable)",
    )
    card.add_argument(
        "--reference-threshold",
        action="append",
        default=[],
        metavar="NAME=T",
        help="a reference says yes at score >= T (default 0.5)",
    )
    card.add_argument("--out", metavar="DIR", help="write each card as JSON and HTML here")
    card.set_defaults(func=_card)


def _calibrate_parser(commands: Any) -> None:
    calibrate = commands.add_parser(
        "calibrate",
        help="accuracy, macro-F1 and Cohen's kappa of judges on people's support labels",
        description=(
            "Ask each judge every labelled pair of LABELS and print accuracy, macro-F1, "
            "Cohen's kappa and AUC on claims with 95% bootstrap intervals, beside ALCE's "
            "published agreement (the table view of `citelab judges card`)."
        ),
    )
    _label_arguments(calibrate)
    calibrate.add_argument(
        "--judge",
        action="append",
        metavar="NAME|JSON|module:attr",
        help="a judge to check (repeatable; default: the default judge and lexical)",
    )
    calibrate.add_argument("--by-category", action="store_true", help="add accuracy per category")
    calibrate.set_defaults(func=_calibrate)


def _label_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "labels",
        nargs="?",
        metavar="LABELS",
        help="a labels file (default: citelab's own set, written and labelled by its developers)",
    )
    parser.add_argument(
        "--format",
        dest="label_format",
        choices=_FORMATS,
        default="auto",
        help="how LABELS is written: jsonl or csv (named columns), wice (claim or oracle-chunk "
        "files, told apart by their rows), alce (ALCE's human-eval citations); auto: .json is "
        "ALCE's, .csv/.tsv CSV, WiCE's rows are WiCE's, else jsonl",
    )
    parser.add_argument(
        "--partial-as",
        choices=["no", "yes", "skip"],
        default="no",
        help="what a partially_supported label counts as (default: no; the question is "
        '"fully supported?")',
    )
    for role, default in (("claim", "claim"), ("evidence", "evidence"), ("label", "label"),
                          ("id", "id"), ("category", "category")):  # fmt: skip
        parser.add_argument(
            f"--{role}-column",
            default=default,
            metavar="NAME",
            help=f"the column (CSV) or field (JSON Lines; a dotted path) of the {role} "
            f"(default: {default})",
        )
    add_label_map_argument(parser)
    parser.add_argument("--seed", type=int, default=0, help="of the bootstrap (default: 0)")
    parser.add_argument(
        "--resamples", type=int, default=1000, help="bootstrap resamples (default: 1000)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def _list(args: argparse.Namespace) -> int:
    from citelab.cli._common import print_descriptions
    from citelab.evals import JUDGES

    print_descriptions(JUDGES.describe())
    return 0


def _label_set(args: argparse.Namespace) -> LabelSet:
    from citelab.evals.labels import LabelColumns, load_label_set, parse_label_map

    columns = LabelColumns(
        claim=args.claim_column,
        evidence=args.evidence_column,
        label=args.label_column,
        id=args.id_column,
        category=args.category_column,
    )
    return load_label_set(
        args.labels,
        args.label_format,
        partial_as=args.partial_as,
        columns=columns,
        label_map=parse_label_map(args.label_map),
    )


def _judges(args: argparse.Namespace, default: list[str]) -> list[Any]:
    from citelab.cli.score import parse_spec

    return [parse_spec(j, "--judge") for j in args.judge] if args.judge else list(default)


def _labels_header(label_set: LabelSet) -> list[str]:
    source = label_set.source
    lines = [
        f"labels: {source.name}, read as {source.format} ({source.description}): "
        f"{source.pairs} pairs, {source.claims} claims",
        f"label mapping: {source.mapping_text()}",
    ]
    if source.provenance:
        lines.append(f"labelled by: {source.provenance}")
    return lines


# --- card ------------------------------------------------------------------------------------


def _card(args: argparse.Namespace) -> int:
    from citelab.evals.cards import DEFAULT_CARD_JUDGE, judge_card

    label_set = _label_set(args)
    references = _references(args.reference, args.reference_threshold)
    cards = [
        judge_card(label_set, spec, references=references, seed=args.seed,
                   resamples=args.resamples)
        for spec in _judges(args, [DEFAULT_CARD_JUDGE])
    ]  # fmt: skip
    written = _write_cards(cards, Path(args.out)) if args.out else []
    if args.json:
        payload = {
            "labels": label_set.source.model_dump(mode="json"),
            "cards": [card.model_dump(mode="json") for card in cards],
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        print("\n".join(_labels_header(label_set)))
        for card in cards:
            print()
            print(_card_text(card))
    sys.stdout.flush()
    for path in written:
        print(f"card: {path}", file=sys.stderr)
    return 0


def _references(given: list[str], thresholds: list[str]) -> list[Reference]:
    from citelab._errors import ConfigError
    from citelab.evals.cards import Reference

    named = dict(_pair(text, "--reference") for text in given)
    limits: dict[str, float] = {}
    for text in thresholds:
        name, value = _pair(text, "--reference-threshold")
        if name not in named:
            raise ConfigError(f"--reference-threshold {text}: no --reference named {name!r}")
        try:
            limits[name] = float(value)
        except ValueError as exc:
            raise ConfigError(f"--reference-threshold {text}: {value!r} is not a number") from exc
    return [Reference.load(name, path, limits.get(name, 0.5)) for name, path in named.items()]


def _pair(text: str, option: str) -> tuple[str, str]:
    from citelab._errors import ConfigError

    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise ConfigError(f"{option} {text!r}: write it as NAME=VALUE")
    return name.strip(), value.strip()


def _write_cards(cards: list[JudgeCard], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    used: set[str] = set()
    for card in cards:
        stem = _slug(card.judge.label, used)
        written.append(card.save(out / f"{stem}.card.json"))
        page = out / f"{stem}.card.html"
        page.write_text(card.to_html(), encoding="utf-8")
        written.append(page)
    return written


def _slug(label: str, used: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-.") or "judge"
    stem, number = base, 2
    while stem in used:
        stem, number = f"{base}-{number}", number + 1
    used.add(stem)
    return stem


def _card_text(card: JudgeCard) -> str:
    score = f"; score: its {card.judge.score}" if card.judge.score else "; verdicts only"
    lines = [
        f"judge: {card.judge.label}{score}",
        card.summary(),
        _figures_text(card),
        _confusion_text(card),
    ]
    sweep = card.threshold
    if sweep is not None:
        best = sweep.best
        own = "none" if sweep.operating is None else f"{sweep.operating:g}"
        kappa = "—" if best.kappa is None else f"{best.kappa:.3f}"
        lines.append(
            f"threshold: its own {own}; κ-best on these labels {best.threshold:.3g} "
            f"(κ {kappa}, says yes {best.says_yes:.3f}; chosen on these labels, so optimistic)"
        )
    if card.categories:
        lines += ["", "by category:", card.categories_table().round(3).to_string(index=False)]
        lines.append(f"weak categories: {', '.join(card.weak_categories) or 'none'}")
    if card.grades:
        shown = " · ".join(
            f"{g.grade} {g.says_yes.value:.3f} ({g.says_yes.count} of {g.claims})"
            for g in card.grades
            if g.says_yes.value is not None
        )
        lines.append(f"says yes, by the label as written: {shown}")
    if card.references:
        table = card.comparison_table().round(3)
        lines += ["", "reference judges (published outputs), each beside this judge on the "
                  "claims it covers:", table.to_string(index=False)]  # fmt: skip
        for reference in card.references:
            diff = reference.kappa_difference
            interval = "" if diff.low is None else f" [{diff.low:.3f}, {diff.high:.3f}]"
            lines.append(
                f"κ difference ({card.judge.name} − {reference.name}, paired): "
                f"{_three(diff.value)}{interval}"
            )
    published = "; ".join(f"{p.judge}: accuracy {p.accuracy}, κ {p.kappa}" for p in card.published)
    lines += ["", f"published elsewhere (ALCE's data, not this set): {published}", "notes:"]
    lines += [f"  - {note}" for note in card.notes]
    return "\n".join(lines)


_FIGURES = ("accuracy", "macro_f1", "kappa", "auc", "sensitivity", "specificity", "says_yes",
            "ppv", "npv")  # fmt: skip


def _figures_text(card: JudgeCard) -> str:
    lines = [f"{'figure':<12} {'value':>6}  {'95% interval':<16}  counts"]
    for name in _FIGURES:
        estimate = getattr(card.metrics, name)
        if estimate is None:
            continue
        interval = estimate.interval_text(card.metrics.claims)
        count = getattr(estimate, "count", None)
        counts = "" if count is None else f"{count} of {estimate.of}"
        lines.append(f"{name:<12} {_three(estimate.value):>6}  {interval:<16}  {counts}")
    return "\n".join(lines)


def _three(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _confusion_text(card: JudgeCard) -> str:
    c = card.metrics.confusion
    width = max(len(str(n)) for n in (c.true_yes, c.false_no, c.false_yes, c.true_no)) + 2
    return (
        f"confusion (claims)     {'judge yes':>{width + 7}} {'judge no':>{width + 6}}\n"
        f"people: supported      {c.true_yes:>{width + 7}} {c.false_no:>{width + 6}}\n"
        f"people: not supported  {c.false_yes:>{width + 7}} {c.true_no:>{width + 6}}"
    )


# --- calibrate -------------------------------------------------------------------------------


def _calibrate(args: argparse.Namespace) -> int:
    from citelab.evals.cards import calibration_table, category_accuracy, judge_card
    from citelab.evals.cards import metrics_row as row_of
    from citelab.evals.judges import DEFAULT_JUDGE

    label_set = _label_set(args)
    cards = [
        judge_card(label_set, spec, seed=args.seed, resamples=args.resamples)
        for spec in _judges(args, [DEFAULT_JUDGE, "lexical"])
    ]
    rows = [row_of(card) for card in cards]
    if args.json:
        payload: dict[str, Any] = {
            "labels": label_set.source.model_dump(mode="json"),
            "judges": rows,
            "alce_published": [p.model_dump(mode="json") for p in cards[0].published],
        }
        if args.by_category:
            payload["by_category"] = json.loads(category_accuracy(cards).to_json())
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    table = calibration_table(cards)
    print("\n".join(_labels_header(label_set)))
    shown = ["judge", "pairs", "claims", "accuracy", "accuracy_low", "accuracy_high", "macro_f1",
             "kappa", "kappa_low", "kappa_high", "auc", "source"]  # fmt: skip
    print(table[shown].round(3).to_string(index=False))
    if args.by_category:
        print()
        print(category_accuracy(cards).round(3).to_string())
    return 0
