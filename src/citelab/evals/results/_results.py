"""Scoring recorded turns, and the results as pandas tables at four levels.

``score_records`` runs every scorer on every recorded turn. An :class:`EvalResult` then
answers at the level asked (``result.to_pandas(level=...)``):

``citation``   one row per citation-level unit (precision, stability, dangling, anchors…)
``statement``  one row per statement-level unit (recall, gold claims)
``case``       one row per answered turn, one column per metric
``variant``    one row per variant × model × metric: the value and its bootstrap interval

Variant values pool units the way each scorer says (``micro``: all units of all turns;
``macro``: the mean per turn). Confidence intervals resample *cases* (a conversation's turns
stay together) with a bootstrap seeded by the run's seed and the group, so an interval does
not change when other variants or metrics are added.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import numpy as np
import pandas as pd

from citelab._errors import InvalidInput
from citelab.evals._stats import (
    percentile_interval,
    resampled_sums,
    share_interval,
    too_few_units,
)
from citelab.evals.cards import JudgeCard
from citelab.evals.dataset import Case
from citelab.evals.labels import LabelSet, load_label_set
from citelab.evals.records import CaseRecord
from citelab.evals.results._judged import (
    JudgedMetric,
    correctable,
    corrected_table,
    judged_metrics,
    judged_units,
    method_rows,
    metric_cards,
)
from citelab.evals.results._labelled import (
    LABEL_DIFFERENCE_COLUMNS,
    LabelledUnits,
    attach_labels,
    label_differences,
    label_estimates,
)
from citelab.evals.results._usage import TOKEN_FACTS, run_prices, usage_table, with_costs
from citelab.evals.scorers import Scorer

__all__ = [
    "TURN_FACTS",
    "EvalResult",
    "Level",
    "ResultDisplay",
    "ScoredRows",
    "bootstrap_interval",
    "error_cause",
    "error_summary",
    "paired_bootstrap",
    "paired_differences",
    "result_of",
    "score_record",
    "score_records",
    "score_rows",
    "set_display",
    "summarize",
]

Level = Literal["citation", "statement", "case", "variant"]
_LEVELS: tuple[Level, ...] = ("citation", "statement", "case", "variant")
_KEYS = ["variant", "model", "dataset", "case_id", "turn"]
TURN_FACTS = [
    "tags",
    "question",
    "answer",
    "substituted",
    "expect_answer",
    "rounds",
    "searches",
    "sources",
    "dangling_reported",
    "error",
    "seconds",
    *TOKEN_FACTS,
]
_TURN_COLUMNS = [*_KEYS, *TURN_FACTS]
_SCORE_COLUMNS = [*_KEYS, "metric", "value", "numerator", "denominator"]


@dataclass
class EvalResult:
    """Scores of a run, with the configuration that produced them."""

    scores: pd.DataFrame
    """Long table: one row per turn × metric (value, numerator, denominator)."""
    turns: pd.DataFrame
    """One row per turn: keys and facts about the turn (rounds, sources, errors…)."""
    details: dict[str, pd.DataFrame]
    """Detail rows per level (``citation``, ``statement``)."""
    scorers: list[Scorer]
    config: dict[str, Any] = field(default_factory=dict)
    """The run's configuration (suite, scorers, versions), as written to ``run.json``."""
    seed: int = 0
    resamples: int = 1000
    records: list[CaseRecord] = field(default_factory=list)
    """The records scored (what the case browser shows: answers, sources, rounds)."""
    cases: Mapping[tuple[str, str], Case] = field(default_factory=dict)
    """``(dataset, case_id)`` → the case (its gold turns), for the records' cases."""
    judge_cards: list[JudgeCard] = field(default_factory=list)
    """Cards the user gave for the run's judges (a judge without one here has citelab's
    shipped card, or none: see :meth:`judges`)."""
    labels: LabelSet | None = None
    """People's labels of this run's units (by pair id), for :meth:`corrected`'s ``ppi``
    and ``labels`` rows."""

    def to_pandas(self, level: Level = "case") -> pd.DataFrame:
        """The results at ``level``; see the module docs."""
        if level == "variant":
            return self.summary()
        if level == "case":
            return self._cases()
        if level in self.details:
            return self.details[level].copy()
        raise InvalidInput(f"unknown level {level!r}; choose one of {', '.join(_LEVELS)}")

    def summary(
        self, by: Sequence[str] = (), subset: str = "all", scale: float = 1.0
    ) -> pd.DataFrame:
        """Variant level: per variant, model (and ``by`` columns) and metric, with intervals.

        ``subset`` keeps some turns only: ``all``, ``multi_round`` (turns of two or more
        model rounds), ``single_round``, or ``tag:<name>``. ``scale=100`` gives values and
        intervals as ALCE's tables print them (×100).
        """
        turns = select_turns(self.turns, subset)
        extra = [column for column in by if column not in _KEYS]
        scores = self.scores.merge(turns[[*_KEYS, *extra]], on=_KEYS)
        table = summarize(scores, self.scorers, by, self.seed, self.resamples)
        if scale != 1.0:
            table[["value", "ci_low", "ci_high"]] = table[["value", "ci_low", "ci_high"]] * scale
        return table

    def baseline(self) -> str | None:
        """The variant differences are taken against: ``baseline`` when a variant has that
        name, else the first variant run (None when nothing was)."""
        variants = list(dict.fromkeys(self.turns["variant"])) if not self.turns.empty else []
        if "baseline" in variants:
            return "baseline"
        return variants[0] if variants else None

    def differences(
        self, baseline: str | None = None, subset: str = "all", confidence: float = 0.95
    ) -> pd.DataFrame:
        """Each variant minus ``baseline`` (default :meth:`baseline`), per model and metric,
        on the cases both have a value for, with a paired bootstrap interval: the same cases
        are drawn for both sides in every resample, so what the cases share cancels out.

        Columns: ``variant``, ``model``, ``metric``, ``baseline``, ``difference``,
        ``ci_low``, ``ci_high``, ``cases`` (paired), ``units`` (the variant's, on those
        cases), ``excludes_zero`` (the interval lies wholly on one side of 0, and is not
        ``too_few``), ``higher_is_better``, ``too_few`` (fewer than 30 units, or every
        resample the same: the interval says nothing, and the report shows none).
        """
        base = baseline if baseline is not None else self.baseline()
        turns = select_turns(self.turns, subset)
        scores = self.scores.merge(turns[_KEYS], on=_KEYS)
        return paired_differences(
            scores,
            self.scorers,
            base,
            seed=self.seed,
            resamples=self.resamples,
            confidence=confidence,
        )

    def plot(self, kind: str = "differences", **options: Any) -> Any:
        """A matplotlib figure: ``differences`` (each variant minus the baseline, paired
        intervals), ``values`` (values with intervals) or ``stability`` (per round); one
        colour per variant, as in the report. None when there is nothing to plot."""
        return _display().plot(self, kind, **options)

    def report_html(self, title: str = "") -> str:
        """The HTML report of this result, as ``report.html`` shows it: with the findings
        and gates of the run's suite (``config["suite"]``) checked."""
        name = title or str(self.config.get("suite", {}).get("name", ""))
        return _display().html(self, None, name, gates=None)

    def show(self, height: int = 900, title: str = "") -> Any:
        """The report, case browser included, for a notebook cell: an ``<iframe srcdoc>``
        (:class:`~citelab.evals.report.ReportView`), so its styles stay out of JupyterLab's."""
        return _display().view(self.report_html(title), height=height)

    def judges(self) -> list[JudgedMetric]:
        """Per judged metric: its judge, the judge's card (one of :attr:`judge_cards`, else
        citelab's shipped card, else none), κ, weak categories and warnings."""
        return judged_metrics(self.scorers, self.judge_cards)

    def corrected(
        self,
        subset: str = "all",
        summary: pd.DataFrame | None = None,
        labels: str | os.PathLike[str] | LabelSet | None = None,
    ) -> pd.DataFrame:
        """Citation recall and precision as judged, corrected by the judge's card, and
        estimated from the run's own labels, from the recorded verdicts (nothing is judged
        again): one row per variant, model, metric and ``method`` (see
        :data:`~citelab.evals.results._judged.METHOD_COLUMNS` and
        ``docs/corrected-metrics.md``). ``judged``: the judge's verdicts counted; ``card``:
        Rogan–Gladen from its card (NaN without a usable card); with ``labels`` (a labels
        file or set whose ids are this run's pair ids; default :attr:`labels`) ``ppi``
        (labels and judge, PPI++) and ``labels`` (labels alone) for each metric they cover.
        ``summary``: :meth:`summary` of ``subset``, when at hand."""
        kinds = correctable(self.scorers)
        table = summary if summary is not None else self.summary(subset=subset)
        turns = select_turns(self.turns, subset)
        scores = self.scores.merge(turns[_KEYS], on=_KEYS)
        per_case = _judged_per_case(scores, self.details, kinds)
        cards = {
            metric: card
            for metric, card in metric_cards(self.scorers, self.judge_cards).items()
            if metric in kinds
        }
        wide = corrected_table(
            per_case, table, cards, lambda key: _group_rng(self.seed, key), self.resamples
        )
        chosen = labels if labels is not None else self.labels
        if chosen is None:
            return method_rows(wide)
        label_set = chosen if isinstance(chosen, LabelSet) else load_label_set(Path(chosen))
        attached = self._attached(label_set, subset)
        groups = list(dict.fromkeys(zip(wide["variant"], wide["model"], strict=True)))
        estimates = label_estimates(attached, groups, source=label_set.source.name)
        return method_rows(wide, estimates)

    def label_differences(
        self,
        baseline: str | None = None,
        subset: str = "all",
        confidence: float = 0.95,
        labels: str | os.PathLike[str] | LabelSet | None = None,
    ) -> pd.DataFrame:
        """Each variant minus ``baseline`` (default :meth:`baseline`) per model and labelled
        metric, estimated from both variants' own labels and the judge (the paired PPI++
        difference on the cases both scored; ``docs/corrected-metrics.md``): one row where
        both sides have labels (``labels``, default :attr:`labels`), none otherwise."""
        chosen = labels if labels is not None else self.labels
        base = baseline if baseline is not None else self.baseline()
        if chosen is None or base is None:
            return pd.DataFrame(columns=LABEL_DIFFERENCE_COLUMNS)
        label_set = chosen if isinstance(chosen, LabelSet) else load_label_set(Path(chosen))
        turns = select_turns(self.turns, subset)
        scores = self.scores.merge(turns[_KEYS], on=_KEYS)
        return label_differences(self._attached(label_set, subset), scores, base, confidence)

    def _attached(self, label_set: LabelSet, subset: str) -> list[LabelledUnits]:
        """The labelled metrics' units of ``subset`` with their labels."""
        turns = select_turns(self.turns, subset)
        scores = self.scores.merge(turns[_KEYS], on=_KEYS)
        details = self.details
        if subset != "all":
            details = {
                level: frame.merge(turns[_KEYS], on=_KEYS) if not frame.empty else frame
                for level, frame in self.details.items()
            }
        return attach_labels(label_set, details, scores, correctable(self.scorers))

    def errors(self) -> pd.DataFrame:
        """Failed turns grouped by cause: ``cause``, ``count``, ``first_message`` and where
        it first happened (``variant``, ``model``, ``dataset``, ``case_id``, ``turn``);
        the most frequent cause first. Empty when every turn was answered."""
        return error_summary(self.turns)

    def stability_by_round(self) -> pd.DataFrame:
        """Numbering stability per variant and round (from the citation rows)."""
        rows = self.details.get("citation", pd.DataFrame())
        if rows.empty or "round" not in rows:
            return pd.DataFrame(columns=["variant", "model", "round", "value", "citations"])
        stable = rows[rows["metric"] == "numbering_stability"]
        hits = stable.assign(hit=stable["hit"].astype(float))
        table = hits.groupby(["variant", "model", "round"], as_index=False).agg(
            value=("hit", "mean"), citations=("hit", "count")
        )
        table["round"] = table["round"].astype(int)
        return table

    def _cases(self) -> pd.DataFrame:
        prices = run_prices(self.config)
        if self.scores.empty:
            return with_costs(self.turns.copy(), prices)
        wide = self.scores.pivot_table(
            index=_KEYS, columns="metric", values="value", aggfunc="first", dropna=False
        )
        wide.columns.name = None
        order = [s.metric for s in self.scorers if s.metric in wide.columns]
        cases = self.turns.merge(wide[order].reset_index(), on=_KEYS, how="left")
        return with_costs(cases, prices)

    def usage(self) -> pd.DataFrame:
        """Tokens and cost per variant and model (see :func:`usage_table`)."""
        return usage_table(self.turns, run_prices(self.config))


