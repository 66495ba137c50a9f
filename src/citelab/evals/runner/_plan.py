"""A run's plan: a suite resolved into units of work (:func:`plan_run`).

The datasets are loaded (at most ``limit`` cases each; an ``[[alce]]`` entry's items are a
dataset too, of cases that bring their own documents, answered by the pipeline when the entry
says ``pipeline = true``), the agents are configured for each
variant (a bad override names the suite file, the variant and the key), the scorers are built
(with the suite's judge, one instance shared), and every case under every variant and model
becomes one :class:`Unit`: what the run answers and records as one line of
``records.jsonl``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from citelab._errors import ConfigError
from citelab.agent import AgentConfig, default_agents, load_agents
from citelab.evals.dataset import Case, Dataset, load_dataset
from citelab.evals.judges import build_judge
from citelab.evals.runner._alce import alce_dataset
from citelab.evals.runner._suite import ModelSpec, Suite, Variant
from citelab.evals.scorers import Scorer, accepts_argument, build_scorers, scorer_names

__all__ = ["RunPlan", "Unit", "model_endpoint", "plan_run"]


@dataclass(frozen=True)
class Unit:
    """One case under one variant and model: what gets run and recorded as one line."""

    variant: Variant
    model: ModelSpec
    dataset: Dataset
    case: Case
    agent: AgentConfig
    """The case's agent as the variant configures it."""
    seed: int
    endpoint: str | None = None
    """Where the model's calls go when that is configured outside the spec (the
    ``OPENAI_BASE_URL`` of an ``openai:`` model): another endpoint is another model."""

    @functools.cached_property
    def key(self) -> str:
        """``variant|model|dataset|case|fingerprint``: a change to what runs re-runs it."""
        fingerprint: dict[str, Any] = {
            "agent": self.agent.model_dump(mode="json"),
            "model": self.model.identity(),
            "case": self.case.model_dump(mode="json"),
            "seed": self.seed,
        }
        if self.endpoint is not None:
            fingerprint["endpoint"] = self.endpoint
        digest = hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()
        return "|".join([self.names, digest[:16]])

    @property
    def names(self) -> str:
        """``variant|model|dataset|case``: the key without the configuration's fingerprint."""
        return "|".join((self.variant.name, self.model.name, self.dataset.name, self.case.id))


@dataclass
class RunPlan:
    """Everything a run needs, resolved from a suite (see :func:`plan_run`)."""

    suite: Suite
    datasets: list[Dataset]
    agents: dict[str, dict[str, AgentConfig]]
    """Variant name → the agents as that variant configures them."""
    models: list[ModelSpec]
    scorers: list[Scorer]
    units: list[Unit] = field(default_factory=list)

    @property
    def cases(self) -> dict[tuple[str, str], Case]:
        return {(d.name, c.id): c for d in self.datasets for c in d}


def plan_run(
    suite: Suite,
    *,
    models: Sequence[str | ModelSpec] | None = None,
    limit: int | None = None,
) -> RunPlan:
    """Resolve a suite: datasets (at most ``limit`` cases each), variants' agents, scorers.

    ``models`` replaces the suite's models by specs (``extractive``, ``openai:<model>``…,
    or :class:`ModelSpec` objects).
    """
    cap = limit if limit is not None else suite.limit
    datasets = [_limited(load_dataset(path), cap) for path in suite.dataset_paths()]
    alce = {entry.name: alce_dataset(suite, entry) for entry in suite.alce}
    _check_alce_names(suite, datasets)
    answered = datasets + [alce[entry.name] for entry in suite.alce if entry.pipeline]
    agents_file = suite.agents_path()
    base = load_agents(agents_file) if agents_file is not None else default_agents()
    _check_agents(suite, answered, base)
    variants = suite.expanded_variants()
    _check_findings(suite, variants)
    _check_model_variants(suite, variants)
    specs = (
        [m if isinstance(m, ModelSpec) else ModelSpec(spec=m) for m in models]
        if models
        else list(suite.models)
    )
    agents = {v.name: _variant_agents(suite, v, base) for v in variants}
    plan = RunPlan(
        suite, datasets + list(alce.values()), agents, specs, build_scorers(_scorer_specs(suite))
    )
    _check_gates(suite, variants, [scorer.metric for scorer in plan.scorers])
    endpoints = {spec.name: model_endpoint(spec) for spec in specs}
    plan.units = [
        Unit(
            variant,
            spec,
            dataset,
            case,
            agents[variant.name][case.agent],
            suite.seed,
            endpoints[spec.name],
        )
        for variant in variants
        for spec in specs
        if spec.variants is None or variant.name in spec.variants
        for dataset in answered
        for case in _model_cases(dataset, spec, suite.seed)
    ]
    return plan


def _model_cases(dataset: Dataset, spec: ModelSpec, seed: int) -> list[Case]:
    """The cases of ``dataset`` that ``spec`` runs: all, or its seeded sample of ``limit``
    (in dataset order; the same sample in every run)."""
    if spec.limit is None or spec.limit >= len(dataset):
        return list(dataset)
    rng = random.Random(f"{seed}|{spec.name}|{dataset.name}")
    chosen = sorted(rng.sample(range(len(dataset)), spec.limit))
    return [dataset.cases[index] for index in chosen]


