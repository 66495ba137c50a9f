"""The argument groups several commands share, and what they become.

Imports of citelab's heavy parts stay inside the functions that turn arguments into objects,
so building the parser (``citelab --help``) stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citelab.agent import AgentConfig
    from citelab.corpus import Corpus, Reader

__all__ = [
    "EXIT_GATE_FAILED",
    "RegisteredNames",
    "add_address_arguments",
    "add_agents_arguments",
    "add_judge_card_argument",
    "add_label_map_argument",
    "add_labels_argument",
    "add_model_arguments",
    "add_reader_arguments",
    "agents_and_corpora",
    "agents_from",
    "default_agent",
    "print_descriptions",
    "print_gates",
    "print_json",
    "print_judges",
    "reader_from",
    "table_records",
    "warn_if_reachable",
]

EXIT_GATE_FAILED = 3
"""``citelab eval`` and ``citelab compare``: a gate did not pass (failed, or could not be
tested); distinct from 1 (turns failed) and 2 (bad input or configuration)."""
_MARKS = {"holds": "✔", "fails": "✘", "untestable": "○", "uninformative": "≡"}
"""✔ passed (as predicted), ✘ failed, ○ not testable here, ≡ not informative (identical
answers compared)."""


def gate_fails(gate: dict[str, Any]) -> bool:
    """Whether a checked gate (as ``run.json`` holds it) fails the command."""
    return bool(gate.get("fails_run", gate.get("passed") is not True))


def gates_line(gates: list[dict[str, Any]]) -> str:
    """How the gates came out in one line: "N passed, M not informative", and how many
    failed the run."""
    passed = sum(gate.get("passed") is True for gate in gates)
    parts = [f"{passed} passed"]
    uninformative = sum(gate.get("verdict") == "uninformative" for gate in gates)
    if uninformative:
        parts.append(f"{uninformative} not informative")
    failed = sum(gate_fails(gate) for gate in gates)
    if failed:
        parts.append(f"{failed} of {len(gates)} FAILED the run")
    return ", ".join(parts)


def print_gates(gates: list[dict[str, Any]]) -> bool:
    """The gates as checked (``run.json``'s or ``compare.json``'s ``gates``): a line with
    how many passed, then each with its figures; whether none fails the run."""
    if not gates:
        return True
    print(f"gates: {gates_line(gates)}")
    for gate in gates:
        print(f"{_MARKS[gate['verdict']]} gate: {gate['name']}\n    {gate['sentence']}")
    return not any(gate_fails(gate) for gate in gates)


def table_records(frame: Any) -> list[dict[str, Any]]:
    """A table's rows for JSON: missing values (NaN) as null, numpy numbers as Python's."""
    import json

    return list(json.loads(frame.to_json(orient="records", double_precision=6)))


def print_json(facts: dict[str, Any]) -> None:
    """``--json``: the command's facts as one JSON document on stdout."""
    import json

    print(json.dumps(facts, indent=2, ensure_ascii=False, default=str))


class RegisteredNames:
    """An option's choices: the names in the registry ``attr`` of ``module`` (``citelab list
    KIND``), or a ``module:attr`` to import. The registry is imported only when argparse reads
    the choices (a value given, ``--help``), so other commands do not import it."""

    def __init__(self, module: str, attr: str) -> None:
        self.module = module
        self.attr = attr

    def _registry(self) -> Any:
        return getattr(importlib.import_module(self.module), self.attr)

    def __contains__(self, name: object) -> bool:
        return name in self._registry()

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry().names())


def add_agents_arguments(parser: argparse.ArgumentParser) -> None:
    """``--agents FILE`` and ``--db PATH`` (``--agent`` means something else per command)."""
    parser.add_argument("--agents", metavar="FILE", help="agent configuration (TOML or YAML)")
    parser.add_argument("--db", metavar="PATH", help="SQLite file for conversations and logs")


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """``--model SPEC``, ``--model-options JSON`` and ``--corpus PATH``: what every agent
    answers with, overriding the agents file."""
    parser.add_argument(
        "--model",
        metavar="SPEC",
        help="the model every agent uses: extractive, openai:<model>, anthropic:<model>, … "
        "(endpoints from OPENAI_BASE_URL / ANTHROPIC_BASE_URL and their API keys)",
    )
    parser.add_argument(
        "--model-options",
        metavar="JSON",
        help='options for --model as a JSON object, e.g. \'{"base_url": "http://127.0.0.1:8008/v1"}\'',
    )
    parser.add_argument(
        "--corpus",
        metavar="PATH",
        help="answer from this corpus: a JSONL file, or a folder of Markdown, text, HTML "
        "and PDF files (imported on the fly, cached by content); without --agents, one agent "
        "named after the corpus answers (instead of the bundled demo agents), with starter "
        "questions drawn from it; with --agents, every agent of the file uses it",
    )