@dataclass(frozen=True)
class ResultDisplay:
    """How a result shows itself (:meth:`EvalResult.plot`, :meth:`~EvalResult.report_html`,
    :meth:`~EvalResult.show`): the report's functions. ``citelab.evals.report`` sets them
    (:func:`set_display`) when it is imported, as ``citelab.evals`` does, so results import
    nothing from the report above them."""

    plot: Callable[..., Any]
    """``plot(result, kind, **options)``: a matplotlib figure, or None."""
    html: Callable[..., str]
    """``html(result, findings, title)``: the report page."""
    view: Callable[..., Any]
    """``view(page, height=...)``: the page for a notebook cell."""


_DISPLAY: dict[str, ResultDisplay] = {}


def set_display(display: ResultDisplay) -> None:
    """Show results with ``display`` from now on (the report sets its own)."""
    _DISPLAY["report"] = display


def _display() -> ResultDisplay:
    if "report" not in _DISPLAY:  # only while citelab.evals is still being imported
        raise RuntimeError("results are shown by citelab.evals.report: import citelab.evals")
    return _DISPLAY["report"]


_ERROR_COLUMNS = ["cause", "count", "first_message", *_KEYS]
_VOLATILE = re.compile(r"'[^']*'|\"[^\"]*\"|\d+(?:\.\d+)?")


