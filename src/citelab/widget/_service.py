"""What a chat answers with, and who asks: the arguments of ``Chat(...)`` made concrete."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from citelab._errors import ConfigError, InvalidInput, NotFound
from citelab.agent import (
    AgentConfig,
    corpus_agent,
    default_agents,
    load_agent_corpus,
    load_agents,
    override_agents,
)
from citelab.answers import AnswerService
from citelab.corpus import Corpus, Reader
from citelab.models import Model

__all__ = [
    "ResolvedAgents",
    "ServiceSource",
    "check_agent",
    "reader_of",
    "resolve_agents",
    "resolve_service",
]

ServiceSource = AnswerService | AgentConfig | Mapping[str, AgentConfig] | str | PathLike[str] | None
"""What a chat answers with: a service, one agent, agents by name, or an agents file."""


def resolve_service(
    source: ServiceSource,
    agent: str,
    *,
    model: str | Model | None = None,
    corpus: str | PathLike[str] | None = None,
) -> tuple[AnswerService, str]:
    """The service for ``source``, and the agent that answers new questions; ``model`` (a
    name such as ``openai:<model>``, or a :class:`~citelab.models.Model`) and ``corpus`` (a
    JSONL file or a folder of documents) replace every agent's, as ``--model``/``--corpus``
    do on the command line."""
    if isinstance(source, AnswerService):
        if model is not None or corpus is not None:
            raise ConfigError(
                "model= and corpus= apply to agents, not to a ready AnswerService: pass the "
                "agents (or an agents file) instead, or build the service with them"
            )
        return source, agent
    resolved = resolve_agents(source, agent, model=model, corpus=corpus)
    service = AnswerService(
        resolved.agents, models=resolved.models or None, corpora=resolved.corpora or None
    )
    return service, resolved.agent


@dataclass(frozen=True)
class ResolvedAgents:
    """What a chat's arguments come to: its agents, the one that answers new questions, the
    model objects to give the service (by name) and the corpora already loaded (by the path
    the agents name)."""

    agents: dict[str, AgentConfig]
    agent: str
    models: dict[str, Model] = field(default_factory=dict)
    corpora: dict[str, Corpus] = field(default_factory=dict)


def resolve_agents(
    source: ServiceSource,
    agent: str,
    *,
    model: str | Model | None = None,
    corpus: str | PathLike[str] | None = None,
) -> ResolvedAgents:
    """The agents ``source`` describes, with ``model``/``corpus`` applied as the command line
    applies ``--model``/``--corpus``: a ``corpus`` without agents (``source`` ``None``) gets
    one agent of its own, named after it, with starter questions drawn from it (not the demo
    agents, whose prompts and starters are about the demo corpora); with agents given, it
    replaces their corpus."""
    if isinstance(source, AnswerService):
        if model is not None or corpus is not None:
            raise ConfigError("model= and corpus= apply to agents, not to a ready AnswerService")
        return ResolvedAgents(dict(source.agents), agent)
    if source is None and corpus is not None:
        resolved = _corpus_agent(corpus, agent, model if isinstance(model, str) else None)
    else:
        agents, agent = _agents(source, agent)
        if isinstance(model, str) or corpus is not None:
            agents = override_agents(
                agents, model=model if isinstance(model, str) else None, corpus=corpus
            )
        resolved = ResolvedAgents(agents, agent)
    if model is None or isinstance(model, str):
        return resolved
    update = {"model": model.name, "model_options": {}}
    agents = {name: config.model_copy(update=update) for name, config in resolved.agents.items()}
    return ResolvedAgents(agents, resolved.agent, {model.name: model}, resolved.corpora)


def _corpus_agent(corpus: str | PathLike[str], agent: str, model: str | None) -> ResolvedAgents:
    """The one agent of a corpus given alone (``agent`` must be ``"default"`` or its name)."""
    loaded = load_agent_corpus(corpus)
    config = corpus_agent(corpus, loaded=loaded, model=model)
    if agent not in ("default", config.name):
        raise ConfigError(
            f"agent {agent!r}: with corpus= and no agents given, the chat has one agent, "
            f"{config.name!r}, named after the corpus; to answer from {corpus} with other "
            "agents, give them too (an agents file, an AgentConfig or a mapping of them)"
        )
    return ResolvedAgents({config.name: config}, config.name, corpora={config.corpus: loaded})


def _agents(source: ServiceSource, agent: str) -> tuple[dict[str, AgentConfig], str]:
    if source is None:
        return default_agents(), agent
    if isinstance(source, AgentConfig):
        if agent not in ("default", source.name):
            raise ConfigError(
                f"agent {agent!r} was asked for, but the config given is {source.name!r}"
            )
        return {source.name: source}, source.name
    if isinstance(source, str | PathLike):
        return load_agents(Path(source)), agent
    if isinstance(source, Mapping):
        return _agent_mapping(source), agent
    raise InvalidInput(
        "service_or_agent_config: expected an AnswerService, an AgentConfig, a mapping of "
        f"AgentConfigs or a path to an agents file, not {type(source).__name__}"
    )


def _agent_mapping(source: Mapping[Any, Any]) -> dict[str, AgentConfig]:
    agents = {}
    for name, config in source.items():
        if not isinstance(config, AgentConfig):
            raise InvalidInput(
                f"service_or_agent_config[{name!r}]: expected an AgentConfig, "
                f"not {type(config).__name__}"
            )
        agents[str(name)] = config
    return agents


def check_agent(service: AnswerService, agent: str) -> None:
    """Refuse an agent the service does not have, naming the ones it has."""
    if agent not in service.agents:
        known = ", ".join(sorted(service.agents)) or "none"
        raise NotFound(f"agent {agent!r} not found; this chat's service has: {known}")


def reader_of(user: Reader | str | None) -> Reader:
    """Who asks: a reader, a user id, or anonymous."""
    if user is None:
        return Reader.anonymous()
    if isinstance(user, Reader):
        return user
    if isinstance(user, str) and user.strip():
        return Reader(user_id=user)
    raise InvalidInput(f"user: expected a Reader or a non-empty user id, not {user!r}")
