"""Runs side by side: ``citelab compare RUN_A RUN_B [RUN_C…]``, :func:`compare_runs` and
:func:`compare_many`.

A run folder (what ``citelab eval`` writes) is read back as an :class:`EvalResult` by
:func:`load_run`: the score and detail tables, the turns, the records (for the case
browser), the gold (``gold.json``) and the scorers (rebuilt from ``run.json``).

:func:`compare_runs` puts two of them in one result whose *variants* are the two runs
(labelled by folder name, or as given) and whose *model* column says what is matched:
``<variant> · <model>`` when the runs share such pairs (before/after a change of code or
data), the variant name when they share variants run on one model each (two models), else
the one series of each run (``run``). Cases are matched by dataset and case id; every statistic of a
report then compares run B with run A, paired on the cases both scored (A is the baseline).
:func:`compare_many` does the same for more runs: every run against the first, and
:func:`figures_table` puts every run's figures beside its paired difference from the first.
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

__all__ = [
    "Comparison",
    "compare_many",
    "compare_runs",
    "comparison_gates",
    "figures_table",
    "load_run",
    "write_comparison",
]

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
    """Two or more runs as one result (see the module docs), and what was matched. The
    first run is the baseline every other is compared with."""

    result: EvalResult
    labels: tuple[str, ...]
    folders: tuple[Path, ...]
    matched: int
    """Cases (dataset, case id) every run scored."""
    only: tuple[int, ...]
    """Per run, the cases it scored that not every run scored (with two runs: only in A,
    only in B)."""
    runs: tuple[EvalResult, ...]


def compare_runs(
    run_a: str | Path, run_b: str | Path, labels: Sequence[str] | None = None
) -> Comparison:
    """Run B against run A (see the module docs)."""
    return compare_many([run_a, run_b], labels)


def compare_many(folders: Sequence[str | Path], labels: Sequence[str] | None = None) -> Comparison:
    """Every run of ``folders`` (two or more) against the first, as :func:`compare_runs`
    compares two: one result whose variants are the runs, paired on the cases both of a pair
    scored."""
    if len(folders) < 2:
        raise InvalidInput(f"a comparison needs two runs or more, got {len(folders)}")
    paths = tuple(Path(folder) for folder in folders)
    loaded = tuple(load_run(path) for path in paths)
    names = _labels(paths, labels)
    key = _matching(loaded, names)
    parts = [_relabel(run, name, key) for run, name in zip(loaded, names, strict=True)]
    cases = [
        set(map(tuple, run.turns[["dataset", "case_id"]].drop_duplicates().to_numpy()))
        for run in loaded
    ]
    common = set.intersection(*cases)
    combined = EvalResult(
        scores=pd.concat([p.scores for p in parts], ignore_index=True),
        turns=pd.concat([p.turns for p in parts], ignore_index=True),
        details={
            level: pd.concat(
                [p.details.get(level, pd.DataFrame()) for p in parts], ignore_index=True
            )
            for level in ("statement", "citation")
        },
        scorers=_union_scorers([run.scorers for run in loaded]),
        config=_combined_config(loaded, names, paths),
        seed=loaded[0].seed,
        resamples=loaded[0].resamples,
        records=[record for part in parts for record in part.records],
        cases={k: v for run in reversed(loaded) for k, v in run.cases.items()},
    )
    return Comparison(
        result=combined,
        labels=names,
        folders=paths,
        matched=len(common),
        only=tuple(len(run_cases - common) for run_cases in cases),
        runs=loaded,
    )


def _letter(index: int) -> str:
    """A, B, C… for the runs (then R27, R28…)."""
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def _combined_config(
    runs: Sequence[EvalResult], names: Sequence[str], folders: Sequence[Path]
) -> dict[str, Any]:
    if len(names) == 2:
        title = f"{names[0]} vs {names[1]}"
        description = f"Run {names[1]} compared with run {names[0]} (the baseline), case by case."
    else:
        title = " vs ".join(names)
        description = (
            f"Runs {', '.join(names[1:])} each compared with run {names[0]} (the baseline), "
            "case by case."
        )
    return {
        "suite": {"name": title, "description": description},
        "variants": {
            name: {"set": {}, "description": f"run {_letter(i)}: {folder}"}
            for i, (name, folder) in enumerate(zip(names, folders, strict=True))
        },
        "compared": {_letter(i).lower(): run.config for i, run in enumerate(runs)},
    }


def _labels(folders: Sequence[Path], labels: Sequence[str] | None) -> tuple[str, ...]:
    count = len(folders)
    if labels is not None:
        if len(labels) != count or len(set(labels)) != count or not all(labels):
            number = "two" if count == 2 else str(count)
            raise InvalidInput(
                f"--labels needs {number} different names, one per run, got {list(labels)}"
            )
        return tuple(str(label) for label in labels)
    names = [folder.resolve().name for folder in folders]
    if len(set(names)) == count:
        return tuple(names)
    return tuple(f"{_letter(i)}:{name}" for i, name in enumerate(names))


def _matching(runs: Sequence[EvalResult], names: Sequence[str]) -> str:
    """What pairs series across the runs: ``pair`` when every run shares a (variant, model)
    pair with the first, ``variant`` when every run shares a variant name with the first
    (each run with one model per variant: two models, or before/after a change of model),
    else ``run`` (one series each)."""
    series = [r.turns[["variant", "model"]].drop_duplicates() for r in runs]
    pairs = [set(map(tuple, s.to_numpy())) for s in series]
    if all(pairs[0] & other for other in pairs[1:]):
        return "pair"
    variants = [set(s["variant"]) for s in series]
    one_model = all(not s["variant"].duplicated().any() for s in series)
    if all(variants[0] & other for other in variants[1:]) and one_model:
        return "variant"
    if all(len(s) == 1 for s in series):
        return "run"
    if len(runs) == 2:
        held = f"A: {sorted(pairs[0])}, B: {sorted(pairs[1])}"
        return _unmatched(f"the runs share no variant and model ({held})", "do not have")
    held = "; ".join(f"{name}: {sorted(p)}" for name, p in zip(names, pairs, strict=True))
    return _unmatched(
        f"not every run shares a variant and model with {names[0]} ({held})", "do not all have"
    )


def _unmatched(what: str, have: str) -> str:
    raise InvalidInput(
        f"{what} and {have} one variant and model each: there is nothing to match them by"
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


def _union_scorers(runs: Sequence[Sequence[Scorer]]) -> list[Scorer]:
    """Every metric once, the first run's scorer for it first."""
    seen: dict[str, Scorer] = {}
    for scorers in runs:
        for scorer in scorers:
            seen.setdefault(scorer.metric, scorer)
    return list(seen.values())


