"""The notebook chat in a real JupyterLab, driven in Debian's chromium through Playwright.

The notebook (written into the server's temp root) answers with the offline model wrapped in
a gate: the first answer of each chat holds after a few pieces until a cell opens the gate.
So the test can open a second view of the chat mid-stream, and show a chat whose question
started before any view existed, and check that every token is there, without timing luck.
"""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path
from typing import Any

from browser._chromium import guard_loopback

from ._lab import CHAT_CELL, Lab, notebook_json

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
# anywidget hands initialize() and each render() a different proxy of one model; the front end
# keys the streamed turns by the kernel's `_model_key` trait, so a view opened mid-stream shows
# every token sent before it, without waiting for the final `done`.
MID_STREAM_MS = 5_000
QUESTION = "When are tuition fees due?"
TIMEOUT_MS = 30_000

SETUP = '''\
import asyncio
from citelab.agent import default_agents
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.models import ExtractiveModel, TextDelta
from citelab.widget import Chat, SourcesPanel


class GatedModel:
    """The offline model; its first answer holds after `hold_after` pieces until `gate`."""

    name = "gated"

    def __init__(self, hold_after=3):
        self.inner, self.hold_after = ExtractiveModel(), hold_after
        self.gate, self.waiting, self.held = asyncio.Event(), asyncio.Event(), None

    async def stream(self, messages, tools=None, **options):
        pieces = []
        async for delta in self.inner.stream(messages, tools, **options):
            if isinstance(delta, TextDelta):
                if len(pieces) == self.hold_after and not self.gate.is_set():
                    self.held = "".join(pieces)
                    self.waiting.set()
                    await self.gate.wait()
                pieces.append(delta.text)
            yield delta


def make_chat(model, **options):
    service = AnswerService(
        default_agents(), store=MemoryConversationStore(), logs=MemoryLogStore(),
        models={"extractive": model}, index_dir="indexes",
    )
    return Chat(service, **options)


main_model = GatedModel()
chat = make_chat(main_model)
chat'''

CELLS = [
    SETUP,
    "SourcesPanel(chat, heading='Panel sources')",
    # A second view of the same chat, opened while the answer is held mid-stream.
    "await main_model.waiting.wait()\nprint('HELD:' + main_model.held)\ndisplay(chat)",
    "main_model.gate.set()",
    # A chat whose question starts (and streams) before any view of it exists.
    "early_model = GatedModel()\n"
    "early = make_chat(early_model, token_interval=0)\n"
    f"early_turn = early.ask({QUESTION!r})\n"
    "await early_model.waiting.wait()\n"
    "print('HELD:' + early_model.held)\n"
    "early",
    "early_model.gate.set()\nawait early_turn\nprint('early done')",
]

# The text a view shows, its turn statuses, and each output's static HTML, read in the page.
VIEW_STATE = """([cell, nth]) => {
  const views = document.querySelectorAll('.jp-Notebook .jp-Cell')[cell]
    ?.querySelectorAll('.citelab-chat') ?? [];
  const view = views[nth];
  if (!view) return null;
  const turns = [...view.querySelectorAll('.citelab-turn')];
  return {
    statuses: turns.map((turn) => turn.dataset.status),
    texts: turns.map((turn) => turn.querySelector('.citelab-answer').textContent),
  };
}"""
# The panel highlights a cited card for a moment: note it when it happens.
WATCH_HIGHLIGHT = """(panel) => {
  window.citelabPanelHighlighted = false;
  new MutationObserver(() => {
    if (panel.querySelector('li.citelab-source-target')) window.citelabPanelHighlighted = true;
  }).observe(panel, {subtree: true, attributes: true, attributeFilter: ['class']});
}"""
WAIT_VIEW = """([state, statuses, text]) => {
  const view = (VIEW_STATE)(state);
  if (!view || JSON.stringify(view.statuses) !== JSON.stringify(statuses)) return null;
  const last = view.texts.at(-1).split(/\\s+/).join(' ').trim();
  return text === null || last === text ? view : null;
}"""
OUTPUT_HTML = """([cell]) => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  const outputs = notebook.widgets[cell].model.outputs;
  const pages = [];
  for (let i = 0; i < outputs.length; i++) pages.push(outputs.get(i).data['text/html'] ?? '');
  return pages.join('\\n');
}"""


