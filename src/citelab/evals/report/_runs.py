"""The run index: every run folder under a directory, read back as one line each
(``citelab runs [DIR]``, :func:`list_runs`).

A run folder is what ``citelab eval`` (or ``citelab score --out``) wrote: ``run.json`` with
the suite, models, times, gates and usage, ``summary.csv`` with the figures and ``cases.csv``
with the turns. Each entry says what ran (suite, models, variants, datasets), when, how many
cases and turns (and failed ones), its headline figures (the baseline variant's value and
interval of a few metrics, per model), its gates, and its tokens and cost. Folders that are
not runs are skipped; a run folder that cannot be read is listed among the problems, never
silently dropped.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from citelab._errors import InvalidInput

__all__ = ["HEADLINE_METRICS", "Headline", "RunEntry", "RunIndex", "list_runs"]

HEADLINE_METRICS = ("citation_recall", "citation_precision")
"""The figures an index shows of each run unless asked for others."""


class Headline(BaseModel):
    """One headline figure of a run: a metric of its baseline variant on one model."""

    model_config = ConfigDict(frozen=True)

    variant: str
    model: str
    metric: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None


class RunEntry(BaseModel):
    """One run folder, as the index lists it."""

    model_config = ConfigDict(frozen=True)

    folder: str
    """The folder, relative to the directory listed."""
    kind: str
    """``eval`` (a suite run) or ``score`` (other people's answers scored)."""
    suite: str
    models: list[str]
    variants: list[str]
    datasets: list[str]
    when: str
    """When the run (or its last rescore) finished, ISO 8601 in UTC; else the time
    ``run.json`` was written."""
    seconds: float | None = None
    cases: int = 0
    turns: int = 0
    failed_turns: int = 0
    headline: list[Headline] = []
    gates_passed: int = 0
    gates_total: int = 0
    gates: list[dict[str, Any]] = []
    """Each gate's ``name``, ``verdict`` and ``passed``."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens_estimated: bool = False
    """Whether citelab counted some of the tokens (a model that reported none)."""
    cost_usd: float | None = None
    """The run's cost where every model had a price; None otherwise."""


class RunIndex(BaseModel):
    """The runs under a directory, newest first, and the folders that could not be read."""

    root: str
    runs: list[RunEntry]
    problems: list[str] = []

    def table(self) -> pd.DataFrame:
        """One row per run: when, suite, models, cases, failures, the headline figures (of
        the first model), gates, tokens and cost, folder."""
        rows = []
        for run in self.runs:
            row: dict[str, Any] = {
                "when": run.when,
                "suite": run.suite,
                "models": ", ".join(run.models),
                "cases": run.cases,
                "failed_turns": run.failed_turns,
            }
            first = run.models[0] if run.models else None
            for figure in run.headline:
                if figure.model == first:
                    row[figure.metric] = figure.value
            row["gates"] = f"{run.gates_passed}/{run.gates_total}" if run.gates_total else "—"
            row["tokens"] = _tokens(run)
            row["estimated"] = run.tokens_estimated
            row["cost_usd"] = run.cost_usd
            row["folder"] = run.folder
            rows.append(row)
        return pd.DataFrame(rows)


def list_runs(
    directory: str | Path = "evaluations/reports", metrics: Sequence[str] = HEADLINE_METRICS
) -> RunIndex:
    """Every run folder under ``directory`` (searched to any depth), newest first, with the
    headline ``metrics``; see the module docs."""
    root = Path(directory)
    if not root.is_dir():
        raise InvalidInput(f"{root}: no such folder (give the folder your runs are written in)")
    runs: list[RunEntry] = []
    problems: list[str] = []
    for path in _run_files(root):
        try:
            runs.append(_entry(path.parent, root, metrics))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problems.append(f"{path.parent}: not readable as a run ({exc})")
    runs.sort(key=lambda run: run.when, reverse=True)
    return RunIndex(root=str(root), runs=runs, problems=problems)


def _run_files(root: Path) -> list[Path]:
    """``run.json`` files under ``root``, not descending into model caches."""
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if name != "cache")
        if "run.json" in files:
            found.append(Path(folder) / "run.json")
    return found


