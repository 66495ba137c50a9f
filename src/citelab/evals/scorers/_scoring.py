"""The scorer protocol, scores, and the registry that rebuilds scorers from configuration.

A scorer is a small object: ``scorer(record, gold) -> Score`` for one answered turn. Scorers
are built by factories whose keyword arguments are their whole configuration, registered by
name (:data:`SCORERS`), so ``{"name": "citation_recall", "alce_compat": true}`` in a suite
(or in a run's log) rebuilds the very same scorer. The built-in scorers are registered by their
own modules, which ``citelab.evals.scorers`` imports after this one.

A scorer says what it measures: its ``description`` (one plain paragraph; a property when its
configuration changes the meaning) and its ``unit`` (what one detail row is). Both are
optional; the report's glossary reads them, else the class docstring and the detail level.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, overload, runtime_checkable

from citelab._errors import ConfigError
from citelab._registry import Registry
from citelab.evals.dataset import GoldTurn
from citelab.evals.records import TurnRecord

__all__ = [
    "SCORERS",
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
    """Scores one answered turn against its gold turn.

    Optional, read by the report's glossary: ``description`` (what the metric measures, one
    plain paragraph) and ``unit`` (what one detail row is: "statement of the answer").
    """

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


ScorerFactory = Callable[..., Scorer]

SCORERS: Registry[ScorerFactory] = Registry("scorer")
"""Every scorer factory by name (:class:`~citelab.Registry`): ``SCORERS.build("no_answer")``."""


@overload
def register_scorer(
    name: str, factory: None = None, *, replace: bool = False, description: str | None = None
) -> Callable[[ScorerFactory], ScorerFactory]: ...


@overload
def register_scorer(
    name: str,
    factory: ScorerFactory | str,
    *,
    replace: bool = False,
    description: str | None = None,
) -> None: ...


def register_scorer(
    name: str,
    factory: ScorerFactory | str | None = None,
    *,
    replace: bool = False,
    description: str | None = None,
) -> Callable[[ScorerFactory], ScorerFactory] | None:
    """Register a scorer factory under ``name`` (``SCORERS.register``); without ``factory``,
    a decorator that registers the function it decorates."""
    if factory is not None:
        SCORERS.register(name, factory, replace=replace, description=description)
        return None

    def decorate(function: ScorerFactory) -> ScorerFactory:
        SCORERS.register(name, function, replace=replace, description=description)
        return function

    return decorate


def accepts_argument(name: str, argument: str) -> bool:
    """True when the scorer registered as ``name`` takes ``argument`` (e.g. ``judge``)."""
    try:
        factory = SCORERS.get(name)
    except ConfigError:
        return False  # building it says why
    return argument in inspect.signature(factory).parameters


def scorer_names() -> list[str]:
    """The registered names, sorted: ``SCORERS.names()``."""
    return SCORERS.names()


def build_scorer(spec: str | Mapping[str, Any] | Scorer) -> Scorer:
    """A scorer from its name, its configuration mapping, or an instance (returned as is)."""
    if isinstance(spec, str | Mapping):
        config = {"name": spec} if isinstance(spec, str) else dict(spec)
        name = config.pop("name", None)
        if not isinstance(name, str):
            raise SCORERS.unknown(name)
        return SCORERS.build(name, **config)
    return spec


def build_scorers(specs: Sequence[str | Mapping[str, Any] | Scorer] | None = None) -> list[Scorer]:
    """Scorers from specs (every registered scorer, default configuration, when None)."""
    scorers = [build_scorer(spec) for spec in (specs if specs is not None else scorer_names())]
    metrics = [scorer.metric for scorer in scorers]
    duplicates = sorted({m for m in metrics if metrics.count(m) > 1})
    if duplicates:
        raise ConfigError(f"two scorers write the same metric column: {duplicates}")
    return scorers