def error_cause(message: str) -> str:
    """A failed turn's cause: its message with quoted names and numbers blanked, so the
    same failure in many cases (another id, another count) is counted once."""
    return _VOLATILE.sub("…", message)


def error_summary(turns: pd.DataFrame) -> pd.DataFrame:
    """See :meth:`EvalResult.errors`."""
    if turns.empty or "error" not in turns:
        return pd.DataFrame(columns=_ERROR_COLUMNS)
    failed = turns[turns["error"].notna()]
    groups: dict[str, dict[str, Any]] = {}
    for row in failed.to_dict("records"):
        message = str(row["error"])
        entry = groups.setdefault(
            error_cause(message),
            {"count": 0, "first_message": message, **{k: row[k] for k in _KEYS}},
        )
        entry["count"] += 1
    rows = [{"cause": cause, **entry} for cause, entry in groups.items()]
    frame = pd.DataFrame(rows, columns=_ERROR_COLUMNS)
    return frame.sort_values("count", ascending=False, kind="stable").reset_index(drop=True)


def select_turns(turns: pd.DataFrame, subset: str) -> pd.DataFrame:
    """The turns of ``subset`` (see :meth:`EvalResult.summary`)."""
    if subset == "all":
        return turns
    if subset == "multi_round":
        return turns[turns["rounds"] >= 2]
    if subset == "single_round":
        return turns[turns["rounds"] < 2]
    if subset.startswith("tag:"):
        tag = subset.removeprefix("tag:")
        return turns[turns["tags"].map(lambda tags: tag in tags.split(","))]
    raise InvalidInput(
        f"unknown subset {subset!r}; use all, multi_round, single_round or tag:<name>"
    )


