"""One colour per variant, in the order variants were run: the report's tables, every plot
and the case browser give a variant the same one."""

from __future__ import annotations

from collections.abc import Sequence

from citelab.evals.results import EvalResult

__all__ = ["PALETTE", "variant_colors", "variant_order"]

PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
"""One colour per variant, in the order variants were run: the tables, every plot and the
case browser use the same one."""


def variant_colors(variants: Sequence[str]) -> dict[str, str]:
    """Variant → its colour (the palette repeats after ten variants)."""
    return {name: PALETTE[index % len(PALETTE)] for index, name in enumerate(variants)}


def variant_order(result: EvalResult) -> list[str]:
    """The variants in the order they were run (the configuration's, else the turns')."""
    configured = list((result.config.get("variants") or {}).keys())
    seen = list(dict.fromkeys(result.turns["variant"])) if not result.turns.empty else []
    return [*configured, *(v for v in seen if v not in configured)]
