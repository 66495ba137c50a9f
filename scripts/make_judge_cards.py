"""Write the judge cards shipped with citelab: one per offline judge not trained on WiCE.

Reads WiCE's **dev** split (oracle chunks; never the test split) from
``../shared/testdata/wice/oracle_claim_dev.jsonl`` (WiCE's annotations are ODC-BY: the card
names its source) and writes ``src/citelab/evals/cards/data/cards/<judge name>.json`` for
each judge, with WiCE's published T5-3B (ANLI) outputs side by side where they are present.
A judge trained on WiCE dev (``lexical_trained``, the default) would be flattered by a card on
the data it was trained on: its card is made from out-of-fold scores instead (each claim scored
by a model trained without it), which ``scripts/train_support_judge.py --oof-scores FILE``
writes; ``--oof-scores FILE`` here turns them into ``lexical_trained.json``.

Usage (from the repository root)::

    .venv/bin/python scripts/make_judge_cards.py [--judges lexical] [--oof-scores OOF.json]

Deterministic: the same data and judges give the same files (but the citelab version).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from citelab.evals.cards import Reference, judge_card
from citelab.evals.cards._shipped import CARDS_DIR
from citelab.evals.judges import DEFAULT_JUDGE, build_judge
from citelab.evals.labels import load_label_set

WICE = Path("../shared/testdata/wice")
UNTRAINED = ("lexical",)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", nargs="+", default=list(UNTRAINED), metavar="NAME")
    parser.add_argument("--data", type=Path, default=WICE, help="WiCE's folder (dev split)")
    parser.add_argument("--out", type=Path, default=CARDS_DIR, help="where the cards go")
    parser.add_argument(
        "--oof-scores",
        type=Path,
        metavar="FILE",
        help="lexical_trained's out-of-fold scores (train_support_judge.py --oof-scores): "
        "also write its card from them",
    )
    args = parser.parse_args(argv)
    labels = args.data / "oracle_claim_dev.jsonl"
    if not labels.is_file():
        print(f"error: {labels} is missing (WiCE's dev oracle chunks)", file=sys.stderr)
        return 2
    references = []
    t5 = args.data / "dev_scores_t5-3b-anli.json"
    if t5.is_file():
        references.append(Reference.load("T5-3B (ANLI), WiCE's published outputs", t5))
    cards = [
        (name, judge_card(labels, name, label_format="wice", references=references), "")
        for name in args.judges
    ]
    if args.oof_scores is not None:
        judge = _OutOfFold(labels, json.loads(args.oof_scores.read_text(encoding="utf-8")))
        card = judge_card(labels, judge, label_format="wice", references=references)
        cards.append((DEFAULT_JUDGE, card, ", out of fold"))
    for name, made, how in cards:
        # Reports name the card by its label set: say which data it is, not just the file.
        named = f"WiCE dev ({made.labels.name}){how}"
        card = made.model_copy(update={"labels": made.labels.model_copy(update={"name": named})})
        path = card.save(args.out / f"{name}.json")
        print(f"{path}: {card.summary()}")
    return 0


class _OutOfFold:
    """The default judge as its cross-validation saw WiCE dev: each claim's out-of-fold score
    and verdict (from a model trained without that claim), under the judge's own name and
    configuration, so that the card describes the shipped judge."""

    def __init__(self, labels: Path, oof: dict[str, Any]) -> None:
        shipped = build_judge(DEFAULT_JUDGE)
        if oof.get("judge") != shipped.name:
            raise SystemExit(f"error: the out-of-fold scores are {oof.get('judge')!r}'s")
        self.name = shipped.name
        self.threshold = getattr(shipped, "threshold", None)
        self._config = shipped.config()
        self._by_claim: dict[str, tuple[float, bool]] = {}
        for pair in load_label_set(labels, "wice").pairs:
            found = (float(oof["scores"][pair.unit]), bool(oof["verdicts"][pair.unit]))
            if self._by_claim.setdefault(pair.claim, found) != found:
                raise SystemExit(f"error: claim {pair.claim!r} has two out-of-fold scores")

    def supports(self, statement: str, evidence: str) -> bool:
        return self._by_claim[statement][1]

    def score(self, statement: str, evidence: str) -> float:
        return self._by_claim[statement][0]

    def config(self) -> dict[str, Any]:
        return self._config


if __name__ == "__main__":
    raise SystemExit(main())
