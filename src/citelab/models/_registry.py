"""Models by name, so configuration files can say which model to use.

A spec is a registered name, or ``prefix:rest`` for a prefix factory (``openai:gpt-4o-mini``
builds ``OpenAIModel("gpt-4o-mini")``). Options are the factory's keyword arguments::

    get_model("extractive", max_searches=2)
    get_model("scripted", rounds=[{"text": "Hello."}])
    get_model("perturbed", inner="extractive", rates={"wrong": 0.2}, seed=7)
    get_model("openai:llama-3.1-8b", base_url="http://127.0.0.1:8000/v1")
    get_model("openai-completions:llama-3.1-8b", base_url="http://127.0.0.1:8000/v1")
    get_model("anthropic:claude-sonnet-4-5", max_tokens=2048)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from citelab._errors import ConfigError
from citelab._registry import Registry
from citelab.models._types import Model
from citelab.models.adapters import AnthropicModel, OpenAICompletionsModel, OpenAIModel
from citelab.models.offline import ExtractiveModel, FaultRates, PerturbedModel, ScriptedModel

__all__ = [
    "MODELS",
    "ModelFactory",
    "available_models",
    "check_model_name",
    "get_model",
    "register_model",
]

ModelFactory = Callable[..., Model]
"""Builds a model from keyword options (a prefix factory gets the rest of the spec first)."""

MODELS: Registry[ModelFactory] = Registry("model")
"""Every model by name (:class:`~citelab.Registry`): ``MODELS.build("extractive")``."""


def register_model(
    name: str,
    factory: ModelFactory | str,
    *,
    prefix: bool = False,
    replace: bool = False,
    description: str | None = None,
) -> None:
    """Make ``factory`` available as ``name`` (or as ``name:<anything>`` when ``prefix``):
    ``MODELS.register``.

    ``factory`` may be given as ``"module:attr"``: it is imported when the model is first
    built (so a model that lives in a package above this one costs nothing until used).
    """
    MODELS.register(name, factory, prefix=prefix, replace=replace, description=description)


def available_models() -> list[str]:
    """Registered names, prefixes written as ``name:<model>``: ``MODELS.names()``."""
    return MODELS.names()


def check_model_name(spec: str) -> None:
    """Refuse a spec no factory answers to (a :class:`ConfigError` listing the known ones),
    without building the model (which may need a key or a server)."""
    MODELS.check(spec)


def get_model(spec: str, **options: Any) -> Model:
    """Build the model ``spec`` names with ``options``: ``MODELS.build(spec, **options)``;
    unknown names and bad options are ``ConfigError``s that say what is known or expected."""
    return MODELS.build(spec, **options)


def _scripted(**options: Any) -> Model:
    """Replays given rounds (``rounds=[{"text": ...}, ...]``), for tests and teaching."""
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
    """Another model (``inner``, by name) with citation faults injected at set ``rates``."""
    base = get_model(inner, **dict(inner_options or {})) if isinstance(inner, str) else inner
    try:
        return PerturbedModel(base, rates or FaultRates(), seed, **options)
    except ValueError as exc:  # pydantic's ValidationError: rates out of range
        raise ConfigError(f"model 'perturbed': bad rates: {exc}") from exc


register_model(
    "extractive",
    ExtractiveModel,
    description="The offline default: answers by quoting the numbered sources it was shown, "
    "and cites them.",
)
# Lives with the judges it wraps (evals imports models, never the reverse): named, not imported.
register_model(
    "judge",
    "citelab.evals.judges:JudgeModel",
    description="Answers judge prompts (does this evidence support this statement?) with an "
    "offline judge: citelab serve-model --model judge.",
)
register_model("scripted", _scripted)
register_model("perturbed", _perturbed)
register_model(
    "openai",
    OpenAIModel,
    prefix=True,
    description="A chat model behind any OpenAI-compatible endpoint (openai:<its model name>).",
)
register_model(
    "openai-completions",
    OpenAICompletionsModel,
    prefix=True,
    description="A completion (non-chat) model behind any OpenAI-compatible /v1/completions "
    "endpoint, sent the raw prompt (openai-completions:<its model name>).",
)
register_model(
    "anthropic",
    AnthropicModel,
    prefix=True,
    description="A Claude model, or any Messages-compatible endpoint (anthropic:<its model name>).",
)
