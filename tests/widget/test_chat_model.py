"""``Chat(model=..., corpus=...)``: the model and corpus every agent of the chat uses."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from citelab import ConfigError
from citelab._paths import CACHE_ENV
from citelab.answers import AnswerService
from citelab.models import ExtractiveModel, ScriptedModel
from citelab.widget import Chat

pytestmark = pytest.mark.usefixtures("comms")


def _notes(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "bike.md").write_text(
        "# Bike\n\nThe bike lock code is kept in the red drawer.\n", "utf-8"
    )
    return notes


@pytest.mark.anyio
async def test_a_folder_and_a_model_object_answer_with_citations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    model = ExtractiveModel(name="mine")
    chat = Chat(corpus=_notes(tmp_path), model=model, update_outputs=False)
    assert {agent.model for agent in chat._service.agents.values()} == {"mine"}
    answer = await chat.ask("Where is the bike lock code kept?")
    assert "kept in the red drawer [1]." in answer.text
    assert [r.url for r in answer.references] == ["bike.md"]
    await chat._service.aclose()


def test_a_model_name_replaces_every_agents_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    chat = Chat(model="openai:some-model", update_outputs=False)
    assert {agent.model for agent in chat._service.agents.values()} == {"openai:some-model"}


def test_unknown_names_and_a_ready_service_are_config_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(ConfigError, match="unknown model 'nope'; known models: anthropic"):
        Chat(model="nope")
    with pytest.raises(ConfigError, match="no such file or folder"):
        Chat(corpus=tmp_path / "missing")
    service = AnswerService(database=tmp_path / "db")
    with pytest.raises(ConfigError, match="not to a ready AnswerService"):
        Chat(service, model=ScriptedModel([{"text": "x"}]))
    asyncio.run(service.aclose())