def agents_from(args: argparse.Namespace) -> dict[str, AgentConfig]:
    """The agents of ``--agents`` (or citelab's bundled agents), with ``--model`` and
    ``--corpus`` applied when the command has them. With ``--corpus`` and no ``--agents``, the
    one agent for that corpus (:func:`citelab.agent.corpus_agent`) replaces the bundled demo
    agents, whose prompts and starter questions are about the demo corpora."""
    return agents_and_corpora(args)[0]


def agents_and_corpora(
    args: argparse.Namespace,
) -> tuple[dict[str, AgentConfig], dict[str, Corpus]]:
    """:func:`agents_from`, and the corpora it loaded on the way (by the name the agents
    use), for the answer service, so that a corpus is not read twice."""
    from citelab.agent import (
        corpus_agent,
        default_agents,
        load_agent_corpus,
        load_agents,
        override_agents,
    )

    model = getattr(args, "model", None)
    corpus = getattr(args, "corpus", None)
    raw_options = getattr(args, "model_options", None)
    options = _json_object(raw_options, "--model-options")
    if raw_options is not None and model is None:
        from citelab._errors import ConfigError

        raise ConfigError("--model-options: give --model too (options belong to one model)")
    if corpus is not None and not args.agents:
        loaded = load_agent_corpus(corpus)
        agent = corpus_agent(corpus, loaded=loaded, model=model, model_options=options)
        return {agent.name: agent}, {agent.corpus: loaded}
    agents = load_agents(args.agents) if args.agents else default_agents()
    if model is None and corpus is None:
        return agents, {}
    return override_agents(agents, model=model, model_options=options, corpus=corpus), {}


def _json_object(text: str | None, option: str) -> dict[str, Any]:
    import json

    from citelab._errors import ConfigError

    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{option}: not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{option}: must be a JSON object, got {text!r}")
    return value


def default_agent(chosen: str | None, agents: Mapping[str, Any]) -> str:
    """The agent ``chosen``, else ``default`` when configured, else the file's first agent."""
    if chosen:
        return chosen
    return "default" if "default" in agents else next(iter(agents))


def add_reader_arguments(parser: argparse.ArgumentParser) -> None:
    """``--user``, ``--role`` (repeatable) and ``--lang``: the reader a command acts as."""
    parser.add_argument("--user", metavar="ID", help="act as this user (default: anonymous)")
    parser.add_argument(
        "--role", action="append", default=[], metavar="ROLE", help="a role of the user"
    )
    parser.add_argument("--lang", default="en", help="the reader's language (default: en)")


def reader_from(args: argparse.Namespace) -> Reader:
    """The reader ``--user``, ``--role`` and ``--lang`` describe."""
    from citelab.corpus import Reader

    return Reader(user_id=args.user, roles=frozenset(args.role), langcode=args.lang)


