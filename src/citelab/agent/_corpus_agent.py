"""An agent for a user's own corpus: named after it, with starter questions drawn from it.

``citelab serve --corpus notes/`` (and ``ask``, ``mcp``) without an agents file answer with
this one agent instead of the bundled demo agents, whose prompts and starter questions are
about the demo corpora. Its starter questions ask about documents of the corpus that a
reader without roles may read and whose text speaks of their own title (some sentence other
than a heading repeating the title holds two of the title's content words, or the one word a
one-word title has), so that a question naming the title finds an answer; a corpus with none
gets no starter questions.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from citelab._errors import ConfigError, InvalidInput
from citelab._lexicon import content_terms, sentences, stems_of
from citelab.agent._config import AgentConfig, resolve_corpus_path
from citelab.corpus import Corpus, Document, Reader, load_corpus

__all__ = ["corpus_agent", "corpus_agent_name", "load_agent_corpus", "starter_questions"]

MAX_STARTERS = 3
"""Most starter questions drawn from a corpus."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_ENOUGH_TERMS = 2


def corpus_agent_name(corpus: str | os.PathLike[str]) -> str:
    """The agent name for a corpus path: its folder or file name (without ``.jsonl``),
    with characters an agent name cannot hold replaced by ``-``."""
    path = Path(corpus).expanduser()
    stem = path.name if path.is_dir() else path.stem
    return _UNSAFE.sub("-", stem).strip("-")[:64] or "corpus"


def load_agent_corpus(corpus: str | os.PathLike[str]) -> Corpus:
    """The corpus at ``corpus`` (a JSONL file, or a folder imported on first use), loaded; a
    missing or malformed one is a :class:`~citelab.ConfigError` naming the file, the line and
    what is wrong."""
    given = Path(corpus).expanduser()
    if not given.exists():
        raise ConfigError(f"corpus {given}: no such file or folder")
    path = resolve_corpus_path(str(given.resolve()))
    try:
        return load_corpus(path)
    except InvalidInput as exc:
        raise ConfigError(str(exc)) from exc


def corpus_agent(
    corpus: str | os.PathLike[str],
    *,
    loaded: Corpus | None = None,
    model: str | None = None,
    model_options: Mapping[str, Any] | None = None,
) -> AgentConfig:
    """The agent that answers from ``corpus`` (a JSONL file or a folder of documents), named
    after it (:func:`corpus_agent_name`), with :func:`starter_questions` drawn from it.
    ``loaded`` is the corpus already loaded (else it is loaded here, see
    :func:`load_agent_corpus`); ``model`` defaults to the offline extractive model."""
    path = Path(corpus).expanduser()
    if not path.exists():
        raise ConfigError(f"corpus {path}: no such file or folder")
    documents = loaded if loaded is not None else load_agent_corpus(path)
    name = corpus_agent_name(path)
    fields: dict[str, Any] = {
        "name": name,
        "prompt": (
            f"You answer questions from the documents of {name}. Answer only from those "
            "documents, and say so when they do not hold the answer."
        ),
        "corpus": str(path.resolve()),
        "starter_questions": starter_questions(documents),
    }
    if model is not None:
        from citelab.models import check_model_name

        check_model_name(model)
        fields["model"] = model
        fields["model_options"] = dict(model_options or {})
    return AgentConfig(**fields)


def starter_questions(corpus: Corpus, limit: int = MAX_STARTERS) -> list[str]:
    """Up to ``limit`` questions ("Tell me about <title>"), in corpus order, about public
    documents whose text speaks of their own title (see the module docs)."""
    questions: list[str] = []
    for document in corpus:
        question = _starter(document)
        if question is not None and question not in questions:
            questions.append(question)
        if len(questions) == limit:
            break
    return questions


def _starter(document: Document) -> str | None:
    if not document.readable_by(Reader.anonymous()):
        return None
    _, translation = document.translation(None)
    title = " ".join(translation.title.split())
    terms = {term.stem for term in content_terms(title)}
    question = f"Tell me about {title}"
    if not terms or len(question) > 200:  # AgentConfig's limit for a starter question
        return None
    enough = min(len(terms), _ENOUGH_TERMS)
    said = [s for s in sentences(translation.content) if _words(s) != _words(title)]
    speaks = any(len(stems_of(s) & terms) >= enough for s in said)  # a heading is not speech
    return question if speaks else None


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())
