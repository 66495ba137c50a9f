"""The static fallback: sanitized HTML of the widget in an output of its own, kept current."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from citelab.agent import AgentConfig
from citelab.contract import ALLOWLISTS
from citelab.sources import RetrievalSettings
from citelab.widget import Chat, MessageView, SourcesPanel

from .conftest import HOSTILE_TITLE, ServiceFactory, scripted

pytestmark = pytest.mark.usefixtures("comms")

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
HOSTILE_TEXT = (
    "<script>alert(4)</script> The fee is due in March [1]. "
    "[Pay here](javascript:alert(5)) <img src=x onerror=alert(6)>"
)


class Elements(HTMLParser):
    """Every start tag and its attributes."""

    def __init__(self, fragment: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(fragment)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


def assert_inert(fragment: str) -> None:
    """Only allowlisted tags, no event handlers, no link outside the allowed schemes."""
    for tag, attrs in Elements(fragment).found:
        assert tag in ALLOWLISTS["tags"], tag
        assert not any(name.startswith("on") for name in attrs), attrs
        href = attrs.get("href") or ""
        assert href.startswith(("#", "http://", "https://", "mailto:")) or not href, href


def hostile_chat(make_service: ServiceFactory, corpus: Path, model_text: str) -> Chat:
    agent = AgentConfig(
        name="hostile",
        corpus=str(corpus),
        model="scripted",
        retrieval=RetrievalSettings(max_results=3),
    )
    service = make_service(agent, models={"scripted": scripted({"text": model_text})})
    return Chat(service, agent="hostile")


@pytest.mark.anyio
async def test_the_bundle_keeps_the_widget_view_and_adds_inert_html(
    make_service: ServiceFactory, hostile_corpus: Path
) -> None:
    chat = hostile_chat(make_service, hostile_corpus, HOSTILE_TEXT)
    empty = chat._repr_mimebundle_()
    assert empty is not None
    assert "No question asked yet" in empty[0]["text/html"]

    answer = await chat.ask("When is the semester fee due?")
    assert answer.sources[0].title == HOSTILE_TITLE
    bundle = chat._repr_mimebundle_()
    assert bundle is not None
    data, _ = bundle
    assert data[WIDGET_MIME]["model_id"] == chat.model_id
    assert "text/plain" in data
    page = data["text/html"]
    assert_inert(page)
    assert "The fee is due in March" in page
    assert "&lt;img src=x" in page  # the hostile title, shown as text
    assert "<script" not in page
    assert "javascript:" not in page.replace("(javascript:alert(5))", "")
    assert "When is the semester fee due?" in page


@pytest.mark.anyio
async def test_panels_and_message_views_have_inert_html_too(
    make_service: ServiceFactory, hostile_corpus: Path
) -> None:
    chat = hostile_chat(make_service, hostile_corpus, HOSTILE_TEXT)
    panel = SourcesPanel(chat, heading="<b>Sources</b>")
    answer = await chat.ask("When is the semester fee due?")
    for widget in (panel, MessageView(answer.message)):
        bundle = widget._repr_mimebundle_()
        assert bundle is not None
        page = bundle[0]["text/html"]
        assert_inert(page)
        assert "&lt;img src=x" in page
        assert bundle[0][WIDGET_MIME]["model_id"] == widget.model_id
    assert "&lt;b&gt;Sources&lt;/b&gt;" in panel.static_html()


@pytest.mark.anyio
async def test_displayed_outputs_are_updated_when_a_turn_ends(
    make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    published: list[dict[str, Any]] = []

    def publish(
        data: dict[str, Any],
        metadata: dict[str, Any],
        display_id: str | None = None,
        *,
        update: bool = False,
    ) -> None:
        published.append({"data": data, "id": display_id, "update": update})

    monkeypatch.setattr("citelab.widget._display._publish", publish)
    service = make_service(
        AgentConfig(name="scripted", model="scripted", retrieval=RetrievalSettings()),
        models={"scripted": scripted(*[{"text": "Every student pays a semester fee [1]."}] * 2)},
    )
    chat = Chat(service, agent="scripted")
    panel = SourcesPanel(chat)
    chat._ipython_display_()
    chat._ipython_display_()
    panel._ipython_display_()
    # Each display is two outputs: the live view, then the static copy (its own display id).
    assert [p["update"] for p in published] == [False] * 6
    views, copies = published[0::2], published[1::2]
    for view, widget in zip(views, (chat, chat, panel), strict=True):
        assert view["data"][WIDGET_MIME]["model_id"] == widget.model_id
        assert view["data"]["text/html"] == ""
        assert view["id"] is None
    for copy, widget in zip(copies, (chat, chat, panel), strict=True):
        assert set(copy["data"]) == {"text/html"}
        assert (
            f'class="citelab-static citelab-static-{widget._model_key} mathjax_ignore"'
            in copy["data"]["text/html"]
        )
    shown = [copy["id"] for copy in copies]
    assert len(set(shown)) == 3

    await chat.ask("What does a semester cost?")
    updates = [p for p in published if p["update"]]
    # Only the static copies are rewritten: JupyterLab would render a rewritten live view
    # output again, with a new view.
    assert sorted(p["id"] for p in updates) == sorted(shown)
    for update in updates:
        assert set(update["data"]) == {"text/html"}
        assert "What does a semester cost?" in update["data"]["text/html"]

    assert "Every student pays a semester fee" in updates[0]["data"]["text/html"]
    before = len(published)
    chat.new_conversation()
    after = [p["data"]["text/html"] for p in published[before:]]
    assert len(after) == 3
    assert sum("No question asked yet" in page for page in after) == 2

    count = len(published)
    chat.update_outputs = False
    await chat.ask("What does a semester cost?")
    assert len(published) == count


def test_the_static_copy_wraps_the_static_html_and_names_its_widget(
    make_service: ServiceFactory,
) -> None:
    service = make_service(
        AgentConfig(name="scripted", model="scripted", retrieval=RetrievalSettings()),
        models={"scripted": scripted({"text": "x"})},
    )
    chat = Chat(service, agent="scripted")
    copy = chat.static_copy_html()
    classes = f"citelab-static citelab-static-{chat._model_key} mathjax_ignore"
    assert copy == f'<div class="{classes}">{chat.static_html()}</div>'
    assert len(chat._model_key) == 32
    assert int(chat._model_key, 16) >= 0  # hex: the front end refuses any other key
