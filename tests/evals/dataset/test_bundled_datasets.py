"""The bundled datasets: valid, fresh, covering every corpus hazard, and doing what they say."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

from citelab.agent import default_agents, resolve_corpus_path
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.corpus import Corpus, load_corpus
from citelab.evals import Case, Dataset, check_dataset, load_dataset, load_suite, plan_run

FOLDER = Path(__file__).resolve().parents[3] / "fixtures" / "datasets"
NAMES = ("university", "helpcentre", "intranet")
HAZARDS = {
    "university": {"same_label", "fields_only", "multi_turn", "multi_round", "no_answer"},
    "helpcentre": {"missing_translation", "translation_preference", "multi_round", "no_answer"},
    "intranet": {"restricted", "restricted_allowed", "multi_round", "no_answer"},
}


@pytest.fixture(scope="module")
def datasets() -> dict[str, Dataset]:
    return {name: load_dataset(FOLDER / f"{name}.jsonl") for name in NAMES}


@pytest.fixture(scope="module")
def corpora() -> dict[str, Corpus]:
    agents = default_agents()
    return {name: load_corpus(resolve_corpus_path(agent.corpus)) for name, agent in agents.items()}


def test_the_datasets_are_fresh_from_their_source() -> None:
    spec = importlib.util.spec_from_file_location("make_datasets", FOLDER / "make_datasets.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--check"]) == 0


def test_enough_cases_cover_every_hazard(datasets: dict[str, Dataset]) -> None:
    assert sum(len(dataset) for dataset in datasets.values()) >= 60
    for name, dataset in datasets.items():
        tags = {tag for case in dataset for tag in case.tags}
        assert HAZARDS[name] <= tags, name
        assert dataset.agents == [name]


def test_every_named_entity_exists(
    datasets: dict[str, Dataset], corpora: dict[str, Corpus]
) -> None:
    for dataset in datasets.values():
        assert check_dataset(dataset, corpora) == []


def _readable_mentions(case: Case, corpus: Corpus, word: str) -> tuple[bool, bool]:
    reader = case.reader.to_reader()
    hits = [
        doc.readable_by(reader)
        for doc in corpus
        for t in doc.translations.values()
        if word.casefold() in f"{t.title} {t.content}".casefold()
    ]
    return any(hits), any(not hit for hit in hits)


def test_canaries_occur_only_where_the_reader_may_not_look(
    datasets: dict[str, Dataset], corpora: dict[str, Corpus]
) -> None:
    checked = 0
    for dataset in datasets.values():
        for case in dataset:
            for canary in case.canaries:
                readable, hidden = _readable_mentions(case, corpora[case.agent], canary)
                assert hidden, (case.id, canary)
                assert not readable, (case.id, canary)
                checked += 1
    assert checked >= 10


def test_restricted_cases_ask_for_documents_the_reader_may_not_read(
    datasets: dict[str, Dataset], corpora: dict[str, Corpus]
) -> None:
    for case in datasets["intranet"]:
        if "restricted" not in case.tags:
            continue
        reader = case.reader.to_reader()
        forbidden = [uri for turn in case.turns for uri in turn.must_not_cite]
        for uri in forbidden:
            entity_type, _, entity_id = uri.removeprefix("entity:").partition("/")
            document = corpora["intranet"].get(entity_type, entity_id)
            assert document is not None
            assert not document.readable_by(reader), (case.id, uri)
        assert any(not turn.expect_answer for turn in case.turns), case.id


async def _rounds_of_multi_round_turns(
    datasets: dict[str, Dataset],
) -> list[tuple[str, int, int, int]]:
    service = AnswerService(store=MemoryConversationStore(), logs=MemoryLogStore())
    seen = []
    for dataset in datasets.values():
        for case in dataset:
            if "multi_round" not in case.tags:
                continue
            conversation = None
            for index, turn in enumerate(case.turns):
                answer = await service.answer(
                    case.agent, turn.question, conversation, case.reader.to_reader()
                )
                conversation = answer.conversation_id
                if turn.min_searches:
                    searches = len(answer.forced) + sum(
                        1 for r in answer.rounds for call in r.tool_calls if call.error is None
                    )
                    seen.append((case.id, index, len(answer.rounds), searches - turn.min_searches))
    return seen


def test_the_offline_model_really_takes_several_rounds_on_multi_round_turns(
    datasets: dict[str, Dataset],
) -> None:
    seen = asyncio.run(_rounds_of_multi_round_turns(datasets))
    assert len(seen) >= 12
    for case_id, turn, rounds, spare_searches in seen:
        assert rounds >= 2, (case_id, turn)
        assert spare_searches >= 0, (case_id, turn)


def test_the_bundled_suite_plans_every_dataset_and_variant() -> None:
    plan = plan_run(load_suite("default"))
    assert {d.name for d in plan.datasets} == set(NAMES)
    assert set(plan.agents) == {
        "baseline",
        "no_tool_rewrite",
        "merge_replace",
        "terse_contract",
        "turn_numbering",
    }
    # Five variants with the extractive model, and the perturbing model on the baseline and
    # its seeded 16 cases of each dataset.
    assert len(plan.units) == 5 * sum(len(d) for d in plan.datasets) + 16 * len(plan.datasets)
    assert plan.agents["no_tool_rewrite"]["intranet"].hooks.tool_rewrite is False
    assert plan.agents["turn_numbering"]["university"].numbering == "turn"
    assert plan.agents["baseline"]["university"].numbering == "conversation"
