"""Reading a run's records.jsonl back: what the runner resumes from and compare and rescore
read."""

from __future__ import annotations

from pathlib import Path

from citelab.evals import CaseRecord
from citelab.evals.records import read_records

from .._builders import record


def case(key: str, text: str) -> CaseRecord:
    return CaseRecord(
        key=key,
        variant="baseline",
        model="extractive",
        dataset="demo",
        case_id=key,
        turns=[record(text)],
    )


def test_every_record_is_read_and_blank_lines_are_skipped(tmp_path: Path) -> None:
    first, second = case("a", "Fees are due in May [1]."), case("b", "It opens at 8 [2].")
    path = tmp_path / "records.jsonl"
    path.write_text(f"{first.model_dump_json()}\n\n{second.model_dump_json()}\n")
    assert read_records(path) == {"a": first, "b": second}


def test_a_torn_last_line_is_skipped_and_a_later_line_wins(tmp_path: Path) -> None:
    old, new = case("a", "Fees are due in June [1]."), case("a", "Fees are due in May [1].")
    path = tmp_path / "records.jsonl"
    torn = new.model_dump_json()[:40]
    path.write_text(f"{old.model_dump_json()}\n{new.model_dump_json()}\n{torn}", encoding="utf-8")
    assert read_records(path) == {"a": new}


def test_no_file_is_no_records(tmp_path: Path) -> None:
    assert read_records(tmp_path / "records.jsonl") == {}
