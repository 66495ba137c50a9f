import json
from pathlib import Path

import pytest

from citelab import InvalidInput
from citelab.corpus import Corpus, Document
from citelab.evals import Case, GoldTurn, check_dataset, load_dataset


def _case(**overrides: object) -> dict[str, object]:
    case: dict[str, object] = {
        "id": "fees-1",
        "agent": "university",
        "reader": {"user_id": "u1", "roles": ["staff"], "langcode": "de"},
        "turns": [
            {
                "question": "When are fees due?",
                "claims": [{"text": "Fees are due in May", "supported_by": ["entity:page/fees"]}],
                "must_cite": ["entity:page/fees"],
            },
            {"question": "And for part-time students?", "min_searches": 2},
        ],
        "tags": ["multi_turn", "multi_round"],
    }
    case.update(overrides)
    return case


def _write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines),
        encoding="utf-8",
    )
    return path


def test_a_valid_dataset_loads_with_its_reader_and_turns(tmp_path: Path) -> None:
    dataset = load_dataset(
        _write(
            tmp_path,
            _case(),
            "",
            _case(
                id="fees-2", turns=[{"question": "Who won the 1950 cup?", "expect_answer": False}]
            ),
        )
    )
    assert dataset.name == "cases"
    assert [case.id for case in dataset] == ["fees-1", "fees-2"]
    first = dataset.cases[0]
    reader = first.reader.to_reader()
    assert reader.user_id == "u1"
    assert reader.roles == frozenset({"staff"})
    assert reader.langcode == "de"
    assert first.turns[1].min_searches == 2
    assert dataset.cases[1].turns[0].expect_answer is False
    assert dataset.agents == ["university"]


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        (_case(turns=[]), "cases.jsonl:2: field turns"),
        (_case(turns=[{"question": "  "}]), "cases.jsonl:2: field turns.0.question"),
        (
            _case(turns=[{"question": "q", "claims": [{"text": "x", "supported_by": ["node/5"]}]}]),
            "cases.jsonl:2: field turns.0.claims.0.supported_by",
        ),
        (_case(reader={"langcode": "German"}), "cases.jsonl:2: field reader.langcode"),
        (_case(extra=1), "cases.jsonl:2: field extra"),
        (_case(tags=["Same Label"]), "cases.jsonl:2: field tags"),
        (
            _case(
                turns=[
                    {
                        "question": "q",
                        "expect_answer": False,
                        "claims": [{"text": "x", "supported_by": ["entity:a/b"]}],
                    }
                ]
            ),
            "cases.jsonl:2: field turns.0",
        ),
    ],
)
def test_a_bad_case_is_reported_with_line_and_field(
    tmp_path: Path, bad: dict[str, object], where: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        load_dataset(_write(tmp_path, _case(id="ok"), bad))
    assert where in str(caught.value)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = _write(tmp_path, "{not json", _case(), _case(), _case(id="x", turns=[]))
    with pytest.raises(InvalidInput) as caught:
        load_dataset(path)
    message = str(caught.value)
    assert "3 problem(s)" in message
    assert "cases.jsonl:1: invalid JSON" in message
    assert "cases.jsonl:3: field id: duplicate 'fees-1' (first on line 2)" in message
    assert "cases.jsonl:4: field turns" in message


def test_missing_and_empty_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot read dataset"):
        load_dataset(tmp_path / "nope.jsonl")
    with pytest.raises(InvalidInput, match="has no cases"):
        load_dataset(_write(tmp_path, ""))


def test_a_turn_cannot_require_and_forbid_one_entity() -> None:
    with pytest.raises(ValueError, match="both required and forbidden"):
        GoldTurn(question="q", must_cite=["entity:a/1"], must_not_cite=["entity:a/1"])


def test_check_dataset_names_unknown_agents_and_entities(tmp_path: Path) -> None:
    dataset = load_dataset(_write(tmp_path, _case(), _case(id="other", agent="nobody")))
    corpus = Corpus(
        [Document(entity_type="page", entity_id="deadlines", translations={"en": {"title": "D"}})],
        name="uni",
    )
    problems = check_dataset(dataset, {"university": corpus})
    assert "case fees-1 turn 0: entity:page/fees is not in uni" in problems
    assert "case other: no corpus for agent 'nobody'" in problems
    assert len(problems) == 3  # supported_by and must_cite both name the missing page


def test_cases_are_frozen() -> None:
    case = Case.model_validate(_case())
    with pytest.raises(ValueError, match="frozen"):
        case.id = "other"  # type: ignore[misc]