def model_endpoint(spec: ModelSpec) -> str | None:
    """The endpoint an ``openai:`` spec calls (its ``base_url`` option, else
    ``OPENAI_BASE_URL``, else OpenAI's); None for models that call no endpoint."""
    if not spec.spec.startswith("openai:"):
        return None
    configured = spec.options.get("base_url") or os.environ.get("OPENAI_BASE_URL")
    return str(configured or "https://api.openai.com/v1")


# --- planning ------------------------------------------------------------------------------


def _limited(dataset: Dataset, cap: int | None) -> Dataset:
    if cap is None or len(dataset) <= cap:
        return dataset
    return Dataset(dataset.name, dataset.cases[:cap], dataset.path)


def _check_agents(suite: Suite, datasets: list[Dataset], agents: Mapping[str, Any]) -> None:
    for dataset in datasets:
        missing = sorted(set(dataset.agents) - set(agents))
        if missing:
            raise ConfigError(
                f"{suite.path}: dataset {dataset.name} names agent(s) {missing} that the agents "
                f"configuration does not define (known: {sorted(agents)})"
            )


def _check_alce_names(suite: Suite, datasets: list[Dataset]) -> None:
    """Results name cases by dataset: an ALCE entry may not share a dataset's (or another
    entry's) name."""
    taken = {dataset.name for dataset in datasets}
    for index, entry in enumerate(suite.alce):
        if entry.name in taken:
            raise ConfigError(
                f"{suite.path}: key alce.{index}.name: {entry.name!r} is also the name of a "
                "dataset or of an earlier [[alce]] entry (results name cases by dataset)"
            )
        taken.add(entry.name)


def _check_findings(suite: Suite, variants: list[Variant]) -> None:
    names = {v.name for v in variants}
    for index, finding in enumerate(suite.findings):
        for role in ("baseline", "variant"):
            name = getattr(finding, role)
            if name is None or name == "*":
                continue
            if name not in names:
                raise ConfigError(
                    f"{suite.path}: key findings.{index}.{role}: no variant named {name!r} "
                    f"(variants: {sorted(names)})"
                )


def _check_model_variants(suite: Suite, variants: list[Variant]) -> None:
    """Every variant a model names is one the suite runs."""
    names = {v.name for v in variants}
    for index, spec in enumerate(suite.models):
        unknown = sorted(set(spec.variants or ()) - names)
        if unknown:
            raise ConfigError(
                f"{suite.path}: key models.{index}.variants: no variant named "
                f"{', '.join(map(repr, unknown))} (variants: {sorted(names)})"
            )


def _check_gates(suite: Suite, variants: list[Variant], metrics: list[str]) -> None:
    """Every gate names variants the suite runs and a metric one of its scorers writes."""
    names = {v.name for v in variants}
    for index, gate in enumerate(suite.gates):
        for role in ("variant", "not_worse_than"):
            name = getattr(gate, role)
            if name is not None and name != "*" and name not in names:
                raise ConfigError(
                    f"{suite.path}: key gates.{index}.{role}: no variant named {name!r} "
                    f"(variants: {sorted(names)})"
                )
        if gate.metric not in metrics:
            raise ConfigError(
                f"{suite.path}: key gates.{index}.metric: no scorer of the suite writes "
                f"{gate.metric!r} (metrics: {', '.join(metrics)})"
            )


def _variant_agents(
    suite: Suite, variant: Variant, base: Mapping[str, AgentConfig]
) -> dict[str, AgentConfig]:
    agents = {}
    for name, config in base.items():
        data = config.model_dump()
        for dotted, value in variant.set.items():
            _assign(data, dotted, value, suite, variant)
        try:
            agents[name] = AgentConfig.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
            )
            raise ConfigError(
                f"{suite.path}: variant {variant.name!r}: agent {name!r} rejects the overrides "
                f"({problems})"
            ) from exc
    return agents


def _assign(data: dict[str, Any], dotted: str, value: Any, suite: Suite, variant: Variant) -> None:
    parts = dotted.split(".")
    target: Any = data
    for index, part in enumerate(parts[:-1]):
        if not isinstance(target, dict) or part not in target:
            raise ConfigError(
                f"{suite.path}: variant {variant.name!r}: key set.{dotted}: "
                f"{'.'.join(parts[: index + 1])} is not an agent setting"
            )
        if target[part] is None:
            target[part] = {}
        target = target[part]
    if not isinstance(target, dict) or parts[-1] not in target:
        known = ", ".join(sorted(target)) if isinstance(target, dict) else "none"
        raise ConfigError(
            f"{suite.path}: variant {variant.name!r}: key set.{dotted}: no such agent setting "
            f"(known here: {known})"
        )
    target[parts[-1]] = value


def _scorer_specs(suite: Suite) -> list[str | dict[str, Any]]:
    specs: list[str | dict[str, Any]] = list(suite.scorers or scorer_names())
    if suite.judge is None:
        return specs
    judged: list[str | dict[str, Any]] = []
    # One judge for all the scorers: an LLM judge's verdicts (its memo) are then shared.
    judge = build_judge(suite.judge)
    for spec in specs:
        config: dict[str, Any] = {"name": spec} if isinstance(spec, str) else dict(spec)
        if "judge" not in config and accepts_argument(str(config.get("name")), "judge"):
            config["judge"] = judge
        judged.append(config)
    return judged
