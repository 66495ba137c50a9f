"""A real kernel runs a notebook headless (nbclient): the widget state saved in the notebook
holds the finished turns, and the static copy output was updated to the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from citelab._paths import CACHE_ENV

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
QUESTION = "When are tuition fees due?"

CELLS = [
    "from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore\n"
    "from citelab.widget import Chat, SourcesPanel\n"
    "service = AnswerService(store=MemoryConversationStore(), logs=MemoryLogStore(),\n"
    "                        index_dir='indexes')\n"
    "chat = Chat(service)\n"
    "chat",
    "SourcesPanel(chat, heading='Fee sources')",
    f"first = await chat.ask({QUESTION!r})\n"
    "reply = first.suggested_replies[0]\n"
    "second = await chat.ask(reply.message or reply.label, followup=True)\n"
    "print(first.conversation_id == second.conversation_id, second.turn)",
]


def models_of(notebook: Any, widget_id: str) -> list[dict[str, Any]]:
    state = notebook.metadata["widgets"][WIDGET_STATE]["state"]
    return [
        model["state"]
        for model in state.values()
        if model["state"].get("_anywidget_id") == widget_id
    ]


def test_a_notebook_keeps_the_finished_turns_in_its_widget_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    client = nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=120,
        store_widget_state=True,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()

    assert notebook.cells[2].outputs[0]["text"] == "True 2\n"
    [chat] = models_of(notebook, "citelab.widget._chat.Chat")
    turns = chat["turns"]
    assert [turn["status"] for turn in turns] == ["done", "done"]
    assert turns[0]["question"] == QUESTION
    assert turns[1]["followup"] is True
    assert turns[0]["references"], "the first answer cites the fixture corpus"
    assert "[1]" in turns[0]["text"]
    assert chat["conversation_id"] == turns[0]["conversation_id"] == turns[1]["conversation_id"]
    [panel] = models_of(notebook, "citelab.widget._panel.SourcesPanel")
    assert panel["turns"] == turns
    assert panel["heading"] == "Fee sources"

    # Each widget is two outputs: the live view, then its static copy. The copies were
    # rewritten when the turns ended (an export shows the conversation); the views were not.
    view, copy = (output["data"] for output in notebook.cells[0].outputs)
    assert "application/vnd.jupyter.widget-view+json" in view
    assert view["text/html"] == ""
    assert set(copy) == {"text/html"}
    assert QUESTION in copy["text/html"]
    assert turns[0]["references"][0]["title"] in copy["text/html"]
    assert f"citelab-static-{chat['_model_key']}" in copy["text/html"]
    panel_view, panel_copy = (output["data"] for output in notebook.cells[1].outputs)
    assert "application/vnd.jupyter.widget-view+json" in panel_view
    assert "Fee sources" in panel_copy["text/html"]
