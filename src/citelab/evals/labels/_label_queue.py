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

:func:`pending` is the resumption rule: the pairs of the queue without a label in the file,
in queue order, until ``sample`` pairs carry a decision (``skip`` does not count).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citelab._errors import InvalidInput
from citelab.evals.judges import Judge, build_judge
from citelab.evals.labels._label_file import Label, LabelFile, LabelLine
from citelab.sources import supporting_span

__all__ = ["JudgeSpec", "LabelItem", "LabelPassage", "LabelQueue", "label_queue", "pending"]

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
) -> LabelQueue:
    """Order ``items`` for labelling (see the module docs). ``disagree`` names two judges or
    more whose disagreements come first; ``judges`` are asked too (their verdicts are kept
    and shown), without changing the order."""
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
    built = _named([*(disagree or ()), *judges])
    names = tuple(built)
    leading = names[: len(disagree or ())]
    verdicts = _verdicts(pairs, built)
    queue = LabelQueue((), sample, seed, names, verdicts, leading)
    order = sorted(pairs, key=lambda item: (not queue.disagreed(item.id), _place(seed, item.id)))
    count = sum(queue.disagreed(item.id) for item in pairs) if leading else 0
    return LabelQueue(tuple(order), sample, seed, names, verdicts, leading, count)


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
) -> dict[str, dict[str, bool]]:
    verdicts: dict[str, dict[str, bool]] = {item.id: {} for item in pairs}
    questions = [(item.claim, "\n".join(item.evidence)) for item in pairs]
    for name, judge in judges.items():
        many = getattr(judge, "supports_many", None)
        if callable(many):
            said = [bool(v) for v in many(questions)]
        else:
            said = [bool(judge.supports(claim, evidence)) for claim, evidence in questions]
        for item, verdict in zip(pairs, said, strict=True):
            verdicts[item.id][name] = verdict
    return verdicts
