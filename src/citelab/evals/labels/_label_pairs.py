"""A run's citations as pairs to label: each cited passage beside the statement citing it.

:func:`label_pairs` reads what a run recorded — an :class:`EvalResult` in memory (from
``run``, ``rescore``, ``score_answers`` or ``load_run``), a run folder written by ``citelab
eval`` (its ``run.json`` and ``records.jsonl``), a ``records.jsonl`` file, or
:class:`~citelab.evals.CaseRecord` s — and makes one :class:`~citelab.evals.labels.LabelItem` per
citation (``unit="citation"``: the statement and the one passage it cites, the question
citation precision asks of each citation) or per cited statement (``unit="statement"``: the
statement and all its cited passages together, the question citation recall asks).

Statements are split as the metric the pairs label splits them: ``statements`` is that
metric's splitter (a citation scorer's ``statements`` method: an ``alce_compat`` scorer
splits with NLTK's punkt), by default citelab's own
(:func:`~citelab.evals.scorers.split_statements`,
what citelab's citation recall and precision score: the claim is the sentence without its
markers), and a statement's citations are the ones that metric scores (its scorer's
``cited_numbers``: after its cap, read as ALCE's positions when ``alce_compat``; a statement
citing a number with no source gives no pair), so a pair's id names a unit the metric scored;
a passage is the source's text as the run's judge read it (``Title: …`` and the content);
the span marked in it is the sentence(s) the claim rests on
(:func:`citelab.sources.supporting_span`). Failed turns and substituted no-answers have
nothing to label; a citation of a number with no source, or of a source without a passage,
is left out and counted (:attr:`LabelPairs.left_out`). Pairs come sorted by variant, model,
dataset and case, then in the answers' order, however the run was read.

Ids are derived from where the pair sits, so they are the same in every session and from
every way of reading the run: ``<run>/<variant>/<model>/<dataset>/<case>/turn-<t>/
statement-<s>/citation-<n>`` (``citations-<n>+<m>`` for a statement). ``<run>`` is the
suite's name (``citelab eval``), the scored file's name (``citelab score``), else the
folder's name; give ``run`` to choose it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, cast, runtime_checkable

from citelab._errors import InvalidInput
from citelab.evals.labels._label_queue import LabelItem, LabelPassage
from citelab.evals.records import CaseRecord, SourceRecord, TurnRecord, read_records
from citelab.evals.scorers import Statement, split_statements

__all__ = ["PAIR_UNITS", "LabelPairs", "PairSource", "PairUnit", "label_pairs", "run_name"]

PairUnit = Literal["citation", "statement"]
PAIR_UNITS: tuple[PairUnit, ...] = ("citation", "statement")


@runtime_checkable
class RunResult(Protocol):
    """What pairs read of a result (an :class:`~citelab.evals.EvalResult`): its records and
    the configuration that names the run. Labels sit below results, so the type is structural."""

    @property
    def records(self) -> Sequence[CaseRecord]: ...

    @property
    def config(self) -> Mapping[str, Any]: ...


Splitter = Callable[[TurnRecord], Sequence[Statement]]
"""How a metric splits a turn into statements (a citation scorer's ``statements``)."""

PairSource = RunResult | str | os.PathLike[str] | Iterable[CaseRecord]
"""What pairs are read from: a result, a run folder or ``records.jsonl``, or records."""

_NO_SOURCE = "citations of a number with no source"
_NO_PASSAGE = "citations of a source without a passage"


@dataclass(frozen=True)
class LabelPairs:
    """The pairs of a run."""

    run: str
    """The run's name, the first part of every id."""
    items: list[LabelItem]
    unit: PairUnit = "citation"
    left_out: dict[str, int] = field(default_factory=dict)
    """Citations (or statements) that could not become a pair, by reason."""


def label_pairs(
    source: PairSource,
    *,
    unit: PairUnit = "citation",
    run: str | None = None,
    statements: Splitter | None = None,
) -> LabelPairs:
    """The pairs to label of ``source`` (see the module docs); ``statements``: the splitter
    of the metric they label (default: a result's first citation metric's, else citelab's
    own)."""
    if unit not in PAIR_UNITS:
        raise InvalidInput(f"unknown unit {unit!r}; choose one of {', '.join(PAIR_UNITS)}")
    name, records = _records(source)
    chosen = run if run is not None else name
    if not chosen:
        raise InvalidInput("run names the pairs' ids: give a non-empty name")
    left: Counter[str] = Counter()
    # In the records' order of variant, model, dataset and case: the same however read.
    records.sort(key=lambda r: (r.variant, r.model, r.dataset, r.case_id))
    split = statements if statements is not None else _run_split(source)
    items = [
        item for record in records for item in _record_pairs(record, chosen, unit, left, split)
    ]
    return LabelPairs(chosen, items, unit, dict(left))


def _records(source: PairSource) -> tuple[str, list[CaseRecord]]:
    """The run's name and its records."""
    if isinstance(source, RunResult):
        if not source.records:
            raise InvalidInput(
                "this result holds no records (answers and sources): label from the run's "
                "folder, or a result of run, rescore, score_answers or load_run"
            )
        return run_name(source.config, "run"), list(source.records)
    if isinstance(source, str | os.PathLike):
        return _read_run(Path(source))
    records = list(source)
    wrong = [type(r).__name__ for r in records if not isinstance(r, CaseRecord)]
    if wrong:
        raise InvalidInput(
            f"expected a result, a run folder or CaseRecords, got {', '.join(sorted(set(wrong)))}"
        )
    return "run", records


def _read_run(path: Path) -> tuple[str, list[CaseRecord]]:
    folder, records_file = (path, path / "records.jsonl") if path.is_dir() else (path.parent, path)
    if not path.exists():
        raise InvalidInput(f"{path}: no such run folder or records file")
    config = _run_json(folder)
    if not records_file.is_file():
        why = (
            "citelab score keeps no answers in its folder: pass the result of score_answers(...) "
            "instead"
            if config.get("command") == "score"
            else "a run folder written by citelab eval has one"
        )
        raise InvalidInput(f"{folder}: no records.jsonl (the answers and their sources); {why}")
    records = list(read_records(records_file).values())
    if not records:
        raise InvalidInput(f"{records_file}: no records (an empty or unfinished run?)")
    return run_name(config, folder.resolve().name), records


def _run_json(folder: Path) -> dict[str, Any]:
    path = folder / "run.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path}: not readable as JSON ({exc})") from exc
    return data if isinstance(data, dict) else {}


