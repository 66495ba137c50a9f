"""``citelab list KIND``: what is registered of one kind, each with its description.

Every kind is one :class:`citelab.Registry`; a name listed here is what a suite, an agents
file or a command-line option may name (besides a ``module:attr`` to import):

``models`` (``--model``, an agent's ``model``), ``rerankers`` (an agent's retrieval
``reranker``), ``templates`` (an agent's ``contract_template``), ``judges`` (``--judge``, a
suite's ``judge``), ``scorers`` (``--scorers``, a suite's ``scorers``), ``formats``
(``citelab score --format``) and ``executors`` (``citelab eval --executor``).
"""

from __future__ import annotations

import argparse
import importlib
import json
from typing import Any

__all__ = ["KINDS", "register", "run"]

KINDS: dict[str, tuple[str, str]] = {
    "executors": ("citelab.evals.execution", "EXECUTORS"),
    "formats": ("citelab.evals", "ANSWER_FORMATS"),
    "judges": ("citelab.evals", "JUDGES"),
    "models": ("citelab.models", "MODELS"),
    "rerankers": ("citelab.sources", "RERANKERS"),
    "scorers": ("citelab.evals", "SCORERS"),
    "templates": ("citelab.agent", "TEMPLATES"),
}
"""Each kind's registry: the package that holds it and its name there."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "list",
        help="what is registered: models, judges, scorers, formats, templates, rerankers, "
        "executors",
        description=(
            "List the registered names of one kind, each with its description: what a "
            "suite, an agents file or an option may name."
        ),
    )
    parser.add_argument("kind", choices=list(KINDS), metavar="KIND", help=", ".join(KINDS))
    parser.add_argument("--json", action="store_true", help="print {name: description} as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from citelab.cli._common import print_descriptions

    module, name = KINDS[args.kind]
    described = getattr(importlib.import_module(module), name).describe()
    if args.json:
        print(json.dumps(described, indent=2, ensure_ascii=False))
    else:
        print_descriptions(described)
    return 0