def _entry(folder: Path, root: Path, metrics: Sequence[str]) -> RunEntry:
    config = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    if not isinstance(config, dict):
        raise ValueError("run.json is not an object")
    suite = config.get("suite") or {}
    gates = config.get("gates") or []
    turns = _turns(folder)
    models = _models(config, turns)
    usage = config.get("usage") or []
    return RunEntry(
        folder=str(folder.relative_to(root)) if folder != root else ".",
        kind=str(config.get("command") or "eval"),
        suite=str(suite.get("name") or config.get("input") or folder.name),
        models=models,
        variants=list(config.get("variants") or _unique(turns, "variant")),
        datasets=list(config.get("datasets") or _unique(turns, "dataset")),
        when=_when(config, folder),
        seconds=_float(config.get("seconds")),
        cases=len(turns[["dataset", "case_id"]].drop_duplicates()) if not turns.empty else 0,
        turns=len(turns),
        failed_turns=int(turns["error"].notna().sum()) if "error" in turns else 0,
        headline=_headline(folder, metrics),
        gates_passed=sum(bool(gate.get("passed")) for gate in gates),
        gates_total=len(gates),
        gates=[
            {"name": g.get("name"), "verdict": g.get("verdict"), "passed": g.get("passed")}
            for g in gates
        ],
        input_tokens=_total(usage, "input_tokens"),
        output_tokens=_total(usage, "output_tokens"),
        tokens_estimated=any(bool(row.get("estimated")) for row in usage),
        cost_usd=_cost(usage),
    )


_KEYS = {"variant": str, "model": str, "dataset": str, "case_id": str}


def _turns(folder: Path) -> pd.DataFrame:
    path = folder / "cases.csv"
    if not path.is_file() or path.stat().st_size <= 1:
        return pd.DataFrame(columns=["variant", "model", "dataset", "case_id", "error"])
    wanted = {"variant", "model", "dataset", "case_id", "turn", "error"}
    return pd.read_csv(path, usecols=lambda c: c in wanted, dtype=_KEYS)


def _models(config: dict[str, Any], turns: pd.DataFrame) -> list[str]:
    named = [str(m.get("label") or m.get("spec")) for m in config.get("models") or []]
    return named or _unique(turns, "model")


def _unique(turns: pd.DataFrame, column: str) -> list[str]:
    return list(dict.fromkeys(turns[column].astype(str))) if column in turns else []


def _when(config: dict[str, Any], folder: Path) -> str:
    for key in ("rescored_at", "finished_at", "started_at"):
        if config.get(key):
            return str(config[key])
    stamp = (folder / "run.json").stat().st_mtime
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def _headline(folder: Path, metrics: Sequence[str]) -> list[Headline]:
    """The baseline variant's ``metrics`` per model (``baseline`` when a variant has that
    name, else the first), from ``summary.csv``."""
    path = folder / "summary.csv"
    if not path.is_file() or path.stat().st_size <= 1:
        return []
    summary = pd.read_csv(path, dtype=_KEYS)
    if summary.empty:
        return []
    variants = list(dict.fromkeys(summary["variant"]))
    base = "baseline" if "baseline" in variants else variants[0]
    rows = summary[(summary["variant"] == base) & summary["metric"].isin(list(metrics))]
    return [
        Headline(
            variant=base,
            model=str(row["model"]),
            metric=str(row["metric"]),
            value=_float(row["value"]),
            ci_low=_float(row.get("ci_low")),
            ci_high=_float(row.get("ci_high")),
        )
        for row in rows.to_dict("records")
    ]


def _total(usage: list[dict[str, Any]], column: str) -> int | None:
    values = [row.get(column) for row in usage]
    numbers = [int(v) for v in values if isinstance(v, int | float) and not math.isnan(v)]
    return sum(numbers) if numbers else None


def _cost(usage: list[dict[str, Any]]) -> float | None:
    costs = [_float(row.get("cost_usd")) for row in usage]
    if not costs or any(cost is None for cost in costs):
        return None
    return float(sum(cost for cost in costs if cost is not None))


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def _tokens(run: RunEntry) -> int | None:
    if run.input_tokens is None and run.output_tokens is None:
        return None
    return (run.input_tokens or 0) + (run.output_tokens or 0)