def score_records(
    records: Iterable[CaseRecord],
    cases: Mapping[tuple[str, str], Case],
    scorers: Sequence[Scorer],
    *,
    config: dict[str, Any] | None = None,
    seed: int = 0,
    resamples: int = 1000,
    judge_cards: Sequence[JudgeCard] = (),
) -> EvalResult:
    """Score every turn of every record; ``cases`` maps ``(dataset, case_id)`` to the case."""
    records = list(records)
    scored = score_rows(records, cases, scorers)
    return result_of(scored, records, cases, scorers, config=config, seed=seed, resamples=resamples)


Columns = dict[str, list[Any]]
"""A table by column: column name → its values, every column as long as the table."""


@dataclass
class ScoredRows:
    """The table rows of scored records (see :func:`score_rows`): the turn and score tables
    by column, the detail rows as mappings (each scorer has columns of its own). Plain data
    that pickles as a few lists, so a worker that scored records elsewhere sends a batch's rows
    as they are, and the process that builds the tables (:func:`result_of`) concatenates them
    (:meth:`concat`) without touching a row."""

    keys: list[str] = field(default_factory=list)
    """The records' keys, in their order."""
    turns: Columns = field(default_factory=lambda: {c: [] for c in _TURN_COLUMNS})
    scores: Columns = field(default_factory=lambda: {c: [] for c in _SCORE_COLUMNS})
    details: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"citation": [], "statement": []}
    )
    """Per level, the detail rows: the keys, ``metric`` and the scorer's own columns."""

    def add(
        self, record: CaseRecord, cases: Mapping[tuple[str, str], Case], scorers: Sequence[Scorer]
    ) -> None:
        """Every scorer on every turn of ``record``, its rows appended. An exception (a
        scorer's, or a deferring judge's ``VerdictPending``) leaves the table partly
        written: a record that may be scored again gets a table of its own."""
        case = cases.get((record.dataset, record.case_id))
        if case is None:
            raise InvalidInput(f"record {record.key}: no case {record.case_id} in {record.dataset}")
        tags = ",".join(record.tags)
        turn_rows: list[tuple[Any, ...]] = []
        score_rows: list[tuple[Any, ...]] = []
        for turn in record.turns:
            if turn.turn >= len(case.turns):
                raise InvalidInput(f"record {record.key}: case {case.id} has no turn {turn.turn}")
            keys = (record.variant, record.model, record.dataset, record.case_id, turn.turn)
            gold = case.turns[turn.turn]
            turn_rows.append(
                (
                    *keys,
                    tags,
                    turn.question,
                    turn.text,
                    turn.no_answer,
                    gold.expect_answer,
                    len(turn.rounds),
                    turn.searches,
                    len(turn.sources),
                    turn.dangling,
                    turn.error,
                    turn.seconds,
                    turn.input_tokens,
                    turn.output_tokens,
                    turn.tokens_estimated,
                )
            )
            head = dict(zip(_KEYS, keys, strict=True))
            for scorer in scorers:
                score = scorer(turn, gold)
                score_rows.append(
                    (*keys, score.metric, score.value, score.numerator, score.denominator)
                )
                if score.rows:
                    head["metric"] = score.metric
                    self.details[scorer.level].extend({**head, **row} for row in score.rows)
        self.keys.append(record.key)
        for table, rows in ((self.turns, turn_rows), (self.scores, score_rows)):
            for column, values in zip(table.values(), zip(*rows, strict=True), strict=False):
                column.extend(values)

    def extend(self, other: ScoredRows) -> None:
        """Append ``other``'s rows."""
        self.keys.extend(other.keys)
        for mine, theirs in ((self.turns, other.turns), (self.scores, other.scores)):
            for name, column in mine.items():
                column.extend(theirs[name])
        for level, rows in other.details.items():
            self.details.setdefault(level, []).extend(rows)

    @classmethod
    def concat(cls, parts: Iterable[ScoredRows]) -> ScoredRows:
        """One table of ``parts``' rows, in order."""
        table = cls()
        for part in parts:
            table.extend(part)
        return table


