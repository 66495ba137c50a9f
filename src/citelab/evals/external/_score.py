"""Scoring answers citelab did not produce: :func:`score_answers` (``citelab score``).

The answers of a file (or of loaded data) in one of :data:`ANSWER_FORMATS` become recorded
turns — one case per answer, its sources numbered as the answer cites them — and are scored
by the same scorers as ``citelab eval`` into the same :class:`EvalResult` tables and HTML
report. Everything is read and checked before anything is scored, and the output folder is
written only once every answer is scored (through a temporary folder beside it), so a bad
record or a failing judge leaves no half-written report.

Where the answers are scored is the execution seam's choice
(:func:`~citelab.evals.execution.scoring_executor`): in this process, or for many answers
scored by citelab's own scorers and offline judges in worker processes (``processes``), the
answers cut into consecutive slices whose rows come back in order: the same tables as one
process scores. With a model judge (the LLM judge) the answers are scored in this process,
``workers`` of them at once in one event loop.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citelab._collector import bulk_scoring
from citelab._errors import ConfigError
from citelab.evals._versions import versions
from citelab.evals.cards import MIN_CARD_UNITS, JudgeCard, load_cards
from citelab.evals.dataset import Case, GoldTurn, ReaderSpec
from citelab.evals.execution import ScoringJob, scoring_executor
from citelab.evals.external._formats import AnswerFormat, ExternalAnswer, read_answers, to_answers
from citelab.evals.judges import DEFAULT_JUDGE, Judge, build_judge
from citelab.evals.labels import LabelSet, load_label_set
from citelab.evals.records import CaseRecord, SourceRecord, TurnRecord
from citelab.evals.report import write_outputs
from citelab.evals.results import EvalResult, ScoredRows, card_view, check_cards, result_of
from citelab.evals.scorers import Scorer, accepts_argument, build_scorers, with_judge_scores
from citelab.sources import parse_markers

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SPAN_FORMATS",
    "default_answer_scorers",
    "nothing_judged_message",
    "score_answers",
    "summary_json",
    "unjudgeable_counts",
    "unjudged_answers_note",
    "without_passage_note",
]

_NO_QUESTION = "(no question given)"
_READER = ReaderSpec()
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]")
# The TurnRecord fields an external answer leaves empty (see _records); validation builds a
# new list or dict from each, so no instance shares one.
_EMPTY_TURN: dict[str, Any] = {
    "seen": (),
    "rounds": (),
    "restricted": (),
    "canaries": (),
    "injections": (),
    "mapping": {},
    "earlier": {},
}


SPAN_FORMATS = frozenset({"anthropic"})
"""Formats scored per cited span by default: Anthropic cites text blocks, each a claim of its
own, so a sentence may join a cited block and an uncited one (the other vendors cite
sentences, or phrases inside them, which are scored with their sentence)."""


def default_answer_scorers(answer_format: str, qampari: bool = False) -> list[dict[str, Any]]:
    """ALCE files: ALCE-compatible recall and precision (the numbers to compare with ALCE's
    tables); Anthropic responses: citelab's recall and precision per cited span
    (:data:`SPAN_FORMATS`); other formats: citelab's, per sentence. Ask for the others by
    name."""
    if answer_format in SPAN_FORMATS:
        return [
            {"name": "citation_recall", "granularity": "span"},
            {"name": "citation_precision", "granularity": "span"},
        ]
    if answer_format != "alce":
        return [{"name": "citation_recall"}, {"name": "citation_precision"}]
    alce = {"alce_compat": True, "qampari": qampari}
    return [{"name": "citation_recall", **alce}, {"name": "citation_precision", **alce}]


def score_answers(
    answers: str | Path | Any,
    answer_format: AnswerFormat | str = "alce",
    *,
    judge: str | Mapping[str, Any] | Judge = DEFAULT_JUDGE,
    scorers: Sequence[str | Mapping[str, Any] | Scorer] | None = None,
    out_dir: str | Path | None = None,
    qampari: bool | None = None,
    name: str | None = None,
    seed: int = 0,
    resamples: int = 1000,
    workers: int | None = None,
    processes: int | None = None,
    judge_cards: Sequence[str | Path | JudgeCard] = (),
    allow_in_sample: bool = False,
    labels: str | Path | LabelSet | None = None,
    label_map: Mapping[str, str] | None = None,
) -> EvalResult:
    """Score answers (a file path, or loaded data) in ``answer_format``; see the module docs.

    ``judge`` goes to every scorer that takes one and names none. ``qampari`` (ALCE files)
    switches ALCE's list mode on; None infers it from a file name containing ``qampari``, as
    ALCE does. With a model judge (the LLM judge) ``workers`` answers are scored at once in
    one event loop (default: the judge's own ``concurrency``); offline judges score one
    answer after the other, in ``processes`` processes, this one among them (None: one per
    CPU, at most one per 500 answers, when every scorer is citelab's own and every judge
    citelab's offline one; 1: this process only). With ``out_dir`` the tables, ``run.json`` and
    ``report.html`` are written there. ``judge_cards``: cards (or card files) for the
    judges, beside citelab's shipped ones; a card that describes none of the judges is an
    error, and so is one made on labels its judge was trained on unless ``allow_in_sample``.
    ``labels``: people's labels of these answers' units (a labels file or set keyed
    by :func:`~citelab.evals.label_pairs` ids): the result's :meth:`~EvalResult.corrected`
    then has the ``ppi`` and ``labels`` rows; a label naming no scored unit is an error.
    ``label_map``: the labels file's own spellings read as grades (as for
    :func:`~citelab.evals.labels.load_label_set`).
    """
    began = time.time()
    label_set = (
        load_label_set(labels, label_map=label_map) if isinstance(labels, str | Path) else labels
    )
    path = Path(answers) if isinstance(answers, str | Path) else None
    with bulk_scoring():  # see citelab._collector
        items = read_answers(path, answer_format) if path else to_answers(answers, answer_format)
        if qampari is None:
            qampari = answer_format == "alce" and path is not None and "qampari" in path.name
        if qampari and answer_format != "alce":
            raise ConfigError("qampari mode reads ALCE files: use it with --format alce")
        built_judge = build_judge(judge if isinstance(judge, str | Judge) else dict(judge))
        chosen = build_scorers(_with_judge(scorers, answer_format, qampari, built_judge))
        if label_set is not None:  # PPI++ then reads the judge's scores (not only verdicts)
            chosen = with_judge_scores(chosen)
        cards = load_cards(judge_cards)
        check_cards(chosen, cards, allow_in_sample=allow_in_sample)
        dataset = _dataset_name(path, name)
        variant = name or "answers"
        records, cases = _records(items, dataset, variant=variant, model=answer_format)
        scored = _scored(records, ScoringJob(cases, chosen, concurrency=workers), processes)
        config = _config(path, answer_format, qampari, built_judge, chosen, items, began, variant)
        result = result_of(
            scored,
            records,
            cases,
            chosen,
            config=config,
            seed=seed,
            resamples=resamples,
            judge_cards=cards,
        )
        if label_set is not None:
            result.labels = label_set
            result.corrected()  # a label that names no scored unit fails here, before writing
        result.config["unjudgeable"] = unjudgeable_counts(result)
        result.config["notes"] = _notes(result.config)
    if out_dir is not None:
        _write_atomically(result, Path(out_dir), title=f"citelab score: {dataset}")
    return result


def _scored(records: list[CaseRecord], scoring: ScoringJob, processes: int | None) -> ScoredRows:
    executor = scoring_executor(scoring, len(records), processes)
    try:
        return executor.score(scoring, records)
    finally:
        executor.close()


_TOO_FEW = "too few units ({units:g}; an interval needs {least})"


def _too_few_words(units: float) -> str:
    """Why a metric's JSON gives no interval: too few units, or every resample the same."""
    if units < MIN_CARD_UNITS:
        return f"too few units ({units:g}; an interval needs {MIN_CARD_UNITS})"
    return f"too few units ({units:g}, every resample the same)"


def summary_json(
    result: EvalResult, scale: float = 1.0, *, corrected: pd.DataFrame | None = None
) -> dict[str, Any]:
    """Each metric's value and 95% interval (times ``scale``), for scripts (``--json``).

    Every scorer's metric is there: one with no judgeable unit has ``value`` (and its
    interval) ``null``; ``unjudgeable`` counts the units left out for want of a passage,
    and ``without_passage`` lists those sources (see :func:`score_answers`).
    ``corrected``: :meth:`EvalResult.corrected`, when the caller has it already."""
    summary = result.summary(scale=scale)
    if corrected is None:
        corrected = result.corrected(summary=summary if scale == 1 else result.summary())
    unjudgeable = result.config.get("unjudgeable") or unjudgeable_counts(result)
    metrics: dict[str, dict[str, Any]] = {
        scorer.metric: {
            "value": None,
            "ci_low": None,
            "ci_high": None,
            "units": 0.0,
            "answers": 0,
            "aggregate": scorer.aggregate,
        }
        for scorer in result.scorers
    }
    for row in summary.to_dict("records"):
        low, high, units = float(row["ci_low"]), float(row["ci_high"]), float(row["units"])
        few = bool(row["too_few"])
        metrics[str(row["metric"])] = {
            "value": float(row["value"]),
            # No interval on too few units (or of zero width): it would only look confident.
            "ci_low": None if few else low,
            "ci_high": None if few else high,
            "units": units,
            "answers": int(row["cases"]),
            "aggregate": str(row["aggregate"]),
            **({"interval": _too_few_words(units)} if few else {}),
        }
    for metric, count in unjudgeable.items():
        if metric in metrics:
            metrics[metric]["unjudgeable"] = count
    return {
        "answers": len(result.turns),
        "scale": scale,
        "format": result.config.get("format"),
        "judge": result.config.get("judge"),
        "dropped": result.config.get("dropped", []),
        "without_passage": result.config.get("without_passage", []),
        "metrics": metrics,
        "judges": [judge.model_dump(mode="json") for judge in result.judges()],
        "corrected": _corrected_json(card_view(corrected), scale),
        "estimates": _estimates_json(corrected, scale),
    }


def _estimates_json(frame: Any, scale: float) -> list[dict[str, Any]]:
    """One entry per metric and method (``judged``, ``card``, ``ppi``, ``labels``), times
    ``scale``; NaN as null."""
    out = []
    scaled = ("value", "ci_low", "ci_high", "width")
    for row in frame.to_dict("records"):
        entry: dict[str, Any] = {}
        for key, value in row.items():
            if isinstance(value, float) and np.isnan(value):
                entry[key] = None
            elif key in scaled:
                entry[key] = float(value) * scale
            elif isinstance(value, np.generic):
                entry[key] = value.item()
            else:
                entry[key] = value
        out.append(entry)
    return out


def _corrected_json(frame: Any, scale: float) -> dict[str, Any]:
    """Per metric: as judged and corrected (times ``scale``), with the card's rates."""
    out: dict[str, Any] = {}
    for row in frame.to_dict("records"):
        scaled = {
            key: (None if row[key] != row[key] else float(row[key]) * scale)  # NaN: null
            for key in ("value", "ci_low", "ci_high", "corrected", "corrected_low",
                        "corrected_high")
        }  # fmt: skip
        rates = {
            key: None if row[key] != row[key] else float(row[key])
            for key in ("judged_share", "sensitivity", "specificity")
        }
        out[str(row["metric"])] = {
            "judge": row["judge"],
            "card": row["card"],
            "clipped": bool(row["clipped"]),
            **scaled,
            **rates,
        }
    return out


def unjudgeable_counts(result: EvalResult) -> dict[str, int]:
    """Per metric of a scorer that can leave units out (citation recall and precision in
    citelab's mode), how many it left out for want of a passage (its detail rows marked
    ``judgeable: False``)."""
    counts: dict[str, int] = {}
    for scorer in result.scorers:
        if scorer.name not in _JUDGEABLE or getattr(scorer, "alce_compat", False):
            continue
        rows = result.details.get(scorer.level)
        left_out = 0
        if rows is not None and not rows.empty and "judgeable" in rows:
            mine = rows[rows["metric"] == scorer.metric]
            left_out = int((mine["judgeable"] == False).sum())  # noqa: E712 - NaN is judged
        counts[scorer.metric] = left_out
    return counts


_JUDGEABLE = frozenset({"citation_recall", "citation_precision"})


def without_passage_note(config: Mapping[str, Any]) -> str:
    """One sentence on the sources without a passage and what was not judged ("" if none)."""
    missing = list(config.get("without_passage") or [])
    if not missing:
        return ""
    answers = len({entry["answer"] for entry in missing})
    shown = "; ".join(
        f"answer {e['answer']}: [{e['number']}] {e['title'] or e['uri']} ({e['uri']})"
        for e in missing[:5]
    )
    more = f"; and {len(missing) - 5} more (run.json: without_passage)" if len(missing) > 5 else ""
    counts = config.get("unjudgeable") or {}
    left = ", ".join(f"{metric} {count}" for metric, count in counts.items() if count)
    left_out = f" (units left out: {left})" if left else ""
    return (
        f"{len(missing)} source(s) in {answers} answer(s) have no passage to judge: {shown}"
        f"{more}. Their citations are not judgeable: left out of citation recall and "
        f"precision{left_out}, not scored 0. Give each source's text as sources[].content "
        "in an envelope (see citelab score --help)."
    )


def _with_judge(
    scorers: Sequence[str | Mapping[str, Any] | Scorer] | None,
    answer_format: str,
    qampari: bool,
    judge: Judge,
) -> list[str | Mapping[str, Any] | Scorer]:
    specs: list[str | Mapping[str, Any] | Scorer] = (
        list(scorers)
        if scorers is not None
        else list(default_answer_scorers(answer_format, qampari))
    )
    out: list[str | Mapping[str, Any] | Scorer] = []
    for spec in specs:
        if isinstance(spec, Scorer):
            out.append(spec)
            continue
        config: dict[str, Any] = {"name": spec} if isinstance(spec, str) else dict(spec)
        scorer_name = str(config.get("name"))
        if "judge" not in config and accepts_argument(scorer_name, "judge"):
            config["judge"] = judge
        if qampari and config.get("alce_compat") and "qampari" not in config:
            config["qampari"] = True
        out.append(config)
    return out


def _dataset_name(path: Path | None, name: str | None) -> str:
    if name:
        return name
    return path.stem if path is not None else "answers"


def _records(
    items: list[ExternalAnswer], dataset: str, *, variant: str, model: str
) -> tuple[list[CaseRecord], dict[tuple[str, str], Case]]:
    records: list[CaseRecord] = []
    cases: dict[tuple[str, str], Case] = {}
    used: set[str] = set()
    for position, item in enumerate(items):
        case_id = _case_id(item.id, position, used)
        question = item.question if item.question.strip() else _NO_QUESTION
        # Every field given: pydantic deep-copies a mutable default for each instance it
        # fills in (a shared reader, and empty lists passed in, cost a fraction of that).
        gold = GoldTurn(question=question, claims=[], must_cite=[], must_not_cite=[])
        cases[(dataset, case_id)] = Case(
            id=case_id, reader=_READER, turns=[gold], tags=[], canaries=[]
        )
        turn = TurnRecord(
            question=item.question,
            text=item.text,
            raw_text=item.raw_text or item.text,
            sources=item.sources,
            candidates=item.sources,
            message=item.message,
            **_EMPTY_TURN,
        )
        key = f"{variant}|{model}|{dataset}|{case_id}"
        records.append(
            CaseRecord(
                key=key,
                variant=variant,
                model=model,
                dataset=dataset,
                case_id=case_id,
                tags=[],
                turns=[turn],
            )
        )
    return records, cases


def _case_id(ident: str, position: int, used: set[str]) -> str:
    """The record's id made safe for a case id (unique: the position is added if needed)."""
    safe = _ID_UNSAFE.sub("_", ident)[:100] or str(position)
    if safe in used:
        safe = f"{safe}.{position}"
    used.add(safe)
    return safe


def _dropped(items: Sequence[ExternalAnswer]) -> list[dict[str, str]]:
    """What the converter left out, per answer: ``{"answer": id, "what": line}``."""
    return [{"answer": item.id, "what": what} for item in items for what in item.dropped]


def _notes(config: Mapping[str, Any]) -> list[str]:
    """What the score report and ``citelab score`` say beside the numbers: what the
    converter left out, and which sources had no passage to judge."""
    dropped = config.get("dropped") or []
    notes = [_dropped_note(str(config.get("format")), dropped)] if dropped else []
    missing = without_passage_note(config)
    unjudged = unjudged_answers_note(config)
    return [*notes, *(note for note in (missing, unjudged) if note)]


def _cited(item: ExternalAnswer) -> list[SourceRecord]:
    """The sources the answer's markers cite, in order."""
    numbers = dict.fromkeys(n for marker in parse_markers(item.text) for n in marker.numbers)
    by_number = {source.number: source for source in item.sources}
    return [by_number[n] for n in numbers if n in by_number]


def _unjudged_answers(items: Sequence[ExternalAnswer]) -> list[dict[str, Any]]:
    """The answers none of whose citations can be judged: per answer, the cited URIs (none
    has a passage) and the URIs of the sources its envelope gave."""
    out = []
    for item in items:
        cited = _cited(item)
        if cited and not any(source.has_passage for source in cited):
            uris = list(dict.fromkeys(source.uri for source in cited))
            out.append({"answer": item.id, "cited": uris, "given": list(item.given)})
    return out


def _nothing_judged(items: Sequence[ExternalAnswer]) -> bool:
    """The answers cite sources, and not one cited source has a passage."""
    cited = [source for item in items for source in _cited(item)]
    return bool(cited) and not any(source.has_passage for source in cited)


def unjudged_answers_note(config: Mapping[str, Any]) -> str:
    """One sentence per answer (at most five) none of whose citations can be judged: which
    cited URLs matched which given sources ("" if every answer has a judgeable citation)."""
    unjudged = list(config.get("unjudged_answers") or [])
    if not unjudged:
        return ""
    lines = [_unjudged_line(entry) for entry in unjudged[:5]]
    more = len(unjudged) - len(lines)
    if more > 0:
        lines.append(f"and {more} more (run.json: unjudged_answers)")
    return (
        f"{len(unjudged)} answer(s) have no citation that can be judged (URLs are compared "
        "without tracking parameters such as utm_source, fragments or a trailing slash): "
        + "; ".join(lines)
    )


def _unjudged_line(entry: Mapping[str, Any]) -> str:
    cited = ", ".join(entry["cited"])
    given = list(entry["given"])
    if not given:
        return f"answer {entry['answer']} cites {cited}, and its record gives no sources"
    return (
        f"answer {entry['answer']} cites {cited}, which match none of the sources its "
        f"envelope gives ({', '.join(given)})"
    )


def nothing_judged_message(config: Mapping[str, Any]) -> str:
    """Why the answers' citations cannot be judged at all ("" when some can)."""
    if not config.get("nothing_judged"):
        return ""
    detail = (unjudged_answers_note(config) or without_passage_note(config)).rstrip(".")
    return (
        f"no citation in the answers can be judged: no cited source has a passage. {detail}. "
        "Give each cited source's text as sources[].content under the URL the answer cites "
        "(see citelab score --help)."
    )


def _without_passage(items: Sequence[ExternalAnswer]) -> list[dict[str, Any]]:
    """The sources that carry no passage, per answer: answer id, number, uri and title."""
    return [
        {"answer": item.id, "number": s.number, "uri": s.uri, "title": s.title}
        for item in items
        for s in item.sources
        if not s.has_passage
    ]


def _dropped_note(answer_format: str, dropped: Sequence[Mapping[str, str]]) -> str:
    answers = len({entry["answer"] for entry in dropped})
    shown = "; ".join(f"answer {e['answer']}: {e['what']}" for e in dropped[:5])
    more = f"; and {len(dropped) - 5} more (run.json: dropped)" if len(dropped) > 5 else ""
    return (
        f"The {answer_format} converter left out {len(dropped)} thing(s) in {answers} "
        f"answer(s), scored without them: {shown}{more}."
    )


def _config(  # noqa: PLR0917 - one private call site
    path: Path | None,
    answer_format: str,
    qampari: bool,
    judge: Judge,
    scorers: Sequence[Scorer],
    items: Sequence[ExternalAnswer],
    began: float,
    variant: str,
) -> dict[str, Any]:
    dropped = _dropped(items)
    count = len(items)
    return {
        "command": "score",
        "input": path.name if path is not None else None,
        "format": answer_format,
        "qampari": qampari,
        "answers": count,
        "judge": judge.config(),
        "scorers": [scorer.config() for scorer in scorers],
        "dropped": dropped,
        "without_passage": _without_passage(items),
        "unjudged_answers": _unjudged_answers(items),
        "nothing_judged": _nothing_judged(items),
        "variant_notes": {variant: _dropped_note(answer_format, dropped)} if dropped else {},
        "started_at": datetime.fromtimestamp(began, UTC).isoformat(timespec="seconds"),
        "seconds": round(time.time() - began, 3),
        "versions": versions(),
    }


def _write_atomically(result: EvalResult, out: Path, title: str) -> None:
    """Write the outputs into a temporary folder beside ``out``, then move them in."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        written = write_outputs(result, staging, title=title)
        out.mkdir(parents=True, exist_ok=True)
        for file_name in written:
            (staging / file_name).replace(out / file_name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
