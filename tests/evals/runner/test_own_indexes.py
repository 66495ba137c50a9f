"""Cases with their own documents (ALCE's items) under several variants and models: one
search index per item, built once and searched by every variant and model, with the same
records as an index built for every unit."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from citelab.evals.records import CaseRecord
from citelab.evals.runner import BatchRunner, load_suite, plan_run
from citelab.evals.runner._batch import documents_digest
from citelab.retrieval import SearchIndex

from .test_alce_pipeline import ITEMS, _suite

_VARIANTS = """
models = ["extractive", { spec = "extractive", label = "second" }]

[[variants]]
name = "baseline"

[[variants]]
name = "one_result"
set = { "retrieval.max_results" = 1 }
"""


def _plan(tmp_path: Path) -> Any:
    path = _suite(tmp_path, ITEMS)
    text = path.read_text(encoding="utf-8").replace('models = ["extractive"]\n', "")
    path.write_text(text.replace("[[alce]]", _VARIANTS + "\n[[alce]]"), encoding="utf-8")
    return plan_run(load_suite(path))


def _answer_all(batch: BatchRunner) -> list[CaseRecord]:
    async def answer() -> list[CaseRecord]:
        indices = list(range(len(batch.plan.units)))
        await batch.set_up(indices)
        try:
            return list(await asyncio.gather(*(batch.answer(index) for index in indices)))
        finally:
            await batch.aclose()

    return asyncio.run(answer())


def _without_timing(records: list[CaseRecord]) -> list[dict[str, Any]]:
    rows = [record.model_dump(mode="json") for record in records]
    for row in rows:
        for turn in row["turns"]:
            turn.pop("seconds")
    return rows


def test_one_index_per_item_serves_every_variant_and_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _plan(tmp_path)
    assert len(plan.units) == 12  # 2 variants × 2 models × 3 items
    built: list[str] = []
    build = SearchIndex.build.__func__  # type: ignore[attr-defined]

    def counted(cls: type[SearchIndex], corpus: Any, params: Any = None) -> SearchIndex:
        built.append(corpus.name)
        return build(cls, corpus, params)  # type: ignore[no-any-return]

    monkeypatch.setattr(SearchIndex, "build", classmethod(counted))
    shared = BatchRunner(plan, tmp_path / "cache-shared", concurrency=4)
    records = _answer_all(shared)
    assert sorted(built) == ["case-q0", "case-q1", "case-q2"]
    assert len(shared.own_indexes) == 3
    indexes = {key: future.result() for key, future in shared.own_indexes.items()}
    assert {index.corpus.name for index in indexes.values()} == {"case-q0", "case-q1", "case-q2"}

    built.clear()
    apart = BatchRunner(plan, tmp_path / "cache-apart", concurrency=4, share_indexes=False)
    separate = _answer_all(apart)
    assert sorted(built) == sorted(["case-q0", "case-q1", "case-q2"] * 4)
    assert apart.own_indexes == {}
    assert _without_timing(records) == _without_timing(separate)
    # One index, each variant's own settings: item 0 shows the model both of its documents
    # under the baseline, one under one result per search.
    seen = {(r.variant, r.model): len(r.turns[0].seen) for r in records if r.case_id == "q0"}
    assert seen == {
        ("baseline", "extractive"): 2,
        ("baseline", "second"): 2,
        ("one_result", "extractive"): 1,
        ("one_result", "second"): 1,
    }


def test_the_same_documents_have_the_same_digest_and_others_another(tmp_path: Path) -> None:
    cases = {unit.case.id: unit.case for unit in _plan(tmp_path).units}
    assert documents_digest(cases["q0"].documents) == documents_digest(list(cases["q0"].documents))
    # Items 1 and 2 show the same texts, but as their own documents (their own URIs).
    assert documents_digest(cases["q1"].documents) != documents_digest(cases["q2"].documents)
