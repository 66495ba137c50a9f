"""Two runs side by side: ``citelab compare RUN_A RUN_B`` and :func:`compare_runs`.

A run folder (what ``citelab eval`` writes) is read back as an :class:`EvalResult` by
:func:`load_run`: the score and detail tables, the turns, the records (for the case
browser), the gold (``gold.json``) and the scorers (rebuilt from ``run.json``).

:func:`compare_runs` puts two of them in one result whose *variants* are the two runs
(labelled by folder name, or as given) and whose *model* column says what is matched:
``<variant> · <model>`` when the runs share such pairs (before/after a change of code or
data), the variant name when they share variants run on one model each (two models), else
the one series of each run (``run``). Cases are matched by dataset and case id; every statistic of a
report then compares run B with run A, paired on the cases both scored (A is the baseline).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from citelab._errors import CitelabError, InvalidInput
from citelab.evals.dataset import Case
from citelab.evals.records import CaseRecord, read_records
from citelab.evals.results import TURN_FACTS, EvalResult, Gate, evaluate_gates
from citelab.evals.scorers import Aggregate, DetailLevel, Score, Scorer, build_scorers

__all__ = ["Comparison", "compare_runs", "comparison_gates", "load_run", "write_comparison"]

_KEYS = ["variant", "model", "dataset", "case_id", "turn"]


def load_run(folder: str | Path) -> EvalResult:
    """The result of the run written to ``folder`` (see the module docs)."""
    out = Path(folder)
    needed = ["run.json", "scores.csv", "cases.csv"]
    missing = [name for name in needed if not (out / name).is_file()]
    if missing:
        raise InvalidInput(
            f"{out}: not a run folder written by citelab eval (missing {', '.join(missing)}; "
            "runs written before citelab compare existed need `citelab eval --rescore`)"
        )
    config = json.loads((out / "run.json").read_text(encoding="utf-8"))
    scores = _read(out / "scores.csv")
    cases_table = _read(out / "cases.csv")
    turns = _turns(cases_table)
    details = {level: _read_optional(out / f"{level}s.csv") for level in ("statement", "citation")}
    summary = _read_optional(out / "summary.csv")
    scorers = _scorers(config, scores, summary)
    suite = config.get("suite") or {}
    return EvalResult(
        scores=scores,
        turns=turns,
        details=details,
        scorers=scorers,
        config=config,
        seed=int(suite.get("seed", 0) or 0),
        resamples=int(suite.get("resamples", 1000) or 1000),
        records=_records(out, turns),
        cases=_gold(out),
    )


_TEXT_KEYS = dict.fromkeys(["variant", "model", "dataset", "case_id"], str)


def _read(path: Path) -> pd.DataFrame:
    """A table the run wrote; keys stay text (a case id "007" is not the number 7)."""
    return pd.read_csv(path, dtype=_TEXT_KEYS)


def _read_optional(path: Path) -> pd.DataFrame:
    return _read(path) if path.is_file() and path.stat().st_size > 1 else pd.DataFrame()


def _turns(table: pd.DataFrame) -> pd.DataFrame:
    columns = [c for c in [*_KEYS, *TURN_FACTS] if c in table.columns]
    turns = table[columns].copy()
    for column in ("tags", "question", "answer"):
        if column in turns:
            turns[column] = turns[column].map(lambda v: "" if _missing(v) else str(v))
    turns["error"] = turns["error"].map(lambda v: None if _missing(v) else str(v))
    for column in ("variant", "model", "dataset", "case_id"):
        turns[column] = turns[column].astype(str)
    return turns


def _records(out: Path, turns: pd.DataFrame) -> list[CaseRecord]:
    """The last record written for each unit the tables hold (older lines are stale)."""
    latest: dict[tuple[str, str, str, str], CaseRecord] = {}
    for record in read_records(out / "records.jsonl").values():
        latest[(record.variant, record.model, record.dataset, record.case_id)] = record
    wanted = turns[["variant", "model", "dataset", "case_id"]].drop_duplicates()
    return [latest[key] for key in map(tuple, wanted.itertuples(index=False)) if key in latest]


def _gold(out: Path) -> dict[tuple[str, str], Case]:
    path = out / "gold.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    gold = {}
    for key, case in data.items():
        dataset, _, case_id = str(key).partition("/")
        gold[(dataset, case_id)] = Case.model_validate(case)
    return gold


@dataclass(frozen=True)
class _SavedScorer:
    """A scorer known only by what its run wrote (when it cannot be rebuilt here)."""

    name: str
    metric: str
    aggregate: Aggregate
    higher_is_better: bool
    level: DetailLevel = "citation"

    def __call__(self, record: Any, gold: Any) -> Score:
        raise InvalidInput(f"scorer {self.metric} was read from a run and cannot score")

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def _scorers(config: dict[str, Any], scores: pd.DataFrame, summary: pd.DataFrame) -> list[Scorer]:
    try:
        built = build_scorers(config.get("scorers") or [])
    except CitelabError:
        built = []
    metrics = list(dict.fromkeys(scores["metric"])) if not scores.empty else []
    if built and {s.metric for s in built} >= set(metrics):
        return built
    known = summary.drop_duplicates("metric").set_index("metric") if not summary.empty else None
    saved: list[Scorer] = []
    for metric in metrics:
        row = known.loc[metric] if known is not None and metric in known.index else None
        saved.append(
            _SavedScorer(
                name=metric,
                metric=metric,
                aggregate="macro" if row is not None and row["aggregate"] == "macro" else "micro",
                higher_is_better=bool(row["higher_is_better"]) if row is not None else True,
            )
        )
    return saved


# --- comparing -------------------------------------------------------------------------------


@dataclass
class Comparison:
    """Two runs as one result (see the module docs), and what was matched."""

    result: EvalResult
    labels: tuple[str, str]
    folders: tuple[Path, Path]
    matched: int
    """Cases (dataset, case id) both runs scored."""
    only: tuple[int, int]
    """Cases only run A, only run B scored."""
    runs: tuple[EvalResult, EvalResult]


def compare_runs(
    run_a: str | Path, run_b: str | Path, labels: Sequence[str] | None = None
) -> Comparison:
    """Run B against run A (see the module docs)."""
    folders = (Path(run_a), Path(run_b))
    first, second = load_run(folders[0]), load_run(folders[1])
    names = _labels(folders, labels)
    key = _matching(first, second)
    parts = [_relabel(first, names[0], key), _relabel(second, names[1], key)]
    cases_a = set(map(tuple, first.turns[["dataset", "case_id"]].drop_duplicates().to_numpy()))
    cases_b = set(map(tuple, second.turns[["dataset", "case_id"]].drop_duplicates().to_numpy()))
    combined = EvalResult(
        scores=pd.concat([p.scores for p in parts], ignore_index=True),
        turns=pd.concat([p.turns for p in parts], ignore_index=True),
        details={
            level: pd.concat(
                [p.details.get(level, pd.DataFrame()) for p in parts], ignore_index=True
            )
            for level in ("statement", "citation")
        },
        scorers=_union_scorers(first.scorers, second.scorers),
        config={
            "suite": {
                "name": f"{names[0]} vs {names[1]}",
                "description": f"Run {names[1]} compared with run {names[0]} (the baseline), "
                "case by case.",
            },
            "variants": {
                names[0]: {"set": {}, "description": f"run A: {folders[0]}"},
                names[1]: {"set": {}, "description": f"run B: {folders[1]}"},
            },
            "compared": {"a": first.config, "b": second.config},
        },
        seed=first.seed,
        resamples=first.resamples,
        records=[*parts[0].records, *parts[1].records],
        cases={**second.cases, **first.cases},
    )
    return Comparison(
        result=combined,
        labels=names,
        folders=folders,
        matched=len(cases_a & cases_b),
        only=(len(cases_a - cases_b), len(cases_b - cases_a)),
        runs=(first, second),
    )


def _labels(folders: tuple[Path, Path], labels: Sequence[str] | None) -> tuple[str, str]:
    if labels is not None:
        if len(labels) != 2 or labels[0] == labels[1] or not all(labels):
            raise InvalidInput(f"--labels needs two different names, got {list(labels)}")
        return (str(labels[0]), str(labels[1]))
    a, b = folders[0].resolve().name, folders[1].resolve().name
    return (a, b) if a != b else (f"A:{a}", f"B:{b}")


def _matching(first: EvalResult, second: EvalResult) -> str:
    """What pairs series across the runs: ``pair`` when they share (variant, model) pairs,
    ``variant`` when they share variant names (each run with one model per variant: two
    models, or before/after a change of model), else ``run`` (one series each)."""
    series = [r.turns[["variant", "model"]].drop_duplicates() for r in (first, second)]
    pairs = [set(map(tuple, s.to_numpy())) for s in series]
    if pairs[0] & pairs[1]:
        return "pair"
    names = [set(s["variant"]) for s in series]
    one_model = all(not s["variant"].duplicated().any() for s in series)
    if names[0] & names[1] and one_model:
        return "variant"
    if all(len(s) == 1 for s in series):
        return "run"
    raise InvalidInput(
        f"the runs share no variant and model (A: {sorted(pairs[0])}, B: {sorted(pairs[1])}) "
        "and do not have one variant and model each: there is nothing to match them by"
    )


def _matched(key: str, variant: str, model: str) -> str:
    if key == "pair":
        return f"{variant} · {model}"
    return variant if key == "variant" else "run"


def _relabel(result: EvalResult, label: str, key: str) -> EvalResult:
    """``variant`` := the run's label, ``model`` := what is matched (see the module docs)."""

    def frame(table: pd.DataFrame) -> pd.DataFrame:
        if table.empty:
            return table
        out = table.copy()
        out["model"] = [
            _matched(key, str(v), str(m)) for v, m in zip(out["variant"], out["model"], strict=True)
        ]
        out["variant"] = label
        return out

    records = [
        record.model_copy(
            update={
                "key": f"{label}|{record.key}",
                "variant": label,
                "model": _matched(key, record.variant, record.model),
            }
        )
        for record in result.records
    ]
    return EvalResult(
        scores=frame(result.scores),
        turns=frame(result.turns),
        details={level: frame(table) for level, table in result.details.items()},
        scorers=result.scorers,
        records=records,
    )


