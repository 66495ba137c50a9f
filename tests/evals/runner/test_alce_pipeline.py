"""citelab's pipeline on ALCE's items, each searching its own documents only, beside ALCE's
prompt in one suite run, scored by the same ALCE-compatible scorers and judge."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from citelab import ConfigError
from citelab.evals import rescore, run
from citelab.evals.dataset import Case, GoldTurn, alce_documents
from citelab.evals.dataset._alce import AlceDocument
from citelab.evals.runner import load_suite, plan_run
from citelab.evals.runner._alce import AlceSuiteRun

PROMPT: dict[str, Any] = {
    "instruction": "Write an accurate answer and cite the documents as [1][2].",
    "demo_sep": "\n\n",
    "demo_prompt": "{INST}\n\nQuestion: {Q}\n\n{D}\nAnswer: {A}",
    "doc_prompt": "Document [{ID}](Title: {T}): {P}\n",
    "demos": [
        {
            "question": "Which river flows through Vienna?",
            "answer": "The Danube flows through Vienna [1].",
            "docs": [{"title": "Vienna", "text": "The Danube flows through Vienna."}],
        }
    ],
}

PENGUINS = [
    {"title": "Emperor penguin", "text": "Emperor penguins breed on the sea ice of Antarctica."},
    {"title": "Penguin diet", "text": "Emperor penguins eat krill, fish and squid."},
]
VOLCANO = [
    {"title": "Krakatoa", "text": "The Krakatoa volcano erupted in August 1883."},
    {"title": "Volcanic ash", "text": "Ash from the eruption darkened skies for months."},
]


def _item(question: str, docs: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "question": question,
        "answer": "gold",
        "qa_pairs": [{"question": question, "short_answers": ["gold"]}],
        "docs": docs,
    }


# Item 1 asks about penguins but brings only volcano documents: a pooled corpus would hand it
# item 0's penguin documents, and an answer citing them.
ITEMS = [
    _item("Where do emperor penguins breed?", PENGUINS),
    _item("Where do emperor penguins breed, and what do emperor penguins eat?", VOLCANO),
    _item("When did the Krakatoa volcano erupt?", VOLCANO),
]

SCORERS = (
    '[{ name = "citation_recall", alce_compat = true }, '
    '{ name = "citation_precision", alce_compat = true }]'
)


def _suite(tmp_path: Path, items: list[dict[str, Any]], **entry: Any) -> Path:
    (tmp_path / "asqa_default.json").write_text(json.dumps(PROMPT), encoding="utf-8")
    (tmp_path / "asqa_eval.json").write_text(json.dumps(items), encoding="utf-8")
    settings = {"shot": 1, "ndoc": 2, "pipeline": True, **entry}
    lines = "\n".join(f"{key} = {json.dumps(value)}" for key, value in settings.items())
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f"""
name = "alce_pipeline"
models = ["extractive"]
scorers = {SCORERS}
judge = {{name = "lexical"}}