def normalized(text: str) -> str:
    return " ".join(text.split())


class LabPage:
    """One JupyterLab tab, recording every request and every page error."""

    def __init__(
        self,
        browser: Any,
        lab: Lab,
        notebook: str,
        timeout_error: type[Exception],
        workspace: str | None = None,
    ) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 1600})
        self.page.set_default_timeout(TIMEOUT_MS)
        self.outside: list[str] = []
        self.errors: list[str] = []
        guard_loopback(self.page, self.outside)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(lab.notebook_url(notebook, workspace))
        self.page.get_by_role("button", name="Python 3 (ipykernel) | Idle", exact=True).wait_for()
        self.cells = self.page.locator(".jp-Notebook .jp-Cell")
        self.timeout_error = timeout_error

    def expect_mid_stream(self, cell: int, text: str) -> None:
        """A view shows every token streamed so far, while the answer is still streaming."""
        self.wait_view(cell, ["streaming"], text, timeout=MID_STREAM_MS)

    def run_cell(self, index: int) -> None:
        self.cells.nth(index).locator(".jp-InputArea-editor").click()
        self.page.keyboard.press("Shift+Enter")

    def printed(self, index: int, prefix: str) -> str:
        """The text after ``prefix`` in the cell's printed output (waits for it)."""
        stream = self.cells.nth(index).locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stdout']"
        )
        stream.wait_for()
        lines: list[str] = stream.inner_text().splitlines()
        return next(line for line in lines if line.startswith(prefix)).removeprefix(prefix)

    def view_state(self, cell: int, nth: int = 0) -> dict[str, Any] | None:
        state: dict[str, Any] | None = self.page.evaluate(VIEW_STATE, [cell, nth])
        return state

    def wait_view(
        self,
        cell: int,
        statuses: list[str],
        text: str | None = None,
        nth: int = 0,
        timeout: float = TIMEOUT_MS,
    ) -> dict[str, Any]:
        """Wait until a chat view shows these turn statuses (and this last text)."""
        condition = WAIT_VIEW.replace("VIEW_STATE", VIEW_STATE)
        try:
            handle = self.page.wait_for_function(
                condition, arg=[[cell, nth], statuses, text], timeout=timeout
            )
        except self.timeout_error as exc:
            seen = self.view_state(cell, nth)
            raise AssertionError(
                f"cell {cell} view {nth}: wanted {statuses} {text!r}, saw {seen}"
            ) from exc
        value: dict[str, Any] = handle.json_value()
        return value

    def wait_output_html(self, cell: int, needle: str) -> None:
        """Wait until the cell's saved outputs carry ``needle`` in their static HTML."""
        condition = "([cell, needle]) => (OUTPUT_HTML)([cell]).includes(needle)"
        try:
            self.page.wait_for_function(
                condition.replace("OUTPUT_HTML", OUTPUT_HTML), arg=[cell, needle]
            )
        except self.timeout_error as exc:
            html = self.page.evaluate(OUTPUT_HTML, [cell])
            raise AssertionError(f"cell {cell} outputs lack {needle!r}: {html[:500]!r}") from exc

    def close(self) -> None:
        self.page.close()
        assert self.outside == [], f"the page left loopback: {self.outside}"
        assert self.errors == [], f"page errors: {self.errors}"