def _union_scorers(first: Sequence[Scorer], second: Sequence[Scorer]) -> list[Scorer]:
    seen = {s.metric for s in first}
    return [*first, *(s for s in second if s.metric not in seen)]


def write_comparison(
    comparison: Comparison,
    out_dir: str | Path,
    *,
    non_inferior: Sequence[tuple[str, float]] = (),
    confidence: float = 0.95,
) -> dict[str, Path]:
    """The comparison's tables and ``report.html`` (``compare.json`` says what was read).

    ``non_inferior`` is ``(metric, margin)`` pairs (``*``: every metric): gates that B is
    not worse than A on the metric by more than the margin, at ``confidence`` (see
    :func:`comparison_gates`); their verdicts go to ``compare.json``, the report and
    ``comparison.result.config["gates"]``."""
    from citelab.evals.report._report import comparison_intro, render_html

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result = comparison.result
    gates = comparison_gates(comparison, non_inferior, confidence)
    written = {
        "differences.csv": out / "differences.csv",
        "summary.csv": out / "summary.csv",
        "report.html": out / "report.html",
        "compare.json": out / "compare.json",
    }
    differences = result.differences(confidence=confidence)
    summary = result.summary()
    differences.to_csv(written["differences.csv"], index=False, float_format="%.6g")
    summary.to_csv(written["summary.csv"], index=False, float_format="%.6g")
    checked = evaluate_gates(
        result, gates, differences={(comparison.labels[0], "all", confidence): differences}
    )
    result.config["gates"] = [gate.model_dump(mode="json") for gate in checked]
    page = render_html(
        result,
        [],
        str(result.config["suite"]["name"]),
        intro=comparison_intro(comparison),
        summary=summary,
        differences=differences,
        gates=checked,
    )
    written["report.html"].write_text(page, encoding="utf-8")
    facts = {
        "a": {"label": comparison.labels[0], "folder": str(comparison.folders[0])},
        "b": {"label": comparison.labels[1], "folder": str(comparison.folders[1])},
        "matched_cases": comparison.matched,
        "only_a": comparison.only[0],
        "only_b": comparison.only[1],
        "confidence": confidence,
        "gates": result.config["gates"],
    }
    written["compare.json"].write_text(json.dumps(facts, indent=2), encoding="utf-8")
    return written


