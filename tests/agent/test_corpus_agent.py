"""The agent for a user's own corpus: named after it, starter questions drawn from it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from citelab import ConfigError
from citelab.agent import corpus_agent, corpus_agent_name, load_agent_corpus, starter_questions
from citelab.corpus import Corpus, Document

NOTES = Path(__file__).parents[1] / "user_notes"


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CITELAB_CACHE_DIR", str(tmp_path / "cache"))


def _document(entity_id: str, title: str, content: str, *, public: bool = True) -> Document:
    return Document.model_validate(
        {
            "entity_type": "note",
            "entity_id": entity_id,
            "translations": {"en": {"title": title, "content": content}},
            "access": {"public": public, "roles": [] if public else ["staff"]},
        }
    )


def test_a_folder_gives_one_agent_named_after_it(tmp_path: Path) -> None:
    notes = shutil.copytree(NOTES, tmp_path / "my notes")
    agent = corpus_agent(notes, model="extractive")
    assert agent.name == "my-notes"
    assert agent.corpus == str(notes.resolve())
    assert agent.model == "extractive"
    assert agent.starter_questions == [
        "Tell me about allotment",
        "Tell me about Parking at the harbour",
    ]


@pytest.mark.parametrize(
    ("path", "name"),
    [("notes.jsonl", "notes"), ("Meine Notizen!.jsonl", "Meine-Notizen"), ("...jsonl", "corpus")],
)
def test_agent_names_are_valid_agent_names(path: str, name: str) -> None:
    assert corpus_agent_name(path) == name


def test_starters_ask_about_public_documents_whose_text_speaks_of_their_title() -> None:
    corpus = Corpus(
        [
            _document("heading", "Bread oven", "Bread oven"),  # only a heading
            _document("secret", "Board minutes", "The board minutes are kept.", public=False),
            _document("oven", "Bread oven", "The bread oven is lit on Saturdays."),
            _document("kiln", "Kiln", "The kiln reaches 1200 degrees."),
            _document("vague", "Garden shed", "It has a green door."),
            _document("bees", "Beehives", "Two beehives stand behind the orchard."),
        ]
    )
    assert starter_questions(corpus) == [
        "Tell me about Bread oven",
        "Tell me about Kiln",
        "Tell me about Beehives",
    ]
    assert starter_questions(corpus, limit=1) == ["Tell me about Bread oven"]
    assert starter_questions(Corpus([_document("vague", "Garden shed", "A door.")])) == []


def test_a_missing_corpus_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file or folder"):
        corpus_agent(tmp_path / "nowhere")


def test_a_malformed_corpus_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    good = {"entity_type": "note", "entity_id": "a", "translations": {"en": {"title": "A"}}}
    path.write_text(json.dumps(good) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"notes\.jsonl:2: invalid JSON"):
        load_agent_corpus(path)
