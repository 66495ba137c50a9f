"""Many records scored at once when a judge asks a model: the scoring side of
:mod:`citelab.evals.judges`' deferring (each record one task, see :func:`score_concurrently`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from citelab.evals.dataset import Case
from citelab.evals.judges import DeferringJudge, score_concurrently
from citelab.evals.records import CaseRecord
from citelab.evals.results._results import ScoredRows, score_record
from citelab.evals.scorers import Scorer

__all__ = ["concurrent_judges", "score_records_concurrently"]


def concurrent_judges(scorers: Sequence[Scorer]) -> list[DeferringJudge]:
    """The deferring judges the scorers use (each once), in order."""
    found: dict[int, DeferringJudge] = {}
    for scorer in scorers:
        judge = getattr(scorer, "judge", None)
        if isinstance(judge, DeferringJudge):
            found.setdefault(id(judge), judge)
    return list(found.values())


def score_records_concurrently(
    records: Sequence[CaseRecord],
    cases: Mapping[tuple[str, str], Case],
    scorers: Sequence[Scorer],
    concurrency: int | None = None,
) -> list[ScoredRows]:
    """:func:`~citelab.evals.score_record` on every record, in order; with a model judge among
    the scorers' judges, ``concurrency`` records (default: the judges' largest bound) at once."""
    judges = concurrent_judges(scorers)
    if not judges:
        return [score_record(record, cases, scorers) for record in records]
    bound = concurrency or max(judge.concurrency for judge in judges)
    tasks = [_scoring(record, cases, scorers) for record in records]
    return score_concurrently(tasks, judges, bound)


def _scoring(
    record: CaseRecord, cases: Mapping[tuple[str, str], Case], scorers: Sequence[Scorer]
) -> Callable[[], ScoredRows]:
    return lambda: score_record(record, cases, scorers)