def comparison_gates(
    comparison: Comparison, non_inferior: Sequence[tuple[str, float]], confidence: float = 0.95
) -> list[Gate]:
    """Non-inferiority gates of run B against run A: one per ``(metric, margin)``; ``*``
    stands for every metric both runs have a value of (a metric neither scored on any turn
    has nothing to compare). A metric neither run has is an ``InvalidInput``."""
    a, b = comparison.labels
    metrics = [scorer.metric for scorer in comparison.result.scorers]
    scores = comparison.result.scores
    valued = scores[scores["value"].notna()].groupby("metric")["variant"].nunique()
    both = [metric for metric in metrics if valued.get(metric, 0) == 2]
    gates = []
    for metric, margin in non_inferior:
        if metric != "*" and metric not in metrics:
            raise InvalidInput(
                f"--non-inferior {metric}: neither run has that metric "
                f"(metrics: {', '.join(metrics)})"
            )
        for name in both if metric == "*" else [metric]:
            gates.append(
                Gate(
                    metric=name,
                    variant=b,
                    not_worse_than=a,
                    margin=margin,
                    confidence=confidence,
                    # Unchanged answers (a rerun of the accepted code) are no regression:
                    # reported as not informative, without failing the comparison.
                    required=False,
                )
            )
    return gates


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
