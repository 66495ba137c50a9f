"""A run's ``records.jsonl``: one :class:`~citelab.evals.CaseRecord` a line, appended as each
case finishes, so a run resumes after the last line written and is scored again without any
model call. Reading skips a line that is not a valid record (a torn last line, left by an
interrupted write); when a key appears twice, the later line wins.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from citelab.evals.records._records import CaseRecord

__all__ = ["read_records"]


def read_records(path: Path) -> dict[str, CaseRecord]:
    """Record key → record, of every valid line of ``path`` (none when there is no file)."""
    if not path.is_file():
        return {}
    records: dict[str, CaseRecord] = {}
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            record = CaseRecord.model_validate_json(line)
        except ValidationError:
            continue
        records[record.key] = record
    return records
