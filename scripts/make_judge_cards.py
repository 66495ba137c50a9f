"""Write the judge cards shipped with citelab: one per offline judge not trained on WiCE.

Reads WiCE's **dev** split (oracle chunks; never the test split) from
``../shared/testdata/wice/oracle_claim_dev.jsonl`` (WiCE's annotations are ODC-BY: the card
names its source) and writes ``src/citelab/evals/judges/data/cards/<judge name>.json`` for
each judge, with WiCE's published T5-3B (ANLI) outputs side by side where they are present.
Judges trained on WiCE dev (``lexical_trained``) get their out-of-fold card from their own
training script instead, since a card on the data a judge was trained on would flatter it.

Usage (from the repository root)::

    .venv/bin/python scripts/make_judge_cards.py [--judges lexical lexical_pairs]

Deterministic: the same data and judges give the same files (but the citelab version).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from citelab.evals.judges import Reference, judge_card
from citelab.evals.judges._shipped import CARDS_DIR

WICE = Path("../shared/testdata/wice")
UNTRAINED = ("lexical", "lexical_pairs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", nargs="+", default=list(UNTRAINED), metavar="NAME")
    parser.add_argument("--data", type=Path, default=WICE, help="WiCE's folder (dev split)")
    parser.add_argument("--out", type=Path, default=CARDS_DIR, help="where the cards go")
    args = parser.parse_args(argv)
    labels = args.data / "oracle_claim_dev.jsonl"
    if not labels.is_file():
        print(f"error: {labels} is missing (WiCE's dev oracle chunks)", file=sys.stderr)
        return 2
    references = []
    t5 = args.data / "dev_scores_t5-3b-anli.json"
    if t5.is_file():
        references.append(Reference.load("T5-3B (ANLI), WiCE's published outputs", t5))
    for name in args.judges:
        card = judge_card(labels, name, label_format="wice", references=references)
        # Reports name the card by its label set: say which data it is, not just the file.
        source = card.labels.model_copy(update={"name": f"WiCE dev ({card.labels.name})"})
        card = card.model_copy(update={"labels": source})
        path = card.save(args.out / f"{name}.json")
        print(f"{path}: {card.summary()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
