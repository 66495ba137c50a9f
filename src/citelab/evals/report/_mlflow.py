"""A run folder written to an MLflow tracking store (``citelab eval --log-to mlflow``).

As MLflow's own evaluations log theirs: one MLflow run per citelab run, with the run's
settings as parameters, tags for the suite and models, ``report.html``, ``run.json`` and the
tables as artifacts; and one nested run per variant and model whose metrics are its figures
(each metric's value, and its interval's ends as ``<metric>_ci_low`` and ``_ci_high``) and
its tokens and cost, so MLflow's run table and charts compare variants and models across runs.

The store is the user's: a tracking URI (``--mlflow-uri``, else ``MLFLOW_TRACKING_URI``, else
a local file store ``./mlruns``). MLflow 3 keeps its file store in maintenance mode and asks
for an opt-in (``MLFLOW_ALLOW_FILE_STORE``): citelab gives it for a local folder it is asked
to write. ``mlflow`` (or the lighter ``mlflow-skinny``) is imported when first used.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pandas as pd

from citelab._errors import ConfigError, InvalidInput

__all__ = ["LoggedRun", "log_to_mlflow", "require_mlflow"]

_ARTIFACTS = (
    "report.html",
    "run.json",
    "summary.csv",
    "differences.csv",
    "corrected.csv",
    "usage.csv",
    "cases.csv",
    "scores.csv",
)
_PARAM_LIMIT = 6000
"""MLflow's longest parameter value (longer ones are cut, and say so)."""


@dataclass(frozen=True)
class LoggedRun:
    """Where a run went: the MLflow run, its experiment and store, and the nested runs."""

    run_id: str
    experiment: str
    uri: str
    children: dict[str, str] = field(default_factory=dict)
    """``<variant> · <model>`` → the nested MLflow run's id."""


def require_mlflow() -> Any:
    """``mlflow.tracking`` (the client), or a clear error saying how to install it."""
    try:
        from mlflow import tracking
    except ImportError as exc:
        raise ConfigError(
            "--log-to mlflow needs MLflow: pip install 'citelab[mlflow]' (mlflow-skinny, "
            "or the full mlflow for its server and database stores)"
        ) from exc
    return tracking


def log_to_mlflow(
    folder: str | Path, *, uri: str | None = None, experiment: str | None = None
) -> LoggedRun:
    """Write the run in ``folder`` (what ``citelab eval`` wrote) to the MLflow store at
    ``uri``, in ``experiment`` (default ``citelab/<suite>``); see the module docs."""
    out = Path(folder)
    config = _run_json(out)
    tracking = require_mlflow()
    store = _tracking_uri(uri)
    client = tracking.MlflowClient(tracking_uri=store)
    suite = str((config.get("suite") or {}).get("name") or out.name)
    name = experiment or f"citelab/{suite}"
    found = client.get_experiment_by_name(name)
    experiment_id = found.experiment_id if found is not None else client.create_experiment(name)
    parent = client.create_run(
        experiment_id,
        tags=_run_tags(config, suite, out),
        run_name=f"{suite} {config.get('finished_at') or config.get('rescored_at') or ''}".strip(),
    )
    run_id = parent.info.run_id
    try:
        _log(client, run_id, params=_params(config), metrics=_run_metrics(config, out))
        for artifact in _ARTIFACTS:
            if (out / artifact).is_file():
                client.log_artifact(run_id, str(out / artifact))
        children = _children(client, experiment_id, run_id, suite, out)
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED")
    return LoggedRun(run_id=run_id, experiment=name, uri=store, children=children)


def _run_json(out: Path) -> dict[str, Any]:
    path = out / "run.json"
    if not path.is_file():
        raise InvalidInput(f"{out}: not a run folder written by citelab eval (no run.json)")
    config: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return config


def _tracking_uri(uri: str | None) -> str:
    """The store's URI; a local folder as a ``file:`` URI, with MLflow's file-store opt-in."""
    given = uri or os.environ.get("MLFLOW_TRACKING_URI") or "mlruns"
    scheme = urlparse(given).scheme
    if scheme and scheme != "file" and len(scheme) > 1:  # one letter: a Windows drive
        return given
    path = Path(urlparse(given).path if scheme == "file" else given).resolve()
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return path.as_uri()


def _run_tags(config: dict[str, Any], suite: str, out: Path) -> dict[str, str]:
    models = [str(m.get("label") or m.get("spec")) for m in config.get("models") or []]
    gates = config.get("gates") or []
    return {
        "citelab.suite": suite,
        "citelab.models": ", ".join(models),
        "citelab.folder": str(out.resolve()),
        "citelab.gates": _gates_tag(gates),
        "mlflow.source.name": "citelab eval",
        "mlflow.source.type": "LOCAL",
    }


