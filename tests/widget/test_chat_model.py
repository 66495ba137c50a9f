"""``Chat(model=..., corpus=...)``: the model and corpus every agent of the chat uses."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from citelab import ConfigError
from citelab._paths import CACHE_ENV
from citelab.answers import AnswerService
from citelab.models import ExtractiveModel, ScriptedModel
from citelab.widget import Chat, TemplateLab

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


# --- a corpus of one's own gets an agent of its own (#24) -----------------------------------


def test_a_corpus_alone_gets_its_own_agent_with_starters_drawn_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As ``citelab serve --corpus``: not the demo agents (university, helpcentre, intranet)
    with the user's notes, but one agent named after the corpus, whose starter questions
    come from it."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    chat = Chat(corpus=_notes(tmp_path), update_outputs=False)
    assert chat.agent == "notes"
    assert list(chat.service.agents) == ["notes"]
    notes = chat.service.agents["notes"]
    assert notes.corpus == str((tmp_path / "notes").resolve())
    assert notes.starter_questions == ["Tell me about Bike"]
    assert chat.starter_questions == ["Tell me about Bike"]  # offered as chips
    assert "university" not in notes.prompt.casefold()
    answer = chat.ask_sync("Where is the bike lock code kept?")
    assert answer.agent == "notes"
    assert [r.url for r in answer.references] == ["bike.md"]
    asyncio.run(chat.service.aclose())


def test_a_corpus_with_agents_given_replaces_their_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With agents given (here an agents file), ``corpus=`` replaces their corpus, as
    ``--corpus`` does with ``--agents``: they keep their names."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    agents = tmp_path / "agents.toml"
    agents.write_text('[agents.desk]\ncorpus = "university"\n', encoding="utf-8")
    chat = Chat(agents, agent="desk", corpus=_notes(tmp_path), update_outputs=False)
    assert list(chat.service.agents) == ["desk"]
    assert chat.service.agents["desk"].corpus == str((tmp_path / "notes").resolve())


def test_a_demo_agent_named_with_a_corpus_alone_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(ConfigError, match=r"agent 'university'.*one agent, 'notes'"):
        Chat(agent="university", corpus=_notes(tmp_path))
    chat = Chat(agent="notes", corpus=tmp_path / "notes", update_outputs=False)
    assert chat.agent == "notes"


def test_a_model_object_with_a_corpus_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    chat = Chat(corpus=_notes(tmp_path), model=ExtractiveModel(name="mine"), update_outputs=False)
    assert {name: a.model for name, a in chat.service.agents.items()} == {"notes": "mine"}
    named = Chat(corpus=tmp_path / "notes", model="openai:some-model", update_outputs=False)
    assert named.service.agents["notes"].model == "openai:some-model"


def test_a_malformed_corpus_is_refused_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"entity_type": "note"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.jsonl:1: invalid JSON"):
        Chat(corpus=broken)


def test_template_lab_answers_with_the_corpus_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    lab = TemplateLab(
        ["default", "terse"], "Where is the bike lock code kept?", corpus=_notes(tmp_path)
    )
    assert lab.agent == "notes"
    frame = asyncio.run(lab.run())
    assert all("red drawer" in text for text in frame["answer"])
    with pytest.raises(ConfigError, match=r"agent 'intranet'.*one agent, 'notes'"):
        TemplateLab(["default"], "Q?", agent="intranet", corpus=tmp_path / "notes")


def test_the_chat_offers_its_agents_starter_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the page does: the agent's starters are chips before the first question; another
    agent brings its own; they can be set (or emptied) like any trait."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    chat = Chat(agent="helpcentre", update_outputs=False)
    helpcentre = chat.service.agents["helpcentre"].starter_questions
    assert helpcentre
    assert chat.starter_questions == helpcentre
    assert "starter_questions" in chat.get_state()
    chat.agent = "intranet"
    assert chat.starter_questions == chat.service.agents["intranet"].starter_questions
    chat.starter_questions = []
    assert chat.get_state()["starter_questions"] == []
