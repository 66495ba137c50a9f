"""What a person labels next: pairs to label, in an order fixed by a seed, disagreements first.

A :class:`LabelItem` is one (claim, passages) pair as the labelling widget shows it: the
claim, each cited passage with the span of it the claim rests on
(:func:`citelab.sources.supporting_span`), and where the pair came from. :func:`label_queue`
orders a set of them for labelling:

* **random, reproducibly**: each pair's place is a hash of the seed and its id, so the order
  depends on nothing else (not the order the pairs came in, not the Python or numpy version),
  a larger sample begins with the smaller one, and pairs added later (more cases in a run)
  take their places without moving the others;
* **disagreements first**, when judges are named in ``disagree``: each judge is asked about
  every pair, and the pairs they do not all agree on come first (in the seed's order), then
  the rest. The verdicts travel with the queue, so the widget can show them and write them
  into each label's ``origin``.

A **design** says how the sample is drawn, and each pair's chance of being in it is recorded
with its label (``origin.sampling``: design, stratum, the stratum's size, probability), so
estimates weigh each label by its inverse (by its stratum's labelled share where there are
strata: :meth:`LabelSet.chances`) and every design stays unbiased: ``uniform`` (the seed's
order), ``stratified`` (an equal share of the sample for each variant and model; within it,
strata by the first judge's score in quantile bins, labels shared by Neyman allocation with
each bin's spread predicted from the scores, :mod:`citelab.evals.labels._allocation`; for a
judge without a score, strata by its verdict and shares in proportion to their sizes; every
stratum keeps a few labels, and the strata take turns in proportion to their shares, so a
shorter sample stays near the allocation) and ``disagreement`` (the pairs the ``disagree``
judges disagree on first, then the rest). A judge with a ``score`` method is asked for it
too: the queue keeps it beside the verdict (the stratified design needs a probability).

:func:`pending` is the resumption rule: the pairs of the queue without a label in the file,
in queue order, until ``sample`` pairs carry a decision (``skip`` does not count).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citelab._errors import InvalidInput
from citelab.evals._stats import labels_for_width, labels_only, ppi_mean
from citelab.evals.judges import Judge, build_judge
from citelab.evals.labels._allocation import (
    allocate,
    bin_count,
    predicted_spreads,
    score_bins,
)
from citelab.evals.labels._label_file import Label, LabelFile, LabelLine
from citelab.evals.labels._labels import LabelledPair, population_of, stratum_shares
from citelab.sources import supporting_span

__all__ = [
    "DESIGNS",
    "Design",
    "JudgeSpec",
    "LabelItem",
    "LabelPassage",
    "LabelQueue",
    "label_queue",
    "pair_estimate",
    "pending",
]

Design = Literal["uniform", "stratified", "disagreement"]
DESIGNS: tuple[Design, ...] = ("uniform", "stratified", "disagreement")

JudgeSpec = str | Mapping[str, Any] | Judge
"""A judge by name, by configuration, or itself."""


class LabelPassage(BaseModel):
    """One cited passage of a pair."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    """The passage as shown (untrusted text)."""
    evidence: str | None = None
    """What a judge reads for it (a run's judge reads ``Title: …`` and the text); None: the
    text itself."""
    title: str = ""
    uri: str = ""
    number: int | None = None
    """The citation number the answer used for it."""
    span: tuple[int, int] | None = None
    """Code-point offsets (end exclusive) of the sentence(s) the claim rests on; None: found
    with :func:`citelab.sources.supporting_span` when shown."""

    @model_validator(mode="after")
    def _span_inside(self) -> LabelPassage:
        if self.span is not None:
            start, end = self.span
            if not 0 <= start <= end <= len(self.text):
                raise ValueError(f"span {self.span} lies outside the text ({len(self.text)})")
        return self

    @property
    def judged(self) -> str:
        """The text a judge reads for this passage."""
        return self.text if self.evidence is None else self.evidence

    def cited_span(self, claim: str) -> tuple[int, int] | None:
        """The span to mark: :attr:`span`, else the supporting sentence(s) of ``claim``;
        None when that would be the whole passage (nothing tells its parts apart)."""
        start, end = self.span if self.span is not None else supporting_span(claim, self.text)
        if start >= end or (start == 0 and end == len(self.text)):
            return None
        return start, end


class LabelItem(BaseModel):
    """One pair to label: a claim and the passage(s) it cites."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    """Stable: a later session finds the pair's label by it."""
    claim: str = Field(min_length=1)
    passages: tuple[LabelPassage, ...] = Field(min_length=1)
    origin: dict[str, Any] = Field(default_factory=dict)
    """Where the pair came from (written into its label's ``origin``)."""
    category: str | None = None

    @classmethod
    def of(
        cls,
        claim: str,
        evidence: str | Sequence[str],
        *,
        id: str | None = None,
        category: str | None = None,
        **origin: Any,
    ) -> LabelItem:
        """A pair from plain texts; without ``id``, one derived from the texts (stable)."""
        texts = [evidence] if isinstance(evidence, str) else list(evidence)
        if id is None:
            digest = hashlib.sha256(json.dumps([claim, texts]).encode("utf-8")).hexdigest()
            id = f"pair-{digest[:16]}"
        passages = tuple(LabelPassage(text=text) for text in texts)
        return cls(id=id, claim=claim, passages=passages, origin=origin, category=category)

    @property
    def evidence(self) -> list[str]:
        """What a judge reads, one text per passage (a label line's ``evidence``)."""
        return [passage.judged for passage in self.passages]

    def line(self, label: Label, **origin: Any) -> LabelLine:
        """This pair's label line; ``origin`` adds to (or overrides) the item's."""
        return LabelLine(
            id=self.id,
            claim=self.claim,
            evidence=self.evidence,
            label=label,
            category=self.category,
            origin={**self.origin, **origin},
        )


@dataclass(frozen=True)
class LabelQueue:
    """Pairs in labelling order, and the judges' verdicts on them."""

    items: tuple[LabelItem, ...]
    """Every pair, in the order they are offered."""
    sample: int | None
    """How many decisions are wanted (None: every pair)."""
    seed: int
    judges: tuple[str, ...] = ()
    """The judges asked, by the names the verdicts use."""
    verdicts: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)
    """Pair id → judge name → verdict."""
    disagree: tuple[str, ...] = ()
    """The judges whose disagreements come first (empty: a plain random order)."""
    disagreements: int = 0
    """Pairs those judges disagree on (they lead the order)."""
    design: Design = "uniform"
    strata: Mapping[str, str] = field(default_factory=dict)
    """Pair id → its stratum (empty: one stratum)."""
    probabilities: Mapping[str, float] = field(default_factory=dict)
    """Pair id → its chance of being in the sample (the design's)."""
    scores: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Pair id → judge name → score, for the judges that give one (a probability)."""

    def sampling(self, pair_id: str) -> dict[str, Any]:
        """What a label of ``pair_id`` records of the design (``origin.sampling``)."""
        out: dict[str, Any] = {"design": self.design}
        if pair_id in self.strata:
            out["stratum"] = self.strata[pair_id]
            out["size"] = self.stratum_sizes[self.strata[pair_id]]
            out["strata"] = self.strata_cut[population_of(self.strata[pair_id])]
        out["probability"] = self.probabilities.get(pair_id, 1.0)
        return out

    @cached_property
    def stratum_sizes(self) -> dict[str, int]:
        """Stratum → how many of the queue's pairs it holds."""
        return dict(Counter(self.strata.values()))

    @cached_property
    def strata_cut(self) -> dict[str, int]:
        """Population (:func:`population_of`) → how many strata the design cut it into."""
        return dict(Counter(population_of(name) for name in self.stratum_sizes))

    def disagreed(self, pair_id: str) -> bool:
        """The judges of ``disagree`` do not all give the pair one verdict."""
        said = self.verdicts.get(pair_id, {})
        return len({said.get(name) for name in self.disagree}) > 1

    @property
    def wanted(self) -> int:
        """Decisions wanted: ``sample``, at most the number of pairs."""
        return len(self.items) if self.sample is None else min(self.sample, len(self.items))


