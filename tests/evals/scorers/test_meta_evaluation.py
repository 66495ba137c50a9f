"""Meta-evaluation: on injected faults of known rates, each scorer recovers its rate.

The bundled datasets are answered once by the offline extractive model through the answer
service (tool-message rewrite on). Then the perturbing model's own fault injector
(:func:`citelab.models.inject_faults`, what :class:`~citelab.models.PerturbedModel` runs on a
final answer) rewrites those recorded texts many times with known rates and seeds; each
perturbed text goes through the pipeline's finalize, anchors and message again and is scored.
The injector records exactly what it changed, so every scorer is compared with the realized
fault counts, pooled over all perturbed turns:

- ``dangling_markers`` = out_of_range / (markers - dropped)
- ``citation_recall`` = 1 - (dropped + out_of_range + wrong + stale) / markers
- ``citation_precision`` = ``numbering_stability_content``
  = 1 - (wrong + stale) / (markers - dropped - out_of_range)
- ``numbering_stability`` (visible meaning) stays 1: the faults are the model's, and with the
  rewrite the pipeline resolves every number to what the model saw.

Only answers whose every statement cites exactly one source, and whose base recall and
precision are 1, take part: then a marker is a statement and the formulas are exact up to
the judge (a wrong number that happens to name a source supporting the same sentence).
One end-to-end test runs :class:`PerturbedModel` itself through the answer service.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from citelab.agent import default_agents
from citelab.answers import (
    Answer,
    AnswerService,
    DanglingMarker,
    MemoryConversationStore,
    MemoryLogStore,
)
from citelab.contract import build_message
from citelab.evals import (
    GoldTurn,
    Scorer,
    build_scorers,
    load_dataset,
)
from citelab.evals.records import TurnRecord
from citelab.evals.runner import turn_record
from citelab.evals.scorers import split_statements
from citelab.models import (
    ExtractiveModel,
    FaultRates,
    Injection,
    PerturbedModel,
    View,
    inject_faults,
    round_views,
)
from citelab.sources import Source, build_anchors, finalize_citations

DATASETS = Path(__file__).resolve().parents[3] / "fixtures" / "datasets"
TOLERANCE = 0.02
REPLICATES = 12


@dataclass(frozen=True)
class Base:
    """One recorded answer and what re-running its pipeline needs."""

    answer: Answer
    gold: GoldTurn
    held: list[Source]
    views: list[View]
    markers: int


async def _answer_datasets(service: AnswerService) -> list[tuple[Answer, GoldTurn]]:
    answered = []
    for name in ("university", "helpcentre", "intranet"):
        for case in load_dataset(DATASETS / f"{name}.jsonl"):
            conversation = None
            for gold in case.turns:
                answer = await service.answer(
                    case.agent, gold.question, conversation, case.reader.to_reader()
                )
                conversation = answer.conversation_id
                answered.append((answer, gold))
    return answered


def _service(model: ExtractiveModel | PerturbedModel) -> AnswerService:
    agents = {
        name: agent.model_copy(update={"model": "under-test"})
        for name, agent in default_agents().items()
    }
    return AnswerService(
        agents,
        store=MemoryConversationStore(),
        logs=MemoryLogStore(),
        models={"under-test": model},
    )


def _held(answer: Answer) -> list[Source]:
    old = {new: held for held, new in answer.mapping.items()}
    kept = [s.model_copy(update={"number": old[s.number or 0]}) for s in answer.sources]
    return sorted([*kept, *answer.dropped], key=lambda s: s.number or 0)


def _clean(answer: Answer, gold: GoldTurn, scorers: dict[str, Scorer]) -> bool:
    if not gold.expect_answer or answer.no_answer or not answer.sources:
        return False
    statements = split_statements(answer.raw_text)
    if not statements or any(len(s.citations) != 1 for s in statements):
        return False
    record = turn_record(answer, 0, gold.question)
    scores = [scorers[m](record, gold).value for m in ("citation_recall", "citation_precision")]
    return scores == [1.0, 1.0]


@pytest.fixture(scope="module")
def scorers() -> dict[str, Scorer]:
    built = build_scorers(
        [
            "citation_recall",
            "citation_precision",
            "dangling_markers",
            "numbering_stability",
            {"name": "numbering_stability", "meaning": "content"},
        ]
    )
    return {scorer.metric: scorer for scorer in built}


@pytest.fixture(scope="module")
def bases(scorers: dict[str, Scorer]) -> list[Base]:
    answered = asyncio.run(_answer_datasets(_service(ExtractiveModel())))
    chosen = []
    for answer, gold in answered:
        if _clean(answer, gold, scorers):
            views = round_views(answer.rounds[-1].messages)
            markers = sum(len(s.citations) for s in split_statements(answer.raw_text))
            chosen.append(Base(answer, gold, _held(answer), views, markers))
    return chosen


def _perturbed(
    base: Base, rates: FaultRates, rng: random.Random
) -> tuple[TurnRecord, list[Injection]]:
    text, injections = inject_faults(base.answer.raw_text, base.views, rates, rng)
    finalized = finalize_citations(text, base.held)
    anchors = build_anchors(finalized)
    sources = list(finalized.sources)
    last = base.answer.rounds[-1].model_copy(update={"text": text})
    answer = base.answer.model_copy(
        update={
            "text": finalized.text,
            "raw_text": text,
            "sources": sources,
            "dropped": list(finalized.dropped),
            "mapping": dict(finalized.renumbering),
            "dangling": [DanglingMarker.of(d) for d in finalized.dangling],
            "anchors": anchors,
            "message": build_message(finalized.text, sources, anchors),
            "rounds": [*base.answer.rounds[:-1], last],
        }
    )
    return turn_record(answer, 0, base.gold.question), injections


def _pooled(records: list[tuple[TurnRecord, GoldTurn]], scorer: Scorer) -> float:
    numerator = denominator = 0.0
    for record, gold in records:
        score = scorer(record, gold)
        numerator += score.numerator
        denominator += score.denominator
    return numerator / denominator


def test_the_bundled_datasets_give_enough_clean_markers(bases: list[Base]) -> None:
    assert len(bases) >= 40
    assert sum(base.markers for base in bases) >= 70
    assert any(len(base.views) > 1 for base in bases)  # multi-round turns take part


@pytest.mark.parametrize(
    ("rates", "seed"),
    [
        ({"dropped": 0.1}, 1),
        ({"dropped": 0.3}, 2),
        ({"out_of_range": 0.05}, 3),
        ({"out_of_range": 0.25}, 4),
        ({"wrong": 0.15}, 5),
        ({"wrong": 0.2, "stale": 0.2}, 6),
        ({"wrong": 0.1, "stale": 0.05, "out_of_range": 0.1, "dropped": 0.1}, 7),
        ({"wrong": 0.1, "stale": 0.05, "out_of_range": 0.1, "dropped": 0.1}, 8),
    ],
)
def test_each_scorer_recovers_its_injected_rate(
    bases: list[Base], scorers: dict[str, Scorer], rates: dict[str, float], seed: int
) -> None:
    fault_rates = FaultRates.model_validate(rates)
    records: list[tuple[TurnRecord, GoldTurn]] = []
    faults: Counter[str] = Counter()
    markers = 0
    for replicate in range(REPLICATES):
        for index, base in enumerate(bases):
            rng = random.Random(f"{seed}/{replicate}/{index}")
            record, injections = _perturbed(base, fault_rates, rng)
            records.append((record, base.gold))
            faults.update(injection.kind for injection in injections)
            markers += base.markers
    lost = faults["dropped"] + faults["out_of_range"]
    misdirected = faults["wrong"] + faults["stale"]
    for kind, rate in rates.items():  # the injector drew about the asked rates...
        if kind != "stale":  # ...stale needs an earlier round, which most turns lack
            assert faults[kind] / markers == pytest.approx(rate, abs=0.1), kind
    assert faults["stale"] > 0 or "stale" not in rates
    expected = {
        "dangling_markers": faults["out_of_range"] / (markers - faults["dropped"]),
        "citation_recall": 1 - (lost + misdirected) / markers,
        "citation_precision": 1 - misdirected / (markers - lost),
        "numbering_stability_content": 1 - misdirected / (markers - lost),
        "numbering_stability": 1.0,
    }
    for metric, value in expected.items():
        measured = _pooled(records, scorers[metric])
        assert measured == pytest.approx(value, abs=TOLERANCE), (metric, dict(faults), markers)


def test_perturbed_model_end_to_end_through_the_service(scorers: dict[str, Scorer]) -> None:
    model = PerturbedModel(ExtractiveModel(), {"out_of_range": 0.3, "dropped": 0.1}, seed=11)
    answered = asyncio.run(_answer_datasets(_service(model)))
    faults = Counter(injection.kind for injection in model.injections)
    markers = sum(record.markers for record in model.records)
    assert markers > 100
    records = [(turn_record(answer, 0, gold.question), gold) for answer, gold in answered]
    dangling = _pooled(records, scorers["dangling_markers"])
    assert dangling == pytest.approx(
        faults["out_of_range"] / (markers - faults["dropped"]), abs=TOLERANCE
    )
    assert _pooled(records, scorers["numbering_stability"]) == 1.0
    # What the service reported agrees with what the scorer found.
    assert sum(r.dangling for r, _ in records) == faults["out_of_range"]