def run_name(config: Mapping[str, Any], fallback: str) -> str:
    """A run's name from its ``run.json`` configuration: the suite's name (``citelab
    eval``), the scored file's stem (``citelab score``), else ``fallback``."""
    suite = config.get("suite")
    if isinstance(suite, Mapping) and isinstance(suite.get("name"), str) and suite["name"]:
        return str(suite["name"])
    scored = config.get("input")
    if config.get("command") == "score" and isinstance(scored, str) and scored:
        return Path(scored).stem
    return fallback


@dataclass(frozen=True)
class _Turn:
    """A turn being read into pairs: where it sits, and its sources by number."""

    run: str
    record: CaseRecord
    turn: TurnRecord
    sources: Mapping[int, SourceRecord]

    def head(self, statement: Statement) -> str:
        """The id of ``statement``'s pairs, up to the citation part."""
        record = self.record
        parts = (self.run, record.variant, record.model, record.dataset, record.case_id)
        return "/".join([*parts, f"turn-{self.turn.turn}", f"statement-{statement.index}"])

    def item(self, pair_id: str, statement: Statement, cited: list[SourceRecord]) -> LabelItem:
        passages = tuple(
            LabelPassage(
                text=source.content,
                evidence=source.evidence,
                title=source.title,
                uri=source.uri,
                number=source.number,
            )
            for source in cited
        )
        origin = {
            "run": self.run,
            "variant": self.record.variant,
            "model": self.record.model,
            "dataset": self.record.dataset,
            "case": self.record.case_id,
            "turn": self.turn.turn,
            "statement": statement.index,
            "citations": [source.number for source in cited],
            "uris": [source.uri for source in cited],
            "question": self.turn.question,
        }
        return LabelItem(id=pair_id, claim=statement.claim, passages=passages, origin=origin)


Citing = Callable[[TurnRecord, Statement], "tuple[int, ...] | None"]
"""Which source numbers a metric scores for a statement (a citation scorer's
``cited_numbers``): None when the metric scores none of them."""


def _citelab_split(turn: TurnRecord) -> Sequence[Statement]:
    return split_statements(turn.text)


def _as_written(turn: TurnRecord, statement: Statement) -> tuple[int, ...]:
    return statement.citations


def _run_split(source: PairSource) -> Splitter:
    """A result's first citation metric's splitter (an ``alce_compat`` run's is punkt's),
    else citelab's own."""
    for scorer in getattr(source, "scorers", None) or ():
        split = getattr(scorer, "statements", None)
        if callable(split):
            return cast("Splitter", split)
    return _citelab_split


def _citing(split: Splitter) -> Citing:
    """How the metric whose splitter is ``split`` reads a statement's citations: its
    scorer's ``cited_numbers`` (the cap, ALCE's positions), else as written."""
    cited = getattr(getattr(split, "__self__", None), "cited_numbers", None)
    return cast("Citing", cited) if callable(cited) else _as_written


_OUT_OF_RANGE = "statements the metric scores no citation of (a number names no source)"


def _record_pairs(
    record: CaseRecord, run: str, unit: PairUnit, left: Counter[str], split: Splitter
) -> Iterator[LabelItem]:
    citing = _citing(split)
    for turn in record.turns:
        if turn.error is not None or turn.no_answer:
            continue
        where = _Turn(run, record, turn, {source.number: source for source in turn.sources})
        for statement in split(turn):
            if not statement.citations:
                continue
            numbers = citing(turn, statement)
            if numbers is None:
                left[_OUT_OF_RANGE] += 1
            elif numbers:
                scored = dataclasses.replace(statement, citations=numbers)
                yield from _statement_pairs(where, scored, unit, left)


def _statement_pairs(
    where: _Turn, statement: Statement, unit: PairUnit, left: Counter[str]
) -> Iterator[LabelItem]:
    head = where.head(statement)
    if unit == "statement":
        cited = _cited(where.sources, statement.citations, left)
        if len(cited) == len(statement.citations):
            numbers = "+".join(str(n) for n in statement.citations)
            yield where.item(f"{head}/citations-{numbers}", statement, cited)
        return
    # A number cited twice in one statement (ALCE's splitter keeps both) is one pair.
    for number in dict.fromkeys(statement.citations):
        cited = _cited(where.sources, (number,), left)
        if cited:
            yield where.item(f"{head}/citation-{number}", statement, cited)


def _cited(
    sources: Mapping[int, SourceRecord], numbers: tuple[int, ...], left: Counter[str]
) -> list[SourceRecord]:
    """The sources of ``numbers`` that can be shown; the others counted in ``left``."""
    found = []
    for number in numbers:
        source = sources.get(number)
        if source is None:
            left[_NO_SOURCE] += 1
        elif not source.content.strip():
            left[_NO_PASSAGE] += 1
        else:
            found.append(source)
    return found