def score_record(
    record: CaseRecord, cases: Mapping[tuple[str, str], Case], scorers: Sequence[Scorer]
) -> ScoredRows:
    """Every scorer on every turn of one record."""
    return score_rows([record], cases, scorers)


def score_rows(
    records: Iterable[CaseRecord],
    cases: Mapping[tuple[str, str], Case],
    scorers: Sequence[Scorer],
) -> ScoredRows:
    """Every scorer on every turn of ``records``, in one table."""
    table = ScoredRows()
    for record in records:
        table.add(record, cases, scorers)
    return table


def result_of(
    scored: ScoredRows | Iterable[ScoredRows],
    records: Sequence[CaseRecord],
    cases: Mapping[tuple[str, str], Case],
    scorers: Sequence[Scorer],
    *,
    config: dict[str, Any] | None = None,
    seed: int = 0,
    resamples: int = 1000,
    judge_cards: Sequence[JudgeCard] = (),
) -> EvalResult:
    """The tables of ``records`` from their scored rows (``scored``: one table or several,
    in the records' order)."""
    table = scored if isinstance(scored, ScoredRows) else ScoredRows.concat(scored)
    if table.keys != [record.key for record in records]:
        raise ValueError("the scored rows are not those of the records, in their order")
    return EvalResult(
        scores=pd.DataFrame(table.scores, columns=_SCORE_COLUMNS),
        turns=pd.DataFrame(table.turns, columns=_TURN_COLUMNS),
        details={level: _details_frame(rows) for level, rows in table.details.items()},
        scorers=list(scorers),
        config=config or {},
        seed=seed,
        resamples=resamples,
        records=list(records),
        cases={key: cases[key] for key in {(r.dataset, r.case_id) for r in records}},
        judge_cards=list(judge_cards),
    )