def _gates_tag(gates: list[dict[str, Any]]) -> str:
    if not gates:
        return "none"
    passed = sum(bool(gate.get("passed")) for gate in gates)
    return f"{passed}/{len(gates)} passed"


def _params(config: dict[str, Any]) -> dict[str, str]:
    suite = config.get("suite") or {}
    versions = config.get("versions") or {}
    params = {
        "suite": suite.get("name"),
        "suite_file": config.get("suite_file"),
        "seed": suite.get("seed"),
        "resamples": suite.get("resamples"),
        "concurrency": config.get("concurrency"),
        "limit": suite.get("limit"),
        "datasets": config.get("datasets"),
        "variants": list(config.get("variants") or {}),
        "models": config.get("models"),
        "scorers": config.get("scorers"),
        "judge": suite.get("judge"),
        "prices": {**(suite.get("prices") or {}), **(config.get("prices") or {})},
        "citelab_version": versions.get("citelab"),
    }
    return {key: _param(value) for key, value in params.items() if value not in (None, {}, [])}


def _param(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(text) <= _PARAM_LIMIT:
        return text
    return text[: _PARAM_LIMIT - 20] + " … (cut; run.json)"


def _run_metrics(config: dict[str, Any], out: Path) -> dict[str, float]:
    units = config.get("units") or {}
    gates = config.get("gates") or []
    metrics: dict[str, Any] = {
        "seconds": config.get("seconds"),
        "units_total": units.get("total"),
        "units_ran": units.get("ran"),
        "gates_passed": float(all(g.get("passed") for g in gates)) if gates else None,
    }
    cases = out / "cases.csv"
    if cases.is_file():
        turns = pd.read_csv(cases, usecols=lambda c: c in {"error", "turn"})
        metrics["turns"] = len(turns)
        if "error" in turns:
            metrics["turns_failed"] = int(turns["error"].notna().sum())
    return {key: float(value) for key, value in metrics.items() if _number(value)}


def _children(
    client: Any, experiment_id: str, parent: str, suite: str, out: Path
) -> dict[str, str]:
    """One nested run per variant and model, with its figures as metrics."""
    figures = _figures(out)
    children: dict[str, str] = {}
    for (variant, model), metrics in figures.items():
        child = client.create_run(
            experiment_id,
            tags={
                "mlflow.parentRunId": parent,
                "citelab.suite": suite,
                "citelab.variant": variant,
                "citelab.model": model,
            },
            run_name=f"{variant} · {model}",
        )
        _log(
            client, child.info.run_id, params={"variant": variant, "model": model}, metrics=metrics
        )
        client.set_terminated(child.info.run_id, "FINISHED")
        children[f"{variant} · {model}"] = child.info.run_id
    return children


def _figures(out: Path) -> dict[tuple[str, str], dict[str, float]]:
    """Per (variant, model): every metric's value and interval (``summary.csv``), and the
    tokens and cost (``usage.csv``)."""
    figures: dict[tuple[str, str], dict[str, float]] = {}
    keys = {"variant": str, "model": str}
    summary = out / "summary.csv"
    if summary.is_file() and summary.stat().st_size > 1:
        for row in pd.read_csv(summary, dtype=keys).to_dict("records"):
            metrics = figures.setdefault((row["variant"], row["model"]), {})
            name = _metric_name(str(row["metric"]))
            for column, suffix in (("value", ""), ("ci_low", "_ci_low"), ("ci_high", "_ci_high")):
                if _number(row.get(column)):
                    metrics[name + suffix] = float(row[column])
    usage = out / "usage.csv"
    if usage.is_file() and usage.stat().st_size > 1:
        for row in pd.read_csv(usage, dtype=keys).to_dict("records"):
            metrics = figures.setdefault((row["variant"], row["model"]), {})
            for column in ("input_tokens", "output_tokens", "tokens_per_turn", "cost_usd"):
                if _number(row.get(column)):
                    metrics[column] = float(row[column])
    return figures


def _metric_name(name: str) -> str:
    """A name MLflow accepts (letters, digits and ``_ - . / :`` and spaces)."""
    return re.sub(r"[^\w\-./: ]", "_", name)


def _log(client: Any, run_id: str, *, params: dict[str, str], metrics: dict[str, float]) -> None:
    from mlflow.entities import Metric, Param

    now = int(time.time() * 1000)
    client.log_batch(
        run_id,
        metrics=[Metric(key, value, now, 0) for key, value in metrics.items()],
        params=[Param(key, value) for key, value in params.items()],
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