def write_comparison(
    comparison: Comparison,
    out_dir: str | Path,
    *,
    non_inferior: Sequence[tuple[str, float]] = (),
    confidence: float = 0.95,
) -> dict[str, Path]:
    """The comparison's tables and ``report.html`` (``compare.json`` says what was read;
    ``figures.csv`` is :func:`figures_table`).

    ``non_inferior`` is ``(metric, margin)`` pairs (``*``: every metric): gates that each run
    after the first is not worse than the first on the metric by more than the margin, at
    ``confidence`` (see :func:`comparison_gates`); their verdicts go to ``compare.json``, the
    report and ``comparison.result.config["gates"]``."""
    from citelab.evals.report._report import comparison_intro, render_html

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result = comparison.result
    base = comparison.labels[0]
    gates = comparison_gates(comparison, non_inferior, confidence)
    written = {
        "differences.csv": out / "differences.csv",
        "summary.csv": out / "summary.csv",
        "figures.csv": out / "figures.csv",
        "report.html": out / "report.html",
        "compare.json": out / "compare.json",
    }
    differences = result.differences(baseline=base, confidence=confidence)
    summary = result.summary()
    differences.to_csv(written["differences.csv"], index=False, float_format="%.6g")
    summary.to_csv(written["summary.csv"], index=False, float_format="%.6g")
    figures = figures_table(comparison, summary=summary, differences=differences)
    figures.to_csv(written["figures.csv"], index=False, float_format="%.6g")
    checked = evaluate_gates(result, gates, differences={(base, "all", confidence): differences})
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
    facts = _facts(comparison, confidence)
    written["compare.json"].write_text(json.dumps(facts, indent=2), encoding="utf-8")
    return written