def _details_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame(columns=[*_KEYS, "metric", "hit"])
    frame = pd.DataFrame(rows)
    for column in frame.columns:  # CSV and Parquet want scalars: a list of numbers is "1 3"
        values = frame[column]
        if values.dtype == object and any(isinstance(value, list) for value in values):
            frame[column] = [
                " ".join(map(str, value)) if isinstance(value, list) else value for value in values
            ]
    return frame


def summarize(
    scores: pd.DataFrame,
    scorers: Sequence[Scorer],
    by: Sequence[str] = (),
    seed: int = 0,
    resamples: int = 1000,
) -> pd.DataFrame:
    """Variant-level values with seeded bootstrap intervals (95%, resampling cases). A value
    on too few units for its resampled interval to mean anything (fewer than 30, or every
    resample the same: :func:`~citelab.evals._stats.too_few_units`) says so in ``too_few``
    and carries Wilson's interval of the share instead (``interval``: ``bootstrap`` or
    ``wilson``), never a zero-width one."""
    groups = ["variant", "model", *by, "metric"]
    columns = [
        *groups,
        "value",
        "ci_low",
        "ci_high",
        "units",
        "cases",
        "aggregate",
        "higher_is_better",
        "too_few",
        "interval",
    ]
    kinds = {s.metric: s for s in scorers}
    per_case = _per_case(scores, kinds, groups)
    if per_case.empty:
        return pd.DataFrame(columns=columns)
    numerators = per_case["n"].to_numpy(dtype=float)
    denominators = per_case["d"].to_numpy(dtype=float)
    tasks: list[tuple[tuple[Any, ...], np.ndarray, np.ndarray, np.ndarray]] = []
    for group, index in per_case.groupby(groups, sort=False).indices.items():
        key = tuple(group) if isinstance(group, tuple) else (group,)
        n, d = numerators[index], denominators[index]
        if d.sum() != 0:
            tasks.append((key, np.asarray(index), n, d))
    intervals = in_threads(
        lambda task: bootstrap_interval(task[2], task[3], _group_rng(seed, task[0]), resamples),
        tasks,
    )
    out: list[dict[str, Any]] = []
    for (key, index, n, d), (low, high) in zip(tasks, intervals, strict=True):
        scorer = kinds[str(key[-1])]
        value, units = float(n.sum() / d.sum()), float(d.sum())
        few = too_few_units(units, low, high)
        shown = share_interval(value, units, low, high)
        out.append(
            {
                **dict(zip(groups, key, strict=True)),
                "value": value,
                "ci_low": shown[0],
                "ci_high": shown[1],
                "units": units,
                "cases": len(index),
                "aggregate": scorer.aggregate,
                "higher_is_better": scorer.higher_is_better,
                "too_few": few,
                "interval": "wilson" if few else "bootstrap",
            }
        )
    return _in_scorer_order(pd.DataFrame(out, columns=columns), list(kinds), groups[:-1])