def add_address_arguments(parser: argparse.ArgumentParser, port: int) -> None:
    """``--host`` (loopback by default) and ``--port`` (0 picks a free one)."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument(
        "--port", type=int, default=port, help=f"port (default: {port}; 0 picks a free one)"
    )


def warn_if_reachable(command: str, host: str, why: str = "") -> bool:
    """Warn on stderr when ``host`` is not loopback; returns whether it is loopback."""
    from citelab._net import is_loopback

    if is_loopback(host):
        return True
    warning = f"citelab {command}: warning: {host} is reachable from other machines"
    print(warning + (f"; {why}" if why else ""), file=sys.stderr)
    return False


def print_descriptions(described: Mapping[str, str]) -> None:
    """Registered names with their descriptions (a registry's ``describe()``), one a line, the
    descriptions aligned after the names."""
    width = max((len(name) for name in described), default=0)
    for name, description in described.items():
        print(f"{name:<{width}}  {description}".rstrip())


def add_judge_card_argument(parser: argparse.ArgumentParser) -> None:
    """``--judge-card FILE`` (repeatable): the user's own cards for the run's judges."""
    parser.add_argument(
        "--judge-card",
        dest="judge_cards",
        action="append",
        default=[],
        metavar="FILE",
        help="a judge card (citelab judges card --out) describing a judge of the run; its "
        "sensitivity and specificity correct the judged metrics (repeatable; default: "
        "citelab's shipped card of the judge, if any)",
    )
    parser.add_argument(
        "--allow-in-sample",
        action="store_true",
        help="accept a --judge-card made on labels its judge was trained on (refused "
        "otherwise: its figures flatter the judge; the run's outputs still say so)",
    )


def add_label_map_argument(parser: argparse.ArgumentParser) -> None:
    """``--label-map SPELLING=GRADE,...`` (repeatable) for every command that reads labels;
    read with :func:`citelab.evals.labels.parse_label_map`."""
    parser.add_argument(
        "--label-map",
        action="append",
        default=[],
        metavar="SPELLING=GRADE,...",
        help="read the file's own label spellings as grades (supported, partially_supported, "
        "not_supported or skip), e.g. 'attributable=supported,not attributable=not_supported' "
        "(repeatable)",
    )


def add_labels_argument(parser: argparse.ArgumentParser) -> None:
    """``--labels FILE``: people's labels of the run's own units (pair ids)."""
    parser.add_argument(
        "--labels",
        metavar="FILE",
        default=None,
        help="a labels file whose ids are this run's pair ids (citelab's Labeller, or any "
        "labels file keyed by label_pairs' ids): citation recall and precision are also "
        "estimated from the labels with the judge (method ppi) and from the labels alone",
    )


def print_label_estimates(table: Any) -> None:
    """The ``ppi`` and ``labels`` rows of :meth:`EvalResult.corrected`, when there are any."""
    if table.empty or "method" not in table:
        return
    rows = table[table["method"].isin(["ppi", "labels"])]
    if rows.empty:
        return
    print("estimated from this run's labels (ppi: labels and judge; labels: alone):")
    columns = ["variant", "model", "metric", "method", "labels", "value", "ci_low", "ci_high",
               "width", "note"]  # fmt: skip
    print(rows[columns].round(3).astype(object).fillna("").to_string(index=False))


def print_judges(result: Any, corrected: Any = None) -> None:
    """Under a summary: each judged metric's judge, card and κ (stdout); the corrected
    values (stdout); the warnings, loudly (stderr)."""
    judges = result.judges()
    for judge in judges:
        kappa = "no card: uncalibrated"
        if judge.card is not None:
            value = "undefined" if judge.kappa is None else f"{judge.kappa:.2f}"
            low, high = judge.kappa_low, judge.kappa_high
            interval = "" if low is None else f" [{low:.2f}, {high:.2f}]"
            kappa = f"κ {value}{interval} on card: {judge.card}"
        weak = f"; weak: {', '.join(judge.weak_categories)}" if judge.weak_categories else ""
        print(f"{judge.metric}: judged by {judge.judge} ({kappa}{weak})")
    from citelab.evals.results import card_view

    estimates = corrected if corrected is not None else result.corrected()
    table = card_view(estimates)
    if not table.empty and table["corrected"].notna().any():
        print("corrected for the judge's error (Rogan–Gladen; docs/corrected-metrics.md):")
        columns = ["variant", "model", "metric", "value", "corrected", "corrected_low",
                   "corrected_high"]  # fmt: skip
        shown = table[columns].rename(columns={"value": "judged"}).round(3).astype(object)
        # A clipped correction is no figure: the card does not fit these answers.
        clipped = table["clipped"].fillna(False).astype(bool)
        shown.loc[clipped, ["corrected", "corrected_low", "corrected_high"]] = "—"
        print(shown.to_string(index=False))
        if clipped.any():
            print(
                f"{int(clipped.sum())} of {len(table)} corrections: — the card does not fit "
                "these answers (clipped); label 100 of this run's pairs (citelab.Labeller) "
                "and pass the file with --labels: the estimate from your labels and the "
                "judge together (method ppi)"
            )
    print_label_estimates(estimates)
    for warning in dict.fromkeys(w for judge in judges for w in judge.warnings):
        print(f"WARNING: {warning}", file=sys.stderr)
