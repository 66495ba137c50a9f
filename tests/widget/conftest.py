"""Shared fixtures for the widget tests: a recording comm (no kernel), services, a corpus."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import comm
import pytest
from comm.base_comm import BaseComm

from citelab.agent import AgentConfig, default_agents
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.models import Model, ScriptedModel
from citelab.sources import RetrievalSettings

HOSTILE_TITLE = '<img src=x onerror="alert(1)">Fees & <script>alert(2)</script>'
HOSTILE_URL = "javascript:alert(3)"


class RecordingComm(BaseComm):
    """A comm that keeps every message the widget publishes, instead of sending it."""

    def __init__(self, **kwargs: Any) -> None:
        self.published: list[tuple[str, dict[str, Any]]] = []
        super().__init__(**kwargs)

    def publish_msg(
        self,
        msg_type: str,
        data: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        buffers: list[bytes] | None = None,
        **keys: Any,
    ) -> None:
        # Through JSON, as the wire would: what cannot cross the comm fails here.
        self.published.append((msg_type, json.loads(json.dumps(data or {}))))

    @property
    def custom(self) -> list[dict[str, Any]]:
        """The custom messages sent to the front end, in order."""
        return [
            data["content"]
            for kind, data in self.published
            if kind == "comm_msg" and data.get("method") == "custom"
        ]

    def states(self, name: str) -> list[Any]:
        """Every value of trait ``name`` sent to the front end, in order."""
        return [
            data["state"][name]
            for kind, data in self.published
            if kind == "comm_msg" and data.get("method") == "update" and name in data["state"]
        ]

    def from_front_end(self, content: dict[str, Any]) -> None:
        """Deliver a custom message as the front end would send it."""
        self.handle_msg(
            {"content": {"data": {"method": "custom", "content": content}}, "buffers": []}
        )


@pytest.fixture
def comms(monkeypatch: pytest.MonkeyPatch) -> list[RecordingComm]:
    """Every comm widgets open during the test, recording what they send."""
    opened: list[RecordingComm] = []

    def create(*args: Any, **kwargs: Any) -> RecordingComm:
        made = RecordingComm(**kwargs)
        opened.append(made)
        return made

    monkeypatch.setattr(comm, "create_comm", create)
    return opened


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def comm_of(widget: Any) -> RecordingComm:
    assert isinstance(widget.comm, RecordingComm)
    return widget.comm


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("indexes")


def scripted_agent(name: str, **changes: Any) -> AgentConfig:
    """An agent over the university corpus answered by the model registered as ``name``."""
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
def make_service(index_dir: Path) -> ServiceFactory:
    """A service with in-memory stores: the bundled agents plus ``extra`` ones."""

    def make(*extra: AgentConfig, models: Mapping[str, Model] | None = None) -> AnswerService:
        agents = {**default_agents(), **{agent.name: agent for agent in extra}}
        return AnswerService(
            agents,
            store=MemoryConversationStore(),
            logs=MemoryLogStore(),
            models=models,
            index_dir=index_dir,
        )

    return make


def scripted(*rounds: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel(list(rounds), name="scripted")


@pytest.fixture(scope="session")
def hostile_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-document corpus whose title and URL try to run script."""
    document = {
        "entity_type": "node",
        "entity_id": "fees",
        "translations": {
            "en": {
                "title": HOSTILE_TITLE,
                "content": "The semester fee of the Quillon Academy is due every March.",
                "url": HOSTILE_URL,
            }
        },
    }
    path = tmp_path_factory.mktemp("hostile") / "hostile.jsonl"
    path.write_text(json.dumps(document) + "\n", encoding="utf-8")
    return path


# What JupyterLab's math typesetter reads in an HTML output: MathJax 3 with its defaults
# (JupyterLab 4 passes only the delimiters `$…$`, `\(…\)`, `$$…$$`, `\[…\]`): it skips these
# tags and every element under one with the class `mathjax_ignore`.
MATHJAX_SKIPPED_TAGS = {"script", "noscript", "style", "textarea", "pre", "code"}
MATHJAX_IGNORE_CLASS = "mathjax_ignore"


def typeset_text(markup: str) -> list[str]:
    """The text runs of ``markup`` that MathJax would search for ``$…$`` math."""
    from html.parser import HTMLParser

    class Finder(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.stack: list[bool] = []  # per open element: is its content skipped?
            self.found: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            classes = (dict(attrs).get("class") or "").split()
            skipped = (self.stack[-1] if self.stack else False) or (
                tag in MATHJAX_SKIPPED_TAGS or MATHJAX_IGNORE_CLASS in classes
            )
            if tag not in {"br", "img", "hr", "input", "meta", "link", "wbr"}:
                self.stack.append(skipped)

        def handle_endtag(self, tag: str) -> None:
            if self.stack:
                self.stack.pop()

        def handle_data(self, data: str) -> None:
            if not (self.stack and self.stack[-1]):
                self.found.append(data)

    finder = Finder()
    finder.feed(markup)
    return finder.found
