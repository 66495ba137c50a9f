"""Issue #13 in a real JupyterLab (Debian's chromium): over several turns the numbers in the
chat's Sources list equal the markers; the hover/focus card; Stop; New conversation; every
text/background pair at least 4.5:1 in the light and the dark theme (computed styles); after
a kernel restart the input is disabled with a plain message. Uses the private JupyterLab of
``tests/browser/_lab.py``."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser._lab import Lab, notebook_json
from browser._page import (
    NUMBERING_CELL,
    QUESTIONS,
    conversation_numbers_hold,
    hover_card_follows_pointer_and_focus,
    low_contrast,
    numbers_agree,
)

from .test_lab_chat import Notebook

ROOT = Path(__file__).resolve().parents[3]
SHOTS = os.environ.get("CITELAB_SCREENSHOTS")  # e.g. docs/images: the README's screenshot
SETUP = """\
from citelab.agent import default_agents
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.models import ExtractiveModel
from citelab.widget import Chat

service = AnswerService(
    default_agents(), store=MemoryConversationStore(), logs=MemoryLogStore(),
    models={"extractive": ExtractiveModel(piece_delay=0.1)}, index_dir="indexes",
)
chat = Chat(service, agent="university")
chat"""


@pytest.fixture
def notebook(browser: Any, lab: Lab) -> Iterator[Notebook]:
    cells = [SETUP, NUMBERING_CELL]
    (lab.root / "citations.ipynb").write_text(notebook_json(cells), encoding="utf-8")
    opened = Notebook(browser, lab, "citations.ipynb")
    yield opened
    opened.close()


def menu(page: Any, *labels: str) -> None:
    page.locator(f".lm-MenuBar-itemLabel:text-is('{labels[0]}')").click()
    for label in labels[1:]:
        page.locator(f".lm-Menu-itemLabel:text-is('{label}')").click()


def test_numbers_hover_stop_new_conversation_contrast_and_restart(notebook: Notebook) -> None:
    page, chat = notebook.page, notebook.cells.nth(0).locator(".citelab-chat")
    notebook.run_cell(0)
    chat.wait_for()

    # Three turns: the first in the question box, then follow-ups.
    chat.locator("form.citelab-ask input").fill(QUESTIONS[0])
    chat.locator("form.citelab-ask input").press("Enter")
    retrieved = chat.locator("li.citelab-source-retrieved").first
    retrieved.wait_for()  # while it streams, the sources are retrieved, not yet cited
    assert "Retrieved, not yet cited" in retrieved.inner_text()
    chat.locator('.citelab-turn[data-status="done"]').nth(0).wait_for()
    for count, question in enumerate(QUESTIONS[1:], start=2):
        chat.locator("form.citelab-followup input").fill(question)
        chat.locator("form.citelab-followup input").press("Enter")
        chat.locator('.citelab-turn[data-status="done"]').nth(count - 1).wait_for()
    numbers_agree(page)
    # Exactly the conversation's numbers, per source, as the kernel holds them.
    notebook.run_cell(1)
    printed = notebook.cells.nth(1).locator(".jp-OutputArea-output").get_by_text("NUMBERING:")
    kernel = json.loads(printed.inner_text().strip().removeprefix("NUMBERING:"))
    assert len(kernel) == len(QUESTIONS)
    conversation_numbers_hold(chat, kernel)
    assert chat.locator("form.citelab-ask").is_hidden()
    # Prompt and rounds per turn, shown (#24: they stayed hidden and empty in JupyterLab).
    rounds = chat.locator("details.citelab-rounds:not([hidden])")
    assert rounds.count() == 3
    assert rounds.nth(2).locator("summary").inner_text().startswith("Prompt and rounds (")

    # The hover/focus card, and the cited span it highlights.
    card = hover_card_follows_pointer_and_focus(page, chat)
    assert low_contrast(page, ".citelab-chat") == []
    if SHOTS:
        chat.screenshot(path=str(ROOT / SHOTS / "chat.png"))
    page.keyboard.press("Escape")
    card.wait_for(state="hidden")

    # Stop while a follow-up streams.
    chat.locator("form.citelab-followup input").fill(QUESTIONS[0])
    chat.locator("form.citelab-followup input").press("Enter")
    chat.locator(".citelab-turn").nth(3).locator(".citelab-answer p").first.wait_for()
    chat.get_by_role("button", name="Stop", exact=True).click()
    page.wait_for_function(
        "() => document.querySelectorAll('.citelab-chat .citelab-turn')[3]"
        "?.dataset.status === 'error'"
    )
    stopped = chat.locator(".citelab-turn").nth(3)
    assert stopped.locator(".citelab-error").is_hidden()  # stopping is no error (#24)
    assert "incomplete" in stopped.locator(".citelab-stopped").inner_text()

    # New conversation: the view clears and the question box is back.
    chat.get_by_role("button", name="New conversation", exact=True).click()
    page.wait_for_function(
        "() => document.querySelectorAll('.citelab-chat .citelab-turn').length === 0"
    )
    assert chat.locator("form.citelab-ask input").is_visible()

    # The dark theme: the chat's dark palette, every pair still at least 4.5:1.
    chat.locator("form.citelab-ask input").fill(QUESTIONS[0])
    chat.locator("form.citelab-ask input").press("Enter")
    chat.locator('.citelab-turn[data-status="done"]').nth(0).wait_for()
    menu(page, "Settings", "Theme", "JupyterLab Dark")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    chat.locator(".citelab-answer a[data-ref-index]").first.focus()
    card.wait_for(state="visible")
    assert low_contrast(page, ".citelab-chat") == []
    menu(page, "Settings", "Theme", "JupyterLab Light")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")

    # A kernel restart: the chat can no longer answer, and says so instead of swallowing.
    menu(page, "Kernel", "Restart Kernel…")
    page.locator(".jp-Dialog button.jp-mod-accept").click()
    notice = chat.locator(".citelab-notice")
    notice.wait_for(state="visible")
    assert "kernel restarted or stopped" in notice.inner_text()
    assert chat.locator("form.citelab-followup input").is_disabled()
    assert chat.get_by_role("button", name="New conversation", exact=True).is_disabled()
