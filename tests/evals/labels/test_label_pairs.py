"""A run's citations as pairs to label: read from a real run's folder, its result in memory, or
records; the claims are the citation scorer's own; ids derived from where a pair sits."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from citelab import InvalidInput
from citelab._paths import fixtures_dir
from citelab.evals import (
    CaseRecord,
    EvalResult,
    label_pairs,
    load_run,
    run,
    score_answers,
)
from citelab.evals.records import SourceRecord
from citelab.sources import supporting_span
from evals._builders import record

CASES = [
    {"id": "fee", "agent": "university", "turns": [{"question": "How much is the semester fee?"}]},
    {
        "id": "msc",
        "agent": "university",
        "turns": [
            {"question": "How many ECTS credits is the Data Science MSc worth?"},
            {"question": "When do applications for it close?"},
        ],
    },
]

SUITE = """
name = "labelling"
datasets = ["cases.jsonl"]
scorers = ["citation_recall", "citation_precision"]

[[models]]
spec = "extractive"

[[models]]
spec = "perturbed"
label = "perturbed"
options = { inner = "extractive", seed = 3, rates = { wrong = 0.5 } }

[[variants]]
name = "baseline"
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, EvalResult]]:
    """A real run of a small suite (the offline model, and the same with wrong citations)."""
    folder = tmp_path_factory.mktemp("run")
    (folder / "cases.jsonl").write_text(
        "".join(json.dumps(case) + "\n" for case in CASES), encoding="utf-8"
    )
    (folder / "suite.toml").write_text(SUITE, encoding="utf-8")
    result = run(folder / "suite.toml", out_dir=folder / "out", progress=False)
    return folder / "out", result


def test_a_run_folder_gives_one_pair_per_citation(ran: tuple[Path, EvalResult]) -> None:
    out, result = ran
    pairs = label_pairs(out)
    assert pairs.run == "labelling"  # the suite's name
    assert pairs.left_out == {}
    # The claims and numbers are those citation precision scored, one pair per citation.
    table = result.to_pandas("citation")
    precision = table[table["metric"] == "citation_precision"]
    scored = {
        (r.model, r.case_id, int(r.turn), int(r.statement), int(r.number), r.claim)
        for r in precision.itertuples()
    }
    found = {
        (
            item.origin["model"],
            item.origin["case"],
            item.origin["turn"],
            item.origin["statement"],
            item.origin["citations"][0],
            item.claim,
        )
        for item in pairs.items
    }
    assert found == scored
    assert len(pairs.items) == len(precision) > 4
    assert {item.origin["model"] for item in pairs.items} == {"extractive", "perturbed"}


def test_ids_say_where_each_pair_sits_and_are_the_same_every_way(
    ran: tuple[Path, EvalResult],
) -> None:
    out, result = ran
    from_folder = label_pairs(out)
    for other in (
        label_pairs(result),
        label_pairs(load_run(out)),
        label_pairs(out / "records.jsonl"),
    ):
        assert [item.id for item in other.items] == [item.id for item in from_folder.items]
        assert other.items == from_folder.items
    item = from_folder.items[0]
    origin = item.origin
    assert item.id == (
        f"labelling/baseline/{origin['model']}/cases/{origin['case']}/turn-{origin['turn']}/"
        f"statement-{origin['statement']}/citation-{origin['citations'][0]}"
    )
    assert set(origin) == {
        "run", "variant", "model", "dataset", "case", "turn", "statement", "citations", "uris",
        "question",
    }  # fmt: skip
    assert len({i.id for i in from_folder.items}) == len(from_folder.items)
    renamed = label_pairs(out, run="mine")
    assert all(i.id.startswith("mine/baseline/") for i in renamed.items)
    assert renamed.items[0].origin["run"] == "mine"


def test_each_passage_is_what_the_judge_read_and_marks_the_supporting_sentence(
    ran: tuple[Path, EvalResult],
) -> None:
    out, result = ran
    by_key = {
        (r.variant, r.model, r.dataset, r.case_id, t.turn): t
        for r in result.records
        for t in r.turns
    }
    for item in label_pairs(out).items:
        origin = item.origin
        turn = by_key[("baseline", origin["model"], "cases", origin["case"], origin["turn"])]
        [passage] = item.passages
        source = next(s for s in turn.sources if s.number == passage.number)
        assert passage.text == source.content
        assert item.evidence == [source.evidence]  # "Title: …" and the content
        assert origin["uris"] == [source.uri]
        span = supporting_span(item.claim, source.content)
        whole = span == (0, len(source.content))
        assert passage.cited_span(item.claim) == (None if whole else span)


def test_a_pair_per_cited_statement(ran: tuple[Path, EvalResult]) -> None:
    out, _ = ran
    citations = label_pairs(out).items
    statements = label_pairs(out, unit="statement").items
    per_statement = {i.id.rsplit("/", 1)[0] for i in citations}
    assert len(statements) == len(per_statement)
    for item in statements:
        head, last = item.id.rsplit("/", 1)
        numbers = [int(n) for n in last.removeprefix("citations-").split("+")]
        assert item.origin["citations"] == numbers
        assert [p.number for p in item.passages] == numbers
        singles = [i for i in citations if i.id.rsplit("/", 1)[0] == head]
        assert [i.passages[0] for i in singles] == list(item.passages)


