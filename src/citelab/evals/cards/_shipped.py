"""Judge cards shipped with citelab, and which card belongs to which judge.

``scripts/make_judge_cards.py`` writes one card per offline judge into ``data/cards/<judge
name>.json`` (made on WiCE's dev split). A card describes one judge *with its settings*: a
judge built with other settings than the card's (another threshold, another model) has no
shipped card, so it counts as uncalibrated (:func:`card_for`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from citelab.evals.cards._card import JudgeCard
from citelab.evals.judges import Judge, build_judge

__all__ = ["CARDS_DIR", "card_for", "load_cards", "same_judge", "shipped_card", "shipped_cards"]

CARDS_DIR = Path(__file__).parent / "data" / "cards"
"""Where the shipped cards are: ``<judge name>.json``."""


def shipped_cards() -> list[JudgeCard]:
    """Every card shipped with citelab, by file name."""
    return [JudgeCard.load(path) for path in sorted(CARDS_DIR.glob("*.json"))]


def shipped_card(judge: str | Mapping[str, Any] | Judge) -> JudgeCard | None:
    """The shipped card of ``judge`` (a name, a configuration or a judge), or None when
    citelab ships none for that judge with exactly these settings."""
    built = build_judge(judge if isinstance(judge, str | Judge) else dict(judge))
    card = _shipped(built.name)
    return card if card is not None and same_judge(card, built) else None


@lru_cache(maxsize=32)
def _shipped(name: str) -> JudgeCard | None:
    # Cards are frozen and the folder is part of the installed package: read each once.
    path = CARDS_DIR / f"{name}.json"
    return JudgeCard.load(path) if path.is_file() else None


def same_judge(card: JudgeCard, judge: Judge) -> bool:
    """The card is about ``judge``: the same name and configuration."""
    return card.judge.name == judge.name and _plain(card.judge.config) == _plain(judge.config())


def card_for(judge: Judge, cards: Iterable[JudgeCard] = ()) -> tuple[JudgeCard | None, str]:
    """The card that describes ``judge``: one of ``cards`` (given by the user) when one
    matches, else the shipped one; and where it came from (``given``, ``shipped`` or
    ``none``)."""
    for card in cards:
        if same_judge(card, judge):
            return card, "given"
    shipped = shipped_card(judge)
    return (shipped, "shipped") if shipped is not None else (None, "none")


def load_cards(cards: Iterable[str | Path | JudgeCard]) -> list[JudgeCard]:
    """Cards given as files (read with :meth:`JudgeCard.load`) or as cards."""
    return [card if isinstance(card, JudgeCard) else JudgeCard.load(card) for card in cards]


def _plain(config: Mapping[str, Any]) -> dict[str, Any]:
    # 0.75 and 0.750 are one threshold; ints and floats compare equal in Python already.
    return {key: value for key, value in config.items() if value is not None}
