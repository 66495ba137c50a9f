"""What a run recorded: per case and turn, everything the scorers read (answers, sources,
rounds, restricted entities), and the run's ``records.jsonl`` they are read back from."""

from citelab.evals.records._file import read_records
from citelab.evals.records._records import (
    CaseRecord,
    RestrictedEntity,
    RoundRecord,
    SourceRecord,
    TurnRecord,
)

__all__ = [
    "CaseRecord",
    "RestrictedEntity",
    "RoundRecord",
    "SourceRecord",
    "TurnRecord",
    "read_records",
]