def test_scored_answers_in_memory_are_pairs_too() -> None:
    result = score_answers(fixtures_dir() / "alce" / "lindholm_results.json", "alce")
    pairs = label_pairs(result)
    assert pairs.run == "lindholm_results"
    assert pairs.items
    assert all(
        i.id.startswith("lindholm_results/answers/alce/lindholm_results/") for i in pairs.items
    )


def test_what_cannot_be_shown_is_left_out_and_counted() -> None:
    turns = [
        record("Fees are due in May [1]. Parking costs 30 euros [3]."),  # [3]: no source
        record("The library opens at 8 am [2].", error="model failed"),  # failed: nothing
        record("Fees are due in May [1].", no_answer=True),  # substituted: nothing
    ]
    empty = record("Fees are due in May [1].").model_copy(
        update={"sources": [SourceRecord(number=1, uri="entity:page/x", title="X", content="")]}
    )
    cases = [
        CaseRecord(key=f"k{i}", variant="v", model="m", dataset="d", case_id=f"c{i}", turns=[turn])
        for i, turn in enumerate([*turns, empty])
    ]
    pairs = label_pairs(cases)
    assert [i.id for i in pairs.items] == ["run/v/m/d/c0/turn-0/statement-0/citation-1"]
    assert pairs.left_out == {
        "citations of a number with no source": 1,
        "citations of a source without a passage": 1,
    }
    statements = label_pairs(cases, unit="statement")
    assert [i.id for i in statements.items] == ["run/v/m/d/c0/turn-0/statement-0/citations-1"]


def test_bad_sources_are_clear_errors(tmp_path: Path, ran: tuple[Path, EvalResult]) -> None:
    out, result = ran
    with pytest.raises(InvalidInput, match="no such run folder or records file"):
        label_pairs(tmp_path / "missing")
    (tmp_path / "evalrun").mkdir()
    (tmp_path / "evalrun" / "run.json").write_text(json.dumps({"suite": {"name": "x"}}))
    with pytest.raises(InvalidInput, match=r"no records\.jsonl .* citelab eval has one"):
        label_pairs(tmp_path / "evalrun")
    (tmp_path / "scored").mkdir()
    (tmp_path / "scored" / "run.json").write_text(json.dumps({"command": "score"}))
    with pytest.raises(InvalidInput, match="pass the result of score_answers"):
        label_pairs(tmp_path / "scored")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "records.jsonl").write_text("")
    with pytest.raises(InvalidInput, match="no records"):
        label_pairs(tmp_path / "empty")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "run.json").write_text("{oops")
    (tmp_path / "broken" / "records.jsonl").write_text("")
    with pytest.raises(InvalidInput, match=r"run\.json: not readable as JSON"):
        label_pairs(tmp_path / "broken")
    with pytest.raises(InvalidInput, match="unknown unit 'answer'"):
        label_pairs(out, unit="answer")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="holds no records"):
        label_pairs(EvalResult(result.scores, result.turns, {}, []))
    with pytest.raises(InvalidInput, match="got dict"):
        label_pairs([{"key": "x"}])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="non-empty name"):
        label_pairs(out, run="")


def test_pairs_name_the_citations_the_metric_scores_after_its_cap_and_range(
    tmp_path: Path,
) -> None:
    """ALCE-compatible metrics count a statement's first three citations, and none of a
    statement citing a number with no document: the pairs are those units, so every pair
    labelled is a unit a metric scored (before, the fourth citation's pair named no unit)."""
    docs = [{"title": f"Doc {n}", "text": f"Lindholm fact number {n} is true."} for n in range(5)]
    data = {
        "data": [
            {
                "id": "four",
                "question": "What is true of Lindholm?",
                "docs": docs,
                "output": "Lindholm fact number 1 is true [1][2][3][4]. "
                "Lindholm fact number 5 is true [9].",
            }
        ]
    }
    path = tmp_path / "capped.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = score_answers(path, "alce")
    pairs = label_pairs(result)
    assert [i.id.rsplit("/", 1)[1] for i in pairs.items] == [
        "citation-1",
        "citation-2",
        "citation-3",
    ]
    assert pairs.left_out == {
        "statements the metric scores no citation of (a number names no source)": 1
    }
    together = label_pairs(result, unit="statement")
    assert [i.id.rsplit("/", 1)[1] for i in together.items] == ["citations-1+2+3"]
    rows = [
        {
            "id": i.id,
            "claim": i.claim,
            "evidence": [p.text for p in i.passages],
            "label": "supported",
        }
        for i in [*pairs.items, *together.items]
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    corrected = result.corrected(labels=labels)
    assert set(corrected["method"]) >= {"judged", "ppi", "labels"}