def test_the_chat_streams_links_sources_and_asks_from_a_chip(browser: Any, lab: Lab) -> None:
    (lab.root / "chat.ipynb").write_text(notebook_json(CELLS), encoding="utf-8")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tab = LabPage(browser, lab, "chat.ipynb", PlaywrightTimeout)
    page, cells = tab.page, tab.cells

    tab.run_cell(0)
    cells.nth(0).locator(".citelab-chat").wait_for()
    tab.run_cell(1)
    cells.nth(1).locator(".citelab-sources-panel").wait_for(state="attached")

    # Ask in the widget, as a person would.
    ask = cells.nth(0).locator("form.citelab-ask")
    ask.get_by_label("Question", exact=True).fill(QUESTION)
    ask.get_by_role("button", name="Ask").click()

    # The answer is held after a few pieces: the kernel is free, so another cell runs now
    # and opens a second view of the same chat, mid-stream.
    tab.run_cell(2)
    held = normalized(tab.printed(2, "HELD:"))
    assert held, "the model held its answer after some text"
    tab.wait_view(0, ["streaming"], held)
    tab.expect_mid_stream(2, held)

    tab.run_cell(3)  # open the gate: the answer finishes
    first = tab.wait_view(0, ["done"])
    final = normalized(first["texts"][0])
    assert final.startswith(held), "no token was lost before or during the stream"
    assert "[1]" in final
    second_view = tab.wait_view(2, ["done"])
    assert normalized(second_view["texts"][0]) == final
    # The outputs' static HTML was rewritten to the answer (what an export shows); the
    # views it redrew still show the conversation.
    for cell in (0, 1, 2):
        tab.wait_output_html(cell, "When are tuition fees due?")
    tab.wait_view(0, ["done"], final)

    chat = cells.nth(0).locator(".citelab-chat")
    cards = chat.locator("li.citelab-source")
    cards.first.wait_for()
    panel_cards = cells.nth(1).locator(".citelab-sources-panel li.citelab-source")
    assert panel_cards.count() == cards.count() >= 1
    title = ".citelab-source-title"
    assert panel_cards.first.locator(title).inner_text() == cards.first.locator(title).inner_text()
    for link in cards.locator("a").all():
        assert link.get_attribute("target") == "_blank"
        assert link.get_attribute("rel") == "noopener noreferrer"

    # Follow an [n] link: its card takes the focus, the panel highlights its own card.
    marker = chat.locator(".citelab-answer a[data-ref-index]").first
    target = marker.get_attribute("href")
    assert target is not None
    assert target.startswith("#")
    cells.nth(1).locator(".citelab-sources-panel").evaluate(WATCH_HIGHLIGHT)
    marker.click()
    page.wait_for_function("(id) => document.activeElement?.id === id", arg=target[1:])
    assert page.locator(target).evaluate("(card) => card.matches('li.citelab-source')")
    page.wait_for_function("() => window.citelabPanelHighlighted === true")

    # A suggested-reply chip asks a follow-up: a second turn appears, in both views.
    chip = chat.locator(".citelab-chip").first
    chip_text = chip.inner_text()
    chip.click()
    second = tab.wait_view(0, ["done", "done"])
    assert normalized(second["texts"][1])
    tab.wait_output_html(0, chip_text)
    tab.wait_view(0, ["done", "done"], normalized(second["texts"][1]))
    tab.wait_view(2, ["done", "done"], normalized(second["texts"][1]))
    turns = chat.locator(".citelab-turn")
    assert turns.nth(1).locator(".citelab-question").inner_text() == chip_text

    ARTIFACTS.mkdir(exist_ok=True)
    cells.nth(0).locator(".jp-OutputArea").screenshot(path=str(ARTIFACTS / "chat.png"))

    # A question that started before any view of its chat existed: every token is shown.
    tab.run_cell(4)
    early_held = normalized(tab.printed(4, "HELD:"))
    assert early_held == held
    tab.expect_mid_stream(4, early_held)
    tab.run_cell(5)
    cells.nth(5).locator(".jp-OutputArea-output").get_by_text("early done").wait_for()
    early = tab.wait_view(4, ["done"])
    assert normalized(early["texts"][0]) == final

    tab.close()


RESTART_SETUP = CHAT_CELL
DRAFT = "How do I apply for a scholarship?"
NOTICE = "kernel restarted or stopped"
KERNEL_ID = "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id"