DIFFERENCE_COLUMNS = [
    "variant",
    "model",
    "metric",
    "baseline",
    "difference",
    "ci_low",
    "ci_high",
    "cases",
    "units",
    "excludes_zero",
    "higher_is_better",
    "too_few",
]


def paired_differences(
    scores: pd.DataFrame,
    scorers: Sequence[Scorer],
    baseline: str | None,
    *,
    seed: int = 0,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """See :meth:`EvalResult.differences` (``scores`` is the long score table)."""
    kinds = {s.metric: s for s in scorers}
    per_case = _per_case(scores, kinds, ["variant", "model", "metric"])
    if baseline is None or per_case.empty:
        return pd.DataFrame(columns=DIFFERENCE_COLUMNS)
    # Each case a code, so pairing a variant's cases with the baseline's is an array lookup.
    codes = per_case.groupby(["dataset", "case_id"], sort=False).ngroup().to_numpy()
    numerators = per_case["n"].to_numpy(dtype=float)
    denominators = per_case["d"].to_numpy(dtype=float)
    names = per_case["variant"].astype(str).to_numpy(dtype=object)
    position = np.full(int(codes.max()) + 1, -1)
    # (group key, baseline's (numerators, denominators), variant's) per paired interval.
    pairs: list[tuple[tuple[str, str, str], _Ratio, _Ratio]] = []
    for group, index in per_case.groupby(["model", "metric"], sort=False).indices.items():
        model, metric = cast(tuple[str, str], group)
        where = np.sort(index)  # the part's rows in the table's order
        variants = names[where]
        base = where[variants == baseline]
        for variant in dict.fromkeys(variants.tolist()):
            if variant == baseline:
                continue
            other = where[variants == variant]
            # The baseline's cases, in its order, that the variant has too (an inner join
            # that keeps the left order), both with a positive denominator.
            position[codes[other]] = other
            matched = position[codes[base]]
            position[codes[other]] = -1
            keep = matched >= 0
            left, right = base[keep], matched[keep]
            positive = (denominators[left] > 0) & (denominators[right] > 0)
            left, right = left[positive], right[positive]
            if left.size == 0:
                continue
            base_n, base_d, n, d = (
                numerators[left],
                denominators[left],
                numerators[right],
                denominators[right],
            )
            pairs.append(((str(variant), model, metric), (base_n, base_d), (n, d)))
    results = in_threads(
        lambda pair: paired_bootstrap(
            pair[1],
            pair[2],
            _group_rng(seed, ("difference", baseline, *pair[0])),
            resamples=resamples,
            confidence=confidence,
        ),
        pairs,
    )
    out: list[dict[str, Any]] = []
    for ((name, model_name, metric_name), _, (n, d)), (diff, low, high) in zip(
        pairs, results, strict=True
    ):
        few = too_few_units(float(d.sum()), low, high)
        out.append(
            {
                "variant": name,
                "model": model_name,
                "metric": metric_name,
                "baseline": baseline,
                "difference": diff,
                "ci_low": low,
                "ci_high": high,
                "cases": len(n),
                "units": float(d.sum()),
                "excludes_zero": bool(low > 0 or high < 0) and not few,
                "higher_is_better": kinds[metric_name].higher_is_better,
                "too_few": few,
            }
        )
    frame = pd.DataFrame(out, columns=DIFFERENCE_COLUMNS)
    return _in_scorer_order(frame, list(kinds), ["variant", "model"])


def paired_bootstrap(
    base: tuple[np.ndarray, np.ndarray],
    other: tuple[np.ndarray, np.ndarray],
    rng: np.random.Generator,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """``ratio(other) - ratio(base)`` over paired cases given as (numerators,
    denominators), and its percentile interval from resamples that draw the same cases for
    both (every denominator positive)."""
    (base_n, base_d), (other_n, other_d) = base, other
    diff = float(other_n.sum() / other_d.sum() - base_n.sum() / base_d.sum())
    sums = resampled_sums([other_n, other_d, base_n, base_d], rng, resamples)
    deltas = sums[0] / sums[1] - sums[2] / sums[3]
    low, high = percentile_interval(deltas, confidence)
    return diff, low, high


_Ratio = tuple[np.ndarray, np.ndarray]
_T = TypeVar("_T")
_R = TypeVar("_R")


def _threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


def in_threads(function: Callable[[_T], _R], items: Sequence[_T]) -> list[_R]:
    """``[function(item) for item in items]``, on a few threads when there are several.

    For the bootstraps: numpy draws, gathers and sums without the GIL, and every group has
    its own generator, so the results (and their order) are those of the plain loop."""
    workers = min(_threads(), len(items))
    if workers < 2:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(function, items))


def _judged_per_case(
    scores: pd.DataFrame,
    details: Mapping[str, pd.DataFrame],
    kinds: Mapping[str, tuple[str, Scorer]],
) -> pd.DataFrame:
    """Per variant, model, metric and case of the correctable metrics: numerator ``n``,
    denominator ``d`` and judged units ``j`` (macro metrics: each turn over one)."""
    parts = []
    for metric, (kind, scorer) in kinds.items():
        turns = scores[(scores["metric"] == metric) & scores["value"].notna()]
        units = judged_units(details, metric, kind)
        turns = turns.merge(units, on=_KEYS, how="left").fillna({"judged": 0.0})
        if scorer.aggregate == "macro":
            with np.errstate(invalid="ignore", divide="ignore"):
                # float: with no judged unit at all, the merged column holds Python objects,
                # and their division raises instead of giving the inf that np.where drops.
                judged = turns["judged"].astype(float)
                denominator = turns["denominator"].astype(float)
                share = np.where(denominator > 0, judged / denominator, 0.0)
            turns = turns.assign(n=turns["value"], d=1.0, j=share)
        else:
            turns = turns.assign(n=turns["numerator"], d=turns["denominator"], j=turns["judged"])
        parts.append(turns)
    columns = ["variant", "model", "metric", "dataset", "case_id"]
    if not parts:
        return pd.DataFrame(columns=[*columns, "n", "d", "j"])
    frame = pd.concat(parts, ignore_index=True)
    return frame.groupby(columns, sort=False, as_index=False)[["n", "d", "j"]].sum()


def _group_rng(seed: int, key: tuple[Any, ...]) -> np.random.Generator:
    """A generator per group: a group's interval does not depend on which others exist."""
    digest = hashlib.sha256(json.dumps([seed, *map(str, key)]).encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])


