"""Models by name, so configuration files can say which model to use.

A spec is a registered name, or ``prefix:rest`` for a prefix factory (``openai:gpt-4o-mini``
builds ``OpenAIModel("gpt-4o-mini")``). Options are the factory's keyword arguments::

    get_model("extractive", max_searches=2)
    get_model("scripted", rounds=[{"text": "Hello."}])
    get_model("perturbed", inner="extractive", rates={"wrong": 0.2}, seed=7)
    get_model("openai:llama-3.1-8b", base_url="http://127.0.0.1:8000/v1")
    get_model("anthropic:claude-sonnet-4-5", max_tokens=2048)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from citelab._errors import ConfigError, InvalidInput
from citelab.models._anthropic import AnthropicModel
from citelab.models._extractive import ExtractiveModel
from citelab.models._openai import OpenAIModel
from citelab.models._perturbed import FaultRates, PerturbedModel
from citelab.models._scripted import ScriptedModel
from citelab.models._types import Model

__all__ = ["ModelFactory", "available_models", "check_model_name", "get_model", "register_model"]

ModelFactory = Callable[..., Model]
"""Builds a model from keyword options (a prefix factory gets the rest of the spec first)."""

_FACTORIES: dict[str, ModelFactory | str] = {}
_PREFIX_FACTORIES: dict[str, ModelFactory | str] = {}


def register_model(
    name: str, factory: ModelFactory | str, *, prefix: bool = False, replace: bool = False
) -> None:
    """Make ``factory`` available as ``name`` (or as ``name:<anything>`` when ``prefix``).

    ``factory`` may be given as ``"module:attr"``: it is imported when the model is first
    built (so a model that lives in a package above this one costs nothing until used).
    """
    table = _PREFIX_FACTORIES if prefix else _FACTORIES
    if not name or ":" in name:
        raise InvalidInput(f"model name {name!r}: must be non-empty and contain no ':'")
    if name in table and not replace:
        raise InvalidInput(f"model name {name!r} is already registered (pass replace=True)")
    if isinstance(factory, str) and factory.count(":") != 1:
        raise InvalidInput(f"model {name!r}: write its factory as module:attr, not {factory!r}")
    table[name] = factory


def available_models() -> list[str]:
    """Registered names, prefixes written as ``name:<model>``."""
    return sorted([*_FACTORIES, *(f"{p}:<model>" for p in _PREFIX_FACTORIES)])


def check_model_name(spec: str) -> None:
    """Refuse a spec no factory answers to (a :class:`ConfigError` listing the known ones),
    without building the model (which may need a key or a server)."""
    prefix, _, rest = spec.partition(":")
    if (rest and prefix in _PREFIX_FACTORIES) or (not rest and spec in _FACTORIES):
        return
    known = ", ".join(available_models())
    raise ConfigError(f"unknown model {spec!r}; known models: {known}")


def get_model(spec: str, **options: Any) -> Model:
    """Build the model ``spec`` names with ``options``; unknown names and bad options are
    ``ConfigError``s that say what is known or expected."""
    prefix, _, rest = spec.partition(":")
    try:
        if rest and prefix in _PREFIX_FACTORIES:
            return _factory(_PREFIX_FACTORIES, prefix)(rest, **options)
        if not rest and spec in _FACTORIES:
            return _factory(_FACTORIES, spec)(**options)
    except TypeError as exc:
        raise ConfigError(f"model {spec!r}: bad options {sorted(options)}: {exc}") from exc
    except InvalidInput as exc:
        raise ConfigError(f"model {spec!r}: {exc}") from exc
    known = ", ".join(available_models())
    raise ConfigError(f"unknown model {spec!r}; known models: {known}")


def _factory(table: dict[str, ModelFactory | str], name: str) -> ModelFactory:
    """The factory registered as ``name``, imported (once) when it was given as module:attr."""
    factory = table[name]
    if isinstance(factory, str):
        module, _, attr = factory.partition(":")
        factory = table[name] = getattr(importlib.import_module(module), attr)
    return factory


def _scripted(**options: Any) -> Model:
    if "rounds" not in options:
        raise ConfigError("model 'scripted' needs rounds=[...] (one entry per model call)")
    return ScriptedModel(**options)


def _perturbed(
    *,
    inner: str | Model = "extractive",
    inner_options: Mapping[str, Any] | None = None,
    rates: FaultRates | Mapping[str, float] | None = None,
    seed: int = 0,
    **options: Any,
) -> Model:
    base = get_model(inner, **dict(inner_options or {})) if isinstance(inner, str) else inner
    try:
        return PerturbedModel(base, rates or FaultRates(), seed, **options)
    except ValueError as exc:  # pydantic's ValidationError: rates out of range
        raise ConfigError(f"model 'perturbed': bad rates: {exc}") from exc


register_model("extractive", ExtractiveModel)
# Lives with the judges it wraps (evals imports models, never the reverse): named, not imported.
register_model("judge", "citelab.evals.judges:JudgeModel")
register_model("scripted", _scripted)
register_model("perturbed", _perturbed)
register_model("openai", OpenAIModel, prefix=True)
register_model("anthropic", AnthropicModel, prefix=True)
