"""The scorer protocol, scores, and the registry that rebuilds scorers from configuration.

A scorer is a small object: ``scorer(record, gold) -> Score`` for one answered turn. Scorers
are built by factories whose keyword arguments are their whole configuration, registered by
name, so ``{"name": "citation_recall", "alce_compat": true}`` in a suite (or in a run's log)
rebuilds the very same scorer. The built-in scorers are registered by their own modules, which
``citelab.evals.scorers`` imports after this one.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from citelab._errors import ConfigError
from citelab.evals.dataset import GoldTurn
from citelab.evals.records import TurnRecord

__all__ = [
    "Aggregate",
    "DetailLevel",
    "Score",
    "Scorer",
    "accepts_argument",
    "build_scorer",
    "build_scorers",
    "register_scorer",
    "scorer_names",
]

Aggregate = Literal["micro", "macro"]
"""micro: pool every unit (sum of numerators over sum of denominators); macro: mean per turn."""
DetailLevel = Literal["statement", "citation"]
"""Which results table a scorer's detail rows go to."""


@dataclass(frozen=True)
class Score:
    """One scorer's verdict on one turn.

    ``numerator / denominator`` is the turn's value over its units (statements, citations,
    anchors…); ``value`` may differ when a scorer's own convention says so (ALCE scores an
    answer without citations 0 precision). ``value is None`` means "not applicable".
    """

    metric: str
    numerator: float = 0.0
    denominator: float = 0.0
    value: float | None = None
    rows: tuple[Mapping[str, Any], ...] = ()
    """Detail rows, one per unit; each has a ``hit``: the unit counts toward the numerator."""

    @classmethod
    def of(cls, metric: str, rows: Sequence[Mapping[str, Any]]) -> Score:
        """The share of rows that are a ``hit`` (None when there are no rows)."""
        good = sum(1 for row in rows if row["hit"])
        total = len(rows)
        return cls(metric, good, total, good / total if total else None, tuple(rows))

    @classmethod
    def not_applicable(cls, metric: str) -> Score:
        return cls(metric)


@runtime_checkable
class Scorer(Protocol):
    """Scores one answered turn against its gold turn."""

    @property
    def name(self) -> str:
        """The registered name (the factory that builds it)."""
        ...

    @property
    def metric(self) -> str:
        """The column its values go to (name plus a suffix for non-default modes)."""
        ...

    @property
    def aggregate(self) -> Aggregate:
        """How turns pool into a variant's value."""
        ...

    @property
    def higher_is_better(self) -> bool: ...

    @property
    def level(self) -> DetailLevel:
        """Which results table its detail rows go to."""
        ...

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score: ...

    def config(self) -> dict[str, Any]:
        """``{"name": ..., **arguments}``: rebuilds this scorer with :func:`build_scorer`."""
        ...


@dataclass
class _Registry:
    factories: dict[str, Callable[..., Scorer]] = field(default_factory=dict)


_REGISTRY = _Registry()


def register_scorer(
    name: str, *, replace: bool = False
) -> Callable[[Callable[..., Scorer]], Callable[..., Scorer]]:
    """Decorator: register a scorer factory under ``name``."""

    def decorate(factory: Callable[..., Scorer]) -> Callable[..., Scorer]:
        if name in _REGISTRY.factories and not replace:
            raise ConfigError(f"scorer {name!r} is already registered (pass replace=True)")
        _REGISTRY.factories[name] = factory
        return factory

    return decorate


def accepts_argument(name: str, argument: str) -> bool:
    """True when the scorer registered as ``name`` takes ``argument`` (e.g. ``judge``)."""
    factory = _REGISTRY.factories.get(name)
    return factory is not None and argument in inspect.signature(factory).parameters


def scorer_names() -> list[str]:
    return sorted(_REGISTRY.factories)


def build_scorer(spec: str | Mapping[str, Any] | Scorer) -> Scorer:
    """A scorer from its name, its configuration mapping, or an instance (returned as is)."""
    if isinstance(spec, str | Mapping):
        config = {"name": spec} if isinstance(spec, str) else dict(spec)
        name = config.pop("name", None)
        if not isinstance(name, str) or name not in _REGISTRY.factories:
            known = ", ".join(sorted(_REGISTRY.factories))
            raise ConfigError(f"unknown scorer {name!r} (registered: {known})")
        try:
            return _REGISTRY.factories[name](**config)
        except TypeError as exc:
            raise ConfigError(f"scorer {name}: bad configuration {config}: {exc}") from exc
    return spec


def build_scorers(specs: Sequence[str | Mapping[str, Any] | Scorer] | None = None) -> list[Scorer]:
    """Scorers from specs (every registered scorer, default configuration, when None)."""
    scorers = [build_scorer(spec) for spec in (specs if specs is not None else scorer_names())]
    metrics = [scorer.metric for scorer in scorers]
    duplicates = sorted({m for m in metrics if metrics.count(m) > 1})
    if duplicates:
        raise ConfigError(f"two scorers write the same metric column: {duplicates}")
    return scorers