def label_queue(
    items: Iterable[LabelItem],
    *,
    sample: int | None = None,
    seed: int = 0,
    disagree: Sequence[JudgeSpec] | None = None,
    judges: Sequence[JudgeSpec] = (),
    design: Design | None = None,
) -> LabelQueue:
    """Order ``items`` for labelling (see the module docs). ``disagree`` names two judges or
    more whose disagreements come first; ``judges`` are asked too (their verdicts are kept
    and shown, their scores kept where they give one), without changing the order.
    ``design``: ``uniform``, ``stratified`` (by the first judge's score, else its verdict:
    give one in ``judges`` or ``disagree``) or ``disagreement``
    (default: ``disagreement`` when ``disagree`` is given, else ``uniform``)."""
    pairs = _unique(items)
    if sample is not None and (isinstance(sample, bool) or sample < 1):
        raise InvalidInput(f"sample must be a positive number of pairs (or None), got {sample!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidInput(f"seed must be an integer, got {seed!r}")
    if disagree is not None and len(disagree) < 2:
        raise InvalidInput(
            f"disagree names the judges whose disagreements come first: give two or more, "
            f"got {len(disagree)}"
        )
    chosen = design if design is not None else ("disagreement" if disagree else "uniform")
    _check_design(chosen, disagree, judges)
    built = _named([*(disagree or ()), *judges])
    names = tuple(built)
    leading = names[: len(disagree or ())]
    verdicts, scores = _verdicts(pairs, built)
    queue = LabelQueue((), sample, seed, names, verdicts, leading)
    if chosen == "stratified":
        first = names[0]
        given = {i.id: scores[i.id][first] for i in pairs if first in scores.get(i.id, {})}
        outside = next((v for v in given.values() if not 0.0 <= v <= 1.0), None)
        if outside is not None:
            raise InvalidInput(
                f"judge {first}: the stratified design needs scores that are probabilities "
                f"in [0, 1], got {outside!r}"
            )
        strata, order, chances = _stratified(
            pairs, {i.id: verdicts[i.id][first] for i in pairs}, given, sample, seed
        )
        return LabelQueue(tuple(order), sample, seed, names, verdicts, leading, 0, chosen,
                          strata, chances, scores)  # fmt: skip
    if chosen == "disagreement":
        order = sorted(
            pairs, key=lambda item: (not queue.disagreed(item.id), _place(seed, item.id))
        )
    else:
        order = sorted(pairs, key=lambda item: _place(seed, item.id))
    count = sum(queue.disagreed(item.id) for item in pairs) if leading else 0
    strata = (
        {i.id: "disagree" if queue.disagreed(i.id) else "agree" for i in pairs}
        if chosen == "disagreement"
        else {}
    )
    chances = _in_order(order, strata, sample)
    return LabelQueue(tuple(order), sample, seed, names, verdicts, leading, count, chosen,
                      strata, chances, scores)  # fmt: skip


def _check_design(
    design: str, disagree: Sequence[JudgeSpec] | None, judges: Sequence[JudgeSpec]
) -> None:
    if design not in DESIGNS:
        raise InvalidInput(f"unknown design {design!r}; choose one of {', '.join(DESIGNS)}")
    if design == "stratified" and not (disagree or judges):
        raise InvalidInput(
            "the stratified design strata pairs by a judge's score or verdict: name one in judges"
        )
    if design == "disagreement" and not disagree:
        raise InvalidInput("the disagreement design needs two judges or more in disagree")


def _group(item: LabelItem) -> str:
    """A pair's population: its variant and model (each estimated on its own)."""
    return "/".join(str(item.origin.get(k, "")) for k in ("variant", "model"))


def _stratified(
    pairs: Sequence[LabelItem],
    verdicts: Mapping[str, bool],
    scores: Mapping[str, float],
    sample: int | None,
    seed: int,
) -> tuple[dict[str, str], list[LabelItem], dict[str, float]]:
    """The stratified design (module docs): each pair's stratum, the order, each pair's
    chance. An equal share of ``sample`` for each variant and model (a small one gives all
    it has, the others share what is left); within one, strata by score bins and Neyman
    allocation when the first judge scored every pair of it, else by verdict and in
    proportion to size."""
    groups: dict[str, list[LabelItem]] = {}
    for item in sorted(pairs, key=lambda i: _place(seed, i.id)):
        groups.setdefault(_group(item), []).append(item)
    wanted = len(pairs) if sample is None else min(sample, len(pairs))
    shares = _equal_shares({name: len(items) for name, items in groups.items()}, wanted)
    strata: dict[str, str] = {}
    members: dict[str, list[LabelItem]] = {}
    take: dict[str, int] = {}
    for name, items in groups.items():
        if all(item.id in scores for item in items):
            given = [scores[item.id] for item in items]
            bins = bin_count(shares[name], len(items))
            # Equal scores split at a bin's edge by a key of their own, not by the seed's
            # order: else a bin would hold the late ones of one score, the early of the next.
            ties = [hashlib.blake2b(f"bins\0{item.id}".encode()).hexdigest() for item in items]
            codes = score_bins(given, bins, ties)
            labels = [f"{name}/score-{code + 1}-of-{bins}" for code in codes]
            spreads: list[float] | None = predicted_spreads(given, codes, bins)
            ordered = [f"{name}/score-{code + 1}-of-{bins}" for code in range(bins)]
        else:
            labels = [f"{name}/{'yes' if verdicts[item.id] else 'no'}" for item in items]
            spreads = None
            ordered = [f"{name}/no", f"{name}/yes"]
        for item, label in zip(items, labels, strict=True):
            strata[item.id] = label
            members.setdefault(label, []).append(item)
        present = [label for label in ordered if label in members]
        counts = allocate(
            [len(members[label]) for label in present],
            None if spreads is None else [spreads[ordered.index(label)] for label in present],
            shares[name],
        )
        take.update(zip(present, counts, strict=True))
    chosen = sorted(
        (
            ((position + 0.5) / take[label], label, position, item)
            for label, items in members.items()
            for position, item in enumerate(items[: take[label]])
        ),
        key=lambda entry: entry[:3],
    )
    rest = [item for label in members for item in members[label][take[label] :]]
    chances = {
        item.id: take[label] / len(items) if take[label] else 1.0
        for label, items in members.items()
        for item in items
    }
    return strata, [entry[3] for entry in chosen] + rest, chances


def _equal_shares(sizes: Mapping[str, int], wanted: int) -> dict[str, int]:
    """``wanted`` shared equally between groups of ``sizes``: a small group gives all it has,
    the others share what is left."""
    share: dict[str, int] = {}
    left = wanted
    for count, (name, size) in enumerate(sorted(sizes.items(), key=lambda kv: kv[1])):
        share[name] = min(size, left // (len(sizes) - count))
        left -= share[name]
    return share


def _in_order(
    order: Sequence[LabelItem], strata: Mapping[str, str], sample: int | None
) -> dict[str, float]:
    """Each pair's chance when the first ``sample`` pairs of ``order`` are labelled: the share
    of its stratum among them (one stratum without ``strata``)."""
    wanted = len(order) if sample is None else min(sample, len(order))
    sizes: dict[str, int] = {}
    taken: dict[str, int] = {}
    for position, item in enumerate(order):
        name = strata.get(item.id, "")
        sizes[name] = sizes.get(name, 0) + 1
        taken[name] = taken.get(name, 0) + (position < wanted)
    return {
        item.id: (taken[n] / sizes[n]) if taken[n] else 1.0
        for item in order
        for n in [strata.get(item.id, "")]
    }


def pair_estimate(
    queue: LabelQueue, pairs: Sequence[LabelledPair], half_width: float = 0.05
) -> dict[str, Any]:
    """The share of the queue's pairs people call supported, from ``pairs`` (its labels so
    far), weighted by the design's chances: with the queue's first judge's predictions on
    every pair by PPI++ (``ppi``; its score where it gives one, else its verdict), else from
    the labels alone; its interval, width, and ``more``: how many more labels would reach
    ``±half_width`` (None: unknown yet). Under a design with strata a label's chance is
    its stratum's labelled share so far (:func:`stratum_shares`: each stratum's labels are
    a random sample of it in the seed's order, whatever its count), so a sample stopped
    short stays unbiased."""
    ids = [pair.id for pair in pairs]
    y = [float(pair.label) for pair in pairs]
    strata = [queue.strata[i] for i in ids] if queue.strata else None
    if strata is not None:
        chances = stratum_shares(strata, queue.stratum_sizes)
    else:
        chances = [queue.probabilities.get(i, 1.0) for i in ids]
    if queue.judges:
        first = queue.judges[0]
        scored = all(first in queue.scores.get(item.id, {}) for item in queue.items)

        def predicted(pair_id: str) -> float:
            if scored:
                return queue.scores[pair_id][first]
            return float(queue.verdicts.get(pair_id, {}).get(first, False))

        every = [predicted(item.id) for item in queue.items]
        mine = [predicted(i) if i in queue.verdicts else 0.0 for i in ids]
        estimate = ppi_mean(y, mine, every, chances, strata=strata)
    else:
        estimate = labels_only(y, chances, strata=strata)
    needed = labels_for_width(estimate, half_width)
    return {
        "unlabelled_strata": sorted(set(queue.stratum_sizes) - set(strata)) if strata else [],
        "method": estimate.method,
        "value": estimate.value,
        "low": estimate.low,
        "high": estimate.high,
        "width": estimate.width,
        "labels": estimate.labels,
        "too_few": estimate.too_few,
        "more": None if needed is None else max(0, needed - estimate.labels),
    }


def pending(queue: LabelQueue, labels: LabelFile) -> list[LabelItem]:
    """The pairs still to label, in queue order: none once the file holds ``sample``
    decisions on the queue's pairs (``skip`` is no decision), else every pair without a
    label."""
    decided = sum(
        1
        for item in queue.items
        if (line := labels.get(item.id)) is not None and line.label != "skip"
    )
    if decided >= queue.wanted:
        return []
    return [item for item in queue.items if item.id not in labels]


def _unique(items: Iterable[LabelItem]) -> list[LabelItem]:
    pairs: list[LabelItem] = []
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, LabelItem):
            raise InvalidInput(f"expected LabelItem pairs, got {type(item).__name__}")
        if item.id in seen:
            raise InvalidInput(f"two pairs share the id {item.id!r}: ids must be unique")
        seen.add(item.id)
        pairs.append(item)
    return pairs


def _place(seed: int, pair_id: str) -> bytes:
    """The pair's place in the seed's order: stable across versions and machines."""
    return hashlib.blake2b(f"{seed}\0{pair_id}".encode(), digest_size=16).digest()


def _named(specs: Sequence[JudgeSpec]) -> dict[str, Judge]:
    """The judges under names that tell them apart (the name, with the configuration when
    two share one); one judge given twice is an error (it cannot disagree with itself)."""
    named: dict[str, Judge] = {}
    seen: set[str] = set()
    for spec in specs:
        judge = build_judge(spec if isinstance(spec, str | Judge) else dict(spec))
        setting = f"{judge.name} {json.dumps(judge.config(), sort_keys=True, default=str)}"
        if setting in seen:
            raise InvalidInput(f"judge {judge.name} is given twice with one configuration")
        seen.add(setting)
        named[judge.name if judge.name not in named else setting] = judge
    return named


def _verdicts(
    pairs: Sequence[LabelItem], judges: Mapping[str, Judge]
) -> tuple[dict[str, dict[str, bool]], dict[str, dict[str, float]]]:
    """Every judge's verdict on every pair, and the score of each judge that gives one (a
    ``score`` method: a probability; ``score_many`` asks in batches)."""
    verdicts: dict[str, dict[str, bool]] = {item.id: {} for item in pairs}
    scores: dict[str, dict[str, float]] = {}
    questions = [(item.claim, "\n".join(item.evidence)) for item in pairs]
    for name, judge in judges.items():
        many = getattr(judge, "supports_many", None)
        if callable(many):
            said = [bool(v) for v in many(questions)]
        else:
            said = [bool(judge.supports(claim, evidence)) for claim, evidence in questions]
        for item, verdict in zip(pairs, said, strict=True):
            verdicts[item.id][name] = verdict
        scored = _scores(judge, name, questions)
        if scored is not None:
            for item, score in zip(pairs, scored, strict=True):
                scores.setdefault(item.id, {})[name] = score
    return verdicts, scores


def _scores(judge: Judge, name: str, questions: Sequence[tuple[str, str]]) -> list[float] | None:
    """The judge's score of each question, None when it gives none; a score that is not a
    number is an error naming the judge."""
    many, one = getattr(judge, "score_many", None), getattr(judge, "score", None)
    if callable(many):
        values = list(many(questions))
    elif callable(one):
        values = [one(claim, evidence) for claim, evidence in questions]
    else:
        return None
    out = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise InvalidInput(f"judge {name}: score() must return a number, got {value!r}")
        out.append(float(value))
    return out
