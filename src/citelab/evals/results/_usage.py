"""Tokens and cost of a run: what each turn read and wrote, summed per variant and model, and
priced where the user gave a price.

Every round record carries its call's tokens (as the model's API reported them in ``usage``,
else estimated by citelab and said so). Prices are the user's: a suite's ``[prices]`` table or
``citelab eval --price``, in US dollars per million input and output tokens, keyed by the
model's name in the results. citelab ships no vendor prices: they change, and a figure that
looks exact but is stale misleads more than none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from citelab._errors import ConfigError

__all__ = ["TOKEN_FACTS", "ModelPrice", "parse_price", "run_prices", "usage_table", "with_costs"]

TOKEN_FACTS = ["input_tokens", "output_tokens", "tokens_estimated"]
"""The turn table's token columns (see :class:`~citelab.evals.records.TurnRecord`)."""


class ModelPrice(BaseModel):
    """What a model's tokens cost, in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    """Per million input (prompt) tokens."""
    output: float = Field(ge=0)
    """Per million output (completion) tokens."""

    def cost(self, input_tokens: float, output_tokens: float) -> float:
        """The price of that many tokens, in US dollars."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


def parse_price(text: str) -> tuple[str, ModelPrice]:
    """``MODEL=INPUT,OUTPUT`` (dollars per million tokens) read, or a clear ``ConfigError``."""
    model, equals, numbers = text.rpartition("=")
    parts = numbers.split(",")
    try:
        price = ModelPrice(input=float(parts[0]), output=float(parts[1]))
        valid = bool(equals and model.strip()) and len(parts) == 2
    except (ValueError, IndexError):
        valid = False
    if not valid:
        raise ConfigError(
            f"--price {text!r}: write MODEL=INPUT,OUTPUT in US dollars per million tokens "
            "(0 or more), e.g. openai:gpt-4o-mini=0.15,0.60"
        )
    return model.strip(), price


def run_prices(config: Mapping[str, Any]) -> dict[str, ModelPrice]:
    """The prices a run was given (``run.json``): the suite's, then those of the command line,
    which win."""
    suite = config.get("suite") or {}
    given = {**(suite.get("prices") or {}), **(config.get("prices") or {})}
    return {str(model): ModelPrice.model_validate(price) for model, price in given.items()}


def with_costs(turns: pd.DataFrame, prices: Mapping[str, ModelPrice]) -> pd.DataFrame:
    """``turns`` with a ``cost_usd`` column (empty for models without a price), when any of
    its models has one; else unchanged."""
    if not prices or "input_tokens" not in turns or not turns["model"].isin(prices).any():
        return turns
    costs = [
        prices[model].cost(i, o) if model in prices else _NONE
        for model, i, o in zip(
            turns["model"], turns["input_tokens"], turns["output_tokens"], strict=True
        )
    ]
    return turns.assign(cost_usd=costs)


_USAGE_COLUMNS = [
    "variant",
    "model",
    "turns",
    "rounds",
    "input_tokens",
    "output_tokens",
    "tokens_per_turn",
    "estimated",
    "price_input",
    "price_output",
    "cost_usd",
    "cost_per_turn_usd",
]


def usage_table(turns: pd.DataFrame, prices: Mapping[str, ModelPrice]) -> pd.DataFrame:
    """Per variant and model: turns, rounds, input and output tokens (and per turn), whether
    any were estimated, and the cost where the model has a price (else empty). No rows when
    no token was recorded (answers ``citelab score`` read, runs written before citelab
    counted tokens)."""
    if turns.empty or "input_tokens" not in turns:
        return pd.DataFrame(columns=_USAGE_COLUMNS)
    if not (turns["input_tokens"].sum() or turns["output_tokens"].sum()):
        return pd.DataFrame(columns=_USAGE_COLUMNS)
    grouped = turns.groupby(["variant", "model"], sort=False)
    table = grouped.agg(
        turns=("turn", "size"),
        rounds=("rounds", "sum"),
        input_tokens=("input_tokens", "sum"),
        output_tokens=("output_tokens", "sum"),
        estimated=("tokens_estimated", lambda flags: bool(flags.eq(True).any())),
    ).reset_index()
    table["tokens_per_turn"] = (table["input_tokens"] + table["output_tokens"]) / table["turns"]
    price = [prices.get(str(model)) for model in table["model"]]
    table["price_input"] = [p.input if p else _NONE for p in price]
    table["price_output"] = [p.output if p else _NONE for p in price]
    table["cost_usd"] = [
        p.cost(i, o) if p else _NONE
        for p, i, o in zip(price, table["input_tokens"], table["output_tokens"], strict=True)
    ]
    table["cost_per_turn_usd"] = table["cost_usd"] / table["turns"]
    return table[_USAGE_COLUMNS]


_NONE = float("nan")
"""No price, no cost (an empty cell in the CSV, null in JSON)."""