def _facts(comparison: Comparison, confidence: float) -> dict[str, Any]:
    """``compare.json``: the runs, what matched, the gates (and, for two runs, ``a`` and
    ``b`` as before)."""
    runs = [
        {"label": label, "folder": str(folder), "only": only}
        for label, folder, only in zip(
            comparison.labels, comparison.folders, comparison.only, strict=True
        )
    ]
    pair: dict[str, Any] = {}
    if len(runs) == 2:
        pair = {
            "a": {"label": comparison.labels[0], "folder": str(comparison.folders[0])},
            "b": {"label": comparison.labels[1], "folder": str(comparison.folders[1])},
            "only_a": comparison.only[0],
            "only_b": comparison.only[1],
        }
    return {
        **pair,
        "baseline": comparison.labels[0],
        "runs": runs,
        "matched_cases": comparison.matched,
        "confidence": confidence,
        "gates": comparison.result.config.get("gates", []),
    }


_FIGURE_COLUMNS = [
    "run",
    "model",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "units",
    "cases",
    "difference",
    "difference_ci_low",
    "difference_ci_high",
    "paired_cases",
    "excludes_zero",
    "higher_is_better",
]


def figures_table(
    comparison: Comparison,
    *,
    confidence: float = 0.95,
    summary: pd.DataFrame | None = None,
    differences: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every run's figures, one row per run, matched series and metric: its value and
    interval, and (for every run but the first) its paired difference from the first run
    on the cases both scored, with that difference's interval at ``confidence``."""
    result = comparison.result
    summary = result.summary() if summary is None else summary
    if differences is None:
        differences = result.differences(baseline=comparison.labels[0], confidence=confidence)
    if summary.empty:
        return pd.DataFrame(columns=_FIGURE_COLUMNS)
    paired = differences.rename(
        columns={
            "ci_low": "difference_ci_low",
            "ci_high": "difference_ci_high",
            "cases": "paired_cases",
        }
    )
    wanted = ["variant", "model", "metric", "difference", "difference_ci_low"]
    wanted += ["difference_ci_high", "paired_cases", "excludes_zero"]
    table = summary.merge(
        paired[wanted] if not paired.empty else pd.DataFrame(columns=wanted),
        on=["variant", "model", "metric"],
        how="left",
    )
    order = {label: i for i, label in enumerate(comparison.labels)}
    table = table.assign(_order=table["variant"].map(order)).sort_values(
        ["model", "metric", "_order"], kind="stable"
    )
    return table.rename(columns={"variant": "run"})[_FIGURE_COLUMNS].reset_index(drop=True)


def comparison_gates(
    comparison: Comparison, non_inferior: Sequence[tuple[str, float]], confidence: float = 0.95
) -> list[Gate]:
    """Non-inferiority gates of every run after the first against the first: one per
    ``(metric, margin)`` and run; ``*`` stands for every metric both runs of a pair have a
    value of (a metric neither scored on any turn has nothing to compare). A metric no run
    has is an ``InvalidInput``."""
    base, others = comparison.labels[0], comparison.labels[1:]
    metrics = [scorer.metric for scorer in comparison.result.scorers]
    scores = comparison.result.scores
    valued = scores[scores["value"].notna()]
    has = {
        label: set(valued.loc[valued["variant"] == label, "metric"]) for label in comparison.labels
    }
    gates = []
    for metric, margin in non_inferior:
        if metric != "*" and metric not in metrics:
            nobody = "neither run" if len(comparison.labels) == 2 else "no run"
            raise InvalidInput(
                f"--non-inferior {metric}: {nobody} has that metric (metrics: {', '.join(metrics)})"
            )
        for label in others:
            both = [m for m in metrics if m in has[base] and m in has[label]]
            for name in both if metric == "*" else [metric]:
                gates.append(
                    Gate(
                        metric=name,
                        variant=label,
                        not_worse_than=base,
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
