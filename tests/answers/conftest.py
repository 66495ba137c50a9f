"""Shared fixtures for the answer-service tests: a fake clock, in-memory stores, one index dir."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from citelab.agent import AgentConfig, default_agents
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.models import Model, ScriptedModel
from citelab.sources import RetrievalSettings

START = 1_750_000_000.0


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("indexes")


@pytest.fixture
def clock() -> Clock:
    return Clock()


def scripted_agent(name: str = "scripted", **changes: Any) -> AgentConfig:
    """An agent over the university corpus whose model is the ScriptedModel named ``name``."""
    fields: dict[str, Any] = {
        "name": name,
        "prompt": f"You are the {name} test agent.",
        "corpus": "university",
        "model": name,
        "retrieval": RetrievalSettings(max_results=5),
        **changes,
    }
    return AgentConfig(**fields)


ServiceFactory = Callable[..., AnswerService]


@pytest.fixture
def make_service(index_dir: Path, clock: Clock) -> ServiceFactory:
    """Build a service with in-memory stores over the bundled agents plus ``extra`` agents."""

    def make(
        *extra: AgentConfig,
        models: Mapping[str, Model] | None = None,
        **options: Any,
    ) -> AnswerService:
        agents = {**default_agents(), **{agent.name: agent for agent in extra}}
        options.setdefault("store", MemoryConversationStore())
        options.setdefault("logs", MemoryLogStore())
        return AnswerService(agents, models=models, clock=clock, index_dir=index_dir, **options)

    return make


def scripted(*rounds: Any) -> ScriptedModel:
    return ScriptedModel(list(rounds), name="scripted")