[[alce]]
name = "asqa"
prompt_file = "asqa_default.json"
eval_file = "asqa_eval.json"
{lines}
""",
        encoding="utf-8",
    )
    return suite


def test_the_pipeline_answers_each_item_from_its_own_documents_beside_alces_prompt(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    result = run(_suite(tmp_path, ITEMS), out_dir=out, progress=False)
    pipeline = {r.case_id: r for r in result.records if r.variant == "baseline"}
    assert set(pipeline) == {"q0", "q1", "q2"}
    for case_id, record in pipeline.items():
        [turn] = record.turns
        assert turn.error is None
        own = {f"entity:asqa/{case_id}.{n}" for n in (1, 2)}
        # Nothing of another item is cited, offered or even shown to the model.
        for sources in (turn.sources, turn.candidates, turn.seen):
            assert {s.uri for s in sources} <= own, (case_id, sources)
    # Item 0's penguin answer cites its own first document, with its text.
    [cited] = pipeline["q0"].turns[0].sources
    assert (cited.uri, cited.content) == ("entity:asqa/q0.1", PENGUINS[0]["text"])
    assert "[1]" in pipeline["q0"].turns[0].text
    # Item 1 asks about penguins with volcano documents only: no penguin text reaches it.
    assert "Antarctica" not in pipeline["q1"].turns[0].text
    assert "krill" not in pipeline["q1"].turns[0].text
    assert pipeline["q2"].turns[0].sources[0].uri == "entity:asqa/q2.1"

    # Both variants, the same cases, both ALCE-compatible metrics: one run, one table.
    scores = result.scores
    metrics = {"citation_recall_alce", "citation_precision_alce"}
    for variant in ("baseline", "alce_prompt"):
        mine = scores[scores["variant"] == variant]
        assert set(mine["dataset"]) == {"asqa"}
        assert set(mine["case_id"]) == {"q0", "q1", "q2"}
        assert set(mine["metric"]) == metrics
    recall = scores[
        (scores["variant"] == "baseline") & (scores["metric"] == "citation_recall_alce")
    ]
    assert recall.set_index("case_id")["value"]["q0"] == 1.0
    # ALCE's prompt saw the same documents under the same URIs.
    alce = {r.case_id: r for r in result.records if r.variant == "alce_prompt"}
    assert [s.uri for s in alce["q1"].turns[0].sources] == ["entity:asqa/q1.1", "entity:asqa/q1.2"]
    assert [s.content for s in alce["q1"].turns[0].sources] == [d["text"] for d in VOLCANO]
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "alce_prompt" in report
    assert "baseline" in report
    lines = (out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    written = {json.loads(line)["variant"] for line in lines}
    assert "baseline" in written
    # Rescored (no model asked), both variants come back with the same scores.
    again = rescore(out, _suite(tmp_path, ITEMS)).scores
    order = ["variant", "case_id", "metric"]
    assert again.sort_values(order)["value"].tolist() == scores.sort_values(order)["value"].tolist()


def test_without_pipeline_the_entry_is_alces_prompt_alone(tmp_path: Path) -> None:
    plan = plan_run(load_suite(_suite(tmp_path, ITEMS, pipeline=False)))
    assert plan.units == []
    assert [d.name for d in plan.datasets] == ["asqa"]  # its cases, for the scorers


def test_the_pipeline_units_carry_the_items_shown_documents(tmp_path: Path) -> None:
    plan = plan_run(load_suite(_suite(tmp_path, ITEMS, ndoc=1)))
    assert [(u.variant.name, u.case.id) for u in plan.units] == [
        ("baseline", "q0"),
        ("baseline", "q1"),
        ("baseline", "q2"),
    ]
    docs = plan.units[0].case.documents
    assert [(d.uri, d.translations["en"].title) for d in docs] == [
        ("entity:asqa/q0.1", "Emperor penguin")
    ]


def test_an_item_without_docs_is_an_error_naming_the_entry_and_item(tmp_path: Path) -> None:
    items = [*ITEMS, _item("A question with nothing retrieved?", [])]
    suite = load_suite(_suite(tmp_path, items))
    with pytest.raises(ConfigError, match=r"key alce\.0: \[\[alce\]\] 'asqa': item 3 of .*"):
        run(suite, out_dir=tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / "alce").exists()  # refused before any model was asked
    with pytest.raises(ConfigError, match=r"item 0 .*has no docs to search \(ndoc = 0\)"):
        plan_run(load_suite(_suite(tmp_path, ITEMS, ndoc=0)))
    # ALCE's prompt alone answers such an item (run.py does).
    plan_run(load_suite(_suite(tmp_path, items, pipeline=False)))


def test_a_missing_eval_file_or_unknown_agent_is_an_error(tmp_path: Path) -> None:
    path = _suite(tmp_path, ITEMS)
    (tmp_path / "asqa_eval.json").unlink()
    with pytest.raises(ConfigError, match=r"key alce\.0\.eval_file: .*asqa_eval\.json does not"):
        load_suite(path)
    path = _suite(tmp_path, ITEMS, agent="nobody")
    with pytest.raises(ConfigError, match=r"dataset asqa names agent\(s\) \['nobody'\]"):
        plan_run(load_suite(path))


def test_a_case_rejects_repeated_documents() -> None:
    docs = alce_documents("asqa", 0, [AlceDocument(title="A", text="a")])
    with pytest.raises(ValueError, match=r"repeated: \['asqa/q0.1'\]"):
        Case(id="q0", turns=[GoldTurn(question="Q?")], documents=docs + docs)


def test_an_untitled_alce_document_gets_its_number_as_title() -> None:
    [doc] = alce_documents("eli5", 4, [AlceDocument(title=" ", text="body")])
    assert (doc.uri, doc.translations["en"].title) == ("entity:eli5/q4.1", "Document [1]")


def test_the_readmes_suite_entry_plans_the_pipeline_on_the_alce_files_items(
    tmp_path: Path,
) -> None:
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Reproduce an ALCE row")[1].split("\n## ")[0]
    [block] = re.findall(r"```toml\n(.*?)```", section, re.S)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "data").mkdir()
    two_demos = {**PROMPT, "demos": PROMPT["demos"] * 2}
    (tmp_path / "prompts" / "asqa_default.json").write_text(json.dumps(two_demos), "utf-8")
    items = [_item(f"Question {k} about Krakatoa?", VOLCANO + PENGUINS) for k in range(60)]
    (tmp_path / "data" / "asqa_eval_gtr_top100.json").write_text(json.dumps(items), "utf-8")
    suite = tmp_path / "asqa_beside.toml"
    suite.write_text(block, encoding="utf-8")
    plan = plan_run(load_suite(suite))
    assert len(plan.units) == 50
    assert {u.variant.name for u in plan.units} == {"baseline"}
    assert all(len(u.case.documents) == 4 for u in plan.units)  # ndoc = 5, four to show


def test_a_jsonl_case_with_its_own_documents_is_answered_from_them_alone(tmp_path: Path) -> None:
    """The same mechanism outside ALCE: the helpcentre agent would find its password
    articles; with documents of its own the case sees only those."""
    own = {
        "entity_type": "note",
        "entity_id": "reset",
        "translations": {
            "en": {"title": "Reset note", "content": "The password reset link is valid for 5 days."}
        },
    }
    case = {
        "id": "own-docs",
        "agent": "helpcentre",
        "turns": [{"question": "How long is the password reset link valid?"}],
        "documents": [own],
    }
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "own"\ndatasets = ["cases.jsonl"]\nscorers = ["citation_precision"]\n',
        encoding="utf-8",
    )
    [record] = run(suite, out_dir=tmp_path / "out", progress=False).records
    [turn] = record.turns
    assert [s.uri for s in turn.sources] == ["entity:note/reset"]
    assert {s.uri for s in turn.seen} == {"entity:note/reset"}
    assert "5 days" in turn.text


def test_an_alce_entry_named_as_a_dataset_is_an_error(tmp_path: Path) -> None:
    path = _suite(tmp_path, ITEMS)
    (tmp_path / "asqa.jsonl").write_text(
        json.dumps({"id": "c", "turns": [{"question": "Q?"}]}) + "\n", encoding="utf-8"
    )
    text = path.read_text(encoding="utf-8").replace(
        "models =", 'datasets = ["asqa.jsonl"]\nmodels ='
    )
    path.write_text(text, encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"key alce\.0\.name: 'asqa' is also the name of a dataset"
    ):
        plan_run(load_suite(path))


def test_an_interrupted_suite_run_asks_only_for_the_alce_answers_it_had_not_kept(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    run(_suite(tmp_path, ITEMS), out_dir=out, progress=False)
    [written] = (out / "alce").glob("*.json")
    first = json.loads(written.read_text(encoding="utf-8"))
    # As an interrupted run leaves it: item 1's answer kept (with an output no model gives),
    # then a line cut short; no result file yet, no record, no cached call.
    partial = written.with_suffix(".partial.jsonl")
    runs = plan_run(load_suite(_suite(tmp_path, ITEMS)))
    [job] = [j for j in AlceSuiteRun(runs.suite, runs.models, out).pending() if j.index == 1]
    kept = {"key": job.partial_key, "output": "Kept before the interruption [1]."}
    partial.write_text(json.dumps(kept) + '\n{"key": "cut sh', encoding="utf-8")
    written.unlink()
    (out / "records.jsonl").unlink()
    result = run(_suite(tmp_path, ITEMS), out_dir=out, progress=False, cache=False)
    again = json.loads(written.read_text(encoding="utf-8"))
    assert [item["output"] for item in again["data"]] == [
        first["data"][0]["output"],
        "Kept before the interruption [1].",
        first["data"][2]["output"],
    ]
    assert not partial.exists()
    calls = json.loads((out / "run.json").read_text(encoding="utf-8"))["model_cache"]
    assert calls["extractive (alce_prompt)"] == {"hits": 0, "misses": 2}
    [record] = [r for r in result.records if r.variant == "alce_prompt" and r.case_id == "q1"]
    assert record.turns[0].text == "Kept before the interruption [1]."


def test_a_completions_model_on_a_chat_entry_is_refused_before_any_case_runs(
    tmp_path: Path,
) -> None:
    path = _suite(tmp_path, ITEMS)
    text = path.read_text(encoding="utf-8").replace(
        'models = ["extractive"]', 'models = ["extractive", "openai-completions:some-model"]'
    )
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(
        ConfigError,
        match=r"key alce\.0: model 'openai-completions:some-model' is a completions .*chat = false",
    ):
        run(path, out_dir=out, progress=False)
    assert not (out / "records.jsonl").exists()  # no case of the extractive model ran either