def _in_scorer_order(frame: pd.DataFrame, metrics: list[str], outer: list[str]) -> pd.DataFrame:
    """Rows grouped as first seen, metrics within a group in the scorers' order."""
    if frame.empty:
        return frame
    group_rank = frame.groupby(outer, sort=False).ngroup()
    metric_rank = frame["metric"].map({m: i for i, m in enumerate(metrics)})
    order = np.lexsort((metric_rank.to_numpy(), group_rank.to_numpy()))
    return frame.iloc[order].reset_index(drop=True)


def _per_case(scores: pd.DataFrame, kinds: Mapping[str, Scorer], groups: list[str]) -> pd.DataFrame:
    """Per group and case: (numerator, denominator) sums; macro metrics count each turn's
    value over one. Only applicable turns (a value) of known metrics take part."""
    applicable = scores[scores["value"].notna() & scores["metric"].isin(list(kinds))]
    macro = applicable["metric"].map({m: s.aggregate == "macro" for m, s in kinds.items()})
    parts = applicable.assign(
        n=np.where(macro.astype(bool), applicable["value"], applicable["numerator"]),
        d=np.where(macro.astype(bool), 1.0, applicable["denominator"]),
    )
    cases = [c for c in ("dataset", "case_id") if c not in groups]
    return parts.groupby([*groups, *cases], sort=False, as_index=False)[["n", "d"]].sum()


def bootstrap_interval(
    numerators: np.ndarray,
    denominators: np.ndarray,
    rng: np.random.Generator,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile interval of sum(n)/sum(d) over cases drawn with replacement."""
    if len(numerators) == 0:
        return (float("nan"), float("nan"))
    numerator_sums, totals = resampled_sums([numerators, denominators], rng, resamples)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = numerator_sums / totals
    return percentile_interval(ratios[totals > 0], confidence)
