"""The trained support judge (``lexical_trained``) beside ``LexicalJudge``, in one run.

1. Judge calls alone, per second, on three call mixes, first with every cache of both judges
   cleared (cold: each passage and statement read for the first time) and then again (warm):
   (a) the calls ``citelab score`` makes on generated ALCE answers (recorded while scoring
   ``--examples`` of :mod:`bench_score`'s examples with ``LexicalJudge``: recall asks about the
   joined cited passages, precision about each passage and the rest); (b) WiCE dev, every
   claim against each of its oracle chunks (when ``../shared/testdata/wice/`` is there);
   (c) the fixture corpora (en/de/fr): each sentence of a passage against the passage, and
   against it joined with the next two.
2. ``score_answers`` on the ``--examples`` generated answers with each judge, in this
   process (``processes=1`` for both: the trained judge is not one that forks by default), the
   two taking turns ``--rounds`` times with caches cleared before each; the median seconds.

Run: ``.venv/bin/python benchmarks/bench_support_judge.py [--quick]`` (under ``flock
/tmp/heavy.lock`` on a shared machine). The ratios are what to read: trained / lexical.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench_score import _write
from citelab.evals import LexicalJudge, score_answers
from citelab.evals.judges import _judges as lexical_module
from citelab.evals.judges import _support_model as trained_module
from citelab.evals.judges._support_model import TrainedLexicalJudge

ROOT = Path(__file__).resolve().parents[1]
WICE = ROOT.parent / "shared" / "testdata" / "wice" / "oracle_claim_dev.jsonl"
CORPORA = ROOT / "fixtures" / "corpora"

Pair = tuple[str, str]


def clear_caches() -> None:
    for function in (lexical_module._content_terms, lexical_module._evidence_terms):
        function.cache_clear()
    for cached in (
        trained_module._key,
        trained_module._line,
        trained_module._passage,
        trained_module._statement,
        trained_module._token,
    ):
        cached.cache_clear()


class Recorder:
    """``LexicalJudge``, writing down every question it is asked."""

    name = "lexical"

    def __init__(self) -> None:
        self.judge = LexicalJudge()
        self.calls: list[Pair] = []

    def supports(self, statement: str, evidence: str) -> bool:
        self.calls.append((statement, evidence))
        return self.judge.supports(statement, evidence)

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def score_calls(path: Path) -> list[Pair]:
    recorder = Recorder()
    score_answers(path, "alce", judge=recorder, processes=1, resamples=10)
    return recorder.calls


def wice_calls() -> list[Pair]:
    if not WICE.is_file():
        return []
    rows = [json.loads(line) for line in WICE.read_text(encoding="utf-8").splitlines()]
    return [(row["claim"], "\n".join(row["evidence"])) for row in rows]


def corpus_calls() -> list[Pair]:
    passages = []
    for path in sorted(CORPORA.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for translation in json.loads(line).get("translations", {}).values():
                passages += [p for p in translation.get("content", "").split("\n\n") if p]
    calls = []
    for index, passage in enumerate(passages):
        joined = "\n".join(passages[index : index + 3])
        for sentence in passage.split(". "):
            calls += [(sentence, passage), (sentence, joined)]
    random.Random(0).shuffle(calls)
    return calls


def rate(judge: Callable[[str, str], bool], calls: Sequence[Pair]) -> float:
    began = time.perf_counter()
    for statement, evidence in calls:
        judge(statement, evidence)
    return len(calls) / (time.perf_counter() - began)


def judge_rates(name: str, calls: Sequence[Pair]) -> None:
    if not calls:
        print(f"   {name:34} (no data)")
        return
    lexical, trained = LexicalJudge(), TrainedLexicalJudge()
    for state in ("cold", "warm"):
        rates = {}
        for label, judge in (("lexical", lexical), ("trained", trained)):
            if state == "cold":
                clear_caches()
            rates[label] = rate(judge.supports, calls)
        print(
            f"   {name:34} {state}: lexical {rates['lexical']:9,.0f} calls/s  trained "
            f"{rates['trained']:9,.0f} calls/s  (trained takes "
            f"{rates['lexical'] / rates['trained']:5.2f}× the time)  load {os.getloadavg()[0]:.2f}"
        )


def scoring(path: Path, count: int, rounds: int) -> None:
    times: dict[str, list[float]] = {"lexical": [], "trained": []}
    judges = {"lexical": LexicalJudge(), "trained": TrainedLexicalJudge()}
    for _ in range(rounds):
        for label, judge in judges.items():
            clear_caches()
            began = time.perf_counter()
            score_answers(path, "alce", judge=judge, processes=1)
            times[label].append(time.perf_counter() - began)
    lexical, trained = (statistics.median(times[k]) for k in ("lexical", "trained"))
    for label, seconds in (("lexical", lexical), ("trained", trained)):
        per_second = count / seconds
        print(f"   score_answers, {label:8} judge {seconds:6.2f} s  {per_second:7,.0f} examples/s")
    print(f"   trained / lexical: {trained / lexical:.3f}× the time  load {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="1,000 examples, one round")
    args = parser.parse_args()
    count, rounds = (1_000, 1) if args.quick else (args.examples, args.rounds)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "answers.json"
        _write(path, count)
        calls = score_calls(path)
        print(f"1. judge calls alone (one process; {len(calls):,} calls from citelab score)")
        judge_rates("(a) citelab score's calls", calls)
        judge_rates("(b) WiCE dev, claim × oracle chunk", wice_calls())
        judge_rates("(c) fixture corpora, en/de/fr", corpus_calls())
        print(f"2. citelab score's scoring of {count:,} generated ALCE answers, {rounds} round(s)")
        scoring(path, count, rounds)


if __name__ == "__main__":
    main()
