"""The ``local`` executor: everything in this process, in one event loop.

Cases are answered at most ``concurrency`` at a time (their model calls wait on the network,
not on this process). Records are scored one after the other; with a model judge (the LLM
judge) many records are scored at once in one event loop, *deferring*: each unknown verdict
is asked (within the judge's own bound) while other records score, and the record is scored
again once it is known (see :mod:`citelab.evals.judges`' :func:`score_deferring`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any

from citelab._async import run_blocking
from citelab.evals.execution._protocol import AnswerFigures, Answering
from citelab.evals.execution._scoring import ScoringJob
from citelab.evals.judges import DeferringJudge, score_deferring
from citelab.evals.records import CaseRecord
from citelab.evals.results import ScoredRows, score_record, score_rows

__all__ = ["LocalExecutor", "answer_here"]


class LocalExecutor:
    """This process: cases answered in its event loop, records scored here."""

    name = "local"

    async def answer(
        self,
        answering: Answering,
        indices: Sequence[int],
        keep: Callable[[CaseRecord], None],
        scoring: ScoringJob,
    ) -> AnswerFigures:
        return await answer_here(answering, indices, keep)

    def prepare(self, scoring: ScoringJob) -> None:
        return None

    def score(self, scoring: ScoringJob, records: Sequence[CaseRecord]) -> ScoredRows:
        judges = scoring.judges()
        if not judges:
            return score_rows(records, scoring.cases, scoring.scorers)
        bound = scoring.concurrency or max(judge.concurrency for judge in judges)
        if bound < 1:
            raise ValueError(f"concurrency must be at least 1, got {bound}")
        return ScoredRows.concat(run_blocking(_score_deferring(records, scoring, judges, bound)))

    def config(self) -> dict[str, Any]:
        return {"name": self.name}

    def close(self) -> None:
        return None


async def answer_here(
    answering: Answering, indices: Sequence[int], keep: Callable[[CaseRecord], None]
) -> AnswerFigures:
    """Set ``answering`` up, answer the cases at ``indices`` in this event loop (at most its
    ``concurrency`` at once), give each record to ``keep`` as it comes, and close it."""
    figures = AnswerFigures()
    began = time.perf_counter()
    try:
        await answering.set_up(indices)
        figures.setup_seconds = time.perf_counter() - began
        began, cpu = time.perf_counter(), time.process_time()
        slots = asyncio.Semaphore(answering.concurrency)

        async def one(index: int) -> None:
            async with slots:
                record = await answering.answer(index)
            keep(record)

        await _all_or_none(one(index) for index in indices)
        figures.seconds = time.perf_counter() - began
        figures.cpu_seconds = time.process_time() - cpu
    finally:
        # Connections belong to this event loop: closed before it ends.
        await answering.aclose()
    figures.model_calls = answering.model_calls()
    figures.streaming = dict(answering.streaming)
    return figures


async def _all_or_none(coroutines: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run ``coroutines`` concurrently; when one fails or the run is cancelled (Ctrl-C), cancel
    the others and wait for them before raising, so that none outlives the files and
    connections its caller closes next (gather alone returns at the first failure)."""
    running = [asyncio.ensure_future(coroutine) for coroutine in coroutines]
    try:
        await asyncio.gather(*running)
    except BaseException:
        for future in running:
            future.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        raise


async def _score_deferring(
    records: Sequence[CaseRecord],
    scoring: ScoringJob,
    judges: Sequence[DeferringJudge],
    concurrency: int,
) -> list[ScoredRows]:
    """Each record's rows, in order, at most ``concurrency`` records at once; the judges'
    connections are closed after."""
    slots = asyncio.Semaphore(concurrency)

    async def one(record: CaseRecord) -> ScoredRows:
        async with slots:
            return await score_deferring(
                lambda: score_record(record, scoring.cases, scoring.scorers)
            )

    running = [asyncio.ensure_future(one(record)) for record in records]
    try:
        return list(await asyncio.gather(*running))
    except BaseException:
        for future in running:
            future.cancel()  # none of them may use a connection closed below
        await asyncio.gather(*running, return_exceptions=True)
        raise
    finally:
        for judge in judges:
            await judge.aclose()
