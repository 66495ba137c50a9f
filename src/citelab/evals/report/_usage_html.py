"""The report's "Tokens and cost" section: what each variant and model read and wrote, and
what it cost where the run was given a price (:meth:`EvalResult.usage`)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping

import pandas as pd

from citelab.evals.report._html import escape
from citelab.evals.report._html import table as html_table
from citelab.evals.results import EvalResult

__all__ = ["usage_html"]


def usage_html(result: EvalResult) -> str:
    """The section (heading included), or ``""`` when the run recorded no tokens (a run
    written before citelab counted them, answers ``citelab score`` read)."""
    table = result.usage()
    if table.empty:
        return ""
    rows = [_row(row) for row in table.to_dict("records")]
    return (
        '<section class="citelab-usage"><h2>Tokens and cost</h2>'
        f'<p class="muted">{escape(_note(table))}</p>'
        f"{html_table(_HEADERS, rows)}</section>"
    )


_HEADERS = (
    "variant",
    "model",
    "turns",
    "input tokens",
    "output tokens",
    "tokens per turn",
    "price (US$ per M in / out)",
    "cost (US$)",
    "per turn",
)


def _note(table: pd.DataFrame) -> str:
    parts = ["Tokens of every model call of the turns, as the models' APIs reported them."]
    if table["estimated"].any():
        parts.append(
            "* estimated by citelab (words and punctuation counted): the model reported none."
        )
    if table["cost_usd"].isna().all():
        parts.append(
            "No price was given: add a suite's [prices] table or citelab eval --price "
            "MODEL=INPUT,OUTPUT (US$ per million tokens) for the cost."
        )
    else:
        parts.append("Costs from the prices the run was given (US$ per million tokens).")
    return " ".join(parts)


def _row(row: Mapping[Hashable, object]) -> list[str]:
    mark = " *" if row["estimated"] else ""
    price = (
        f"{_number(row['price_input'])} / {_number(row['price_output'])}"
        if _known(row["price_input"])
        else "—"
    )
    cells = [
        str(row["variant"]),
        str(row["model"]),
        f"{int(str(row['turns']))}",
        f"{int(str(row['input_tokens'])):,}{mark}",
        f"{int(str(row['output_tokens'])):,}{mark}",
        f"{float(str(row['tokens_per_turn'])):,.0f}",
        price,
        _money(row["cost_usd"]),
        _money(row["cost_per_turn_usd"]),
    ]
    return cells


def _known(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _number(value: object) -> str:
    return f"{float(str(value)):g}"


def _money(value: object) -> str:
    return f"{float(str(value)):.4f}" if _known(value) else "—"