def restart_through_the_api(lab: Lab, kernel_id: str) -> None:
    """Restart a kernel as another client would (JupyterLab's own menu is not involved)."""
    request = urllib.request.Request(
        f"{lab.base}/api/kernels/{kernel_id}/restart",
        method="POST",
        headers={"Authorization": f"token {lab.token}"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200


def come_back_until_noticed(chat: Any, notice: Any, seconds: float = 30.0) -> None:
    """Focus in the chat, as someone coming back to it does, until it shows ``notice``: the
    first check may be asked of a kernel process on its way out and get no reply, so a user
    who clicks again (here: every 3.5 s, past the chat's wait for a reply) is asked for."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    buttons = [chat.locator("button.citelab-new"), chat.locator("form.citelab-followup button")]
    deadline = time.monotonic() + seconds
    turn = 0
    while True:
        buttons[turn % 2].focus()
        turn += 1
        try:
            notice.wait_for(state="visible", timeout=3500)
            return
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise


def test_a_kernel_restart_stops_the_chat_with_a_plain_message_until_its_cell_runs_again(
    browser: Any, lab: Lab
) -> None:
    (lab.root / "restart.ipynb").write_text(notebook_json([RESTART_SETUP]), encoding="utf-8")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # A workspace of its own: the earlier test's notebook is not restored next to this one.
    tab = LabPage(browser, lab, "restart.ipynb", PlaywrightTimeout, workspace="restart")
    page, cell = tab.page, tab.cells.nth(0)
    tab.run_cell(0)
    chat = cell.locator(".citelab-chat")
    chat.wait_for()
    chat.locator("form.citelab-ask input").fill(QUESTION)
    chat.locator("form.citelab-ask input").press("Enter")
    tab.wait_view(0, ["done"])
    followup = chat.locator("form.citelab-followup")
    followup.locator("input").fill(DRAFT)  # typed, not sent yet

    # A restart from outside JupyterLab's menu (the REST API, as another client does it):
    # JupyterLab's widget manager notices nothing. The chat may learn it from the session's
    # `starting` status, which is easily lost; coming back to the chat (focus in it) makes it
    # ask the kernel, whose reply comes from another session.
    restart_through_the_api(lab, page.evaluate(KERNEL_ID))
    notice = chat.locator(".citelab-notice")
    come_back_until_noticed(chat, notice)
    assert NOTICE in notice.inner_text()
    assert followup.locator("input").is_disabled()
    assert followup.get_by_role("button").is_disabled()
    assert chat.get_by_role("button", name="New conversation", exact=True).is_disabled()
    assert followup.locator("input").input_value() == DRAFT, "the typed question is kept"
    # Sent anyway (a form can be submitted with its controls disabled): not swallowed, the
    # form says why, the question stays in its box, and no turn is added.
    followup.evaluate("(form) => form.requestSubmit()")
    error = followup.locator(".citelab-form-error")
    error.wait_for(state="visible")
    assert NOTICE in error.inner_text()
    assert followup.locator("input").input_value() == DRAFT
    assert chat.locator(".citelab-turn").count() == 1

    # Running the cell again gives a new, live chat in its place. (The REST restart returns
    # once the new kernel answers; the status bar says "Starting" until it runs something.)
    tab.run_cell(0)
    fresh = cell.locator(".citelab-chat:not(.citelab-disconnected)")
    fresh.wait_for()
    page.wait_for_function(
        "(cell) => cell.querySelectorAll('.citelab-chat').length === 1", arg=cell.element_handle()
    )
    assert fresh.locator(".citelab-notice").is_hidden()
    assert fresh.locator(".citelab-turn").count() == 0
    fresh.locator("form.citelab-ask input").fill(QUESTION)
    fresh.locator("form.citelab-ask input").press("Enter")
    answer = tab.wait_view(0, ["done"])
    assert "[1]" in answer["texts"][0]

    # JupyterLab's own Restart Kernel… (the widget manager sets the model's comm dead).
    page.locator(".lm-MenuBar-itemLabel:text-is('Kernel')").click()
    page.locator(".lm-Menu-itemLabel:text-is('Restart Kernel…')").click()
    page.locator(".jp-Dialog button.jp-mod-accept").click()
    notice = cell.locator(".citelab-chat .citelab-notice")
    notice.wait_for(state="visible")
    assert NOTICE in notice.inner_text()
    assert cell.locator(".citelab-chat form.citelab-followup input").is_disabled()
    tab.close()
