"""A run's ``records.jsonl``: one :class:`~citelab.evals.CaseRecord` a line, appended as each
case finishes, so a run resumes after the last line written and is scored again without any
model call. Reading skips a line that is not a valid record (a torn last line, left by an
interrupted write); when a key appears twice, the later line wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from citelab._memory import paused_garbage_collection
from citelab.evals.records._records import CaseRecord

__all__ = ["RecordsFile", "read_records", "read_records_file"]


@dataclass(frozen=True)
class RecordsFile:
    """Where records were read from (``records.jsonl``): each record's line as a byte span,
    and the file's size and modification time then. A Ray worker that can read the very same
    file (a local cluster; on a real one, an output folder on a shared file system) reads the
    records it scores from it instead of being sent them (see the executors' ``score``)."""

    path: str
    size: int
    mtime_ns: int
    spans: Mapping[str, tuple[int, int]]
    """Record key → ``(start, stop)``: the bytes of its line (the last valid one)."""


def read_records(path: Path) -> dict[str, CaseRecord]:
    """Records already written; a torn last line (an interrupted write) is ignored."""
    return read_records_file(path)[0]


def read_records_file(path: Path) -> tuple[dict[str, CaseRecord], RecordsFile | None]:
    """:func:`read_records`, and where each record's line is in the file (None: no file)."""
    if not path.is_file():
        return {}, None
    stat = path.stat()
    data = path.read_bytes()
    records: dict[str, CaseRecord] = {}
    spans: dict[str, tuple[int, int]] = {}
    # Every record read stays alive: collections while they pile up walked all of them for
    # nothing (more than half of the reading time of 4,000 records, measured).
    with paused_garbage_collection():
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            stop = len(data) if end < 0 else end
            line = data[start:stop]
            if line.strip():
                try:
                    record = CaseRecord.model_validate_json(line)
                except ValidationError:
                    pass
                else:
                    records[record.key] = record
                    spans[record.key] = (start, stop)
            start = stop + 1
    return records, RecordsFile(str(path.resolve()), len(data), stat.st_mtime_ns, spans)
