"""The chat's keyboard, focus and redraw behaviour in a real JupyterLab (Debian's chromium).

Things only JupyterLab does, and that a harness page cannot show: its notebook shortcuts take
Enter and Shift+Enter from an output; when the kernel rewrites an output, it renders it again
(a widget output gets a new view) and never closes the old view. So the kernel rewrites only
the static copy it displays after each live view, never the view's own output: a turn's end
leaves the live view (its DOM, focus, selection) alone. Uses the private JupyterLab of
``tests/browser/_lab.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from browser._lab import CHAT_CELL, Lab, notebook_json

TIMEOUT_MS = 30_000
FIRST = "When are tuition fees due?"
SECOND = "How do I apply for a scholarship?"

SETUP = CHAT_CELL
CELLS = [
    SETUP,
    "chat  # a second view of the same chat, in another cell",
    # An output holding a live view that the kernel does rewrite: JupyterLab renders it again.
    "from IPython.display import display, update_display\n"
    "bundle, metadata = chat._repr_mimebundle_()\n"
    "display(bundle, metadata=metadata, raw=True, display_id='rewritten')",
    "update_display(bundle, metadata=metadata, raw=True, display_id='rewritten')",
]

# The turns a chat view shows: [question, status] pairs (null while there is no view).
TURNS = """(root) => root && [...root.querySelectorAll('.citelab-turn')].map(
  (turn) => [turn.querySelector('.citelab-question').textContent, turn.dataset.status])"""
CURRENT_VIEW = """([cell]) => document.querySelectorAll('.jp-Notebook .jp-Cell')[cell]
  .querySelector('.citelab-chat')"""
# Note whether JupyterLab ever shows its "Loading widget..." in a cell: it does when it renders
# a widget output again.
WATCH_RELOADS = """([cell]) => {
  const area = document.querySelectorAll('.jp-Notebook .jp-Cell')[cell]
    .querySelector('.jp-OutputArea');
  const reloads = (window.citelabReloads ??= {});
  reloads[cell] = 0;
  new MutationObserver((changes) => {
    for (const change of changes)
      for (const node of change.addedNodes)
        if (node.textContent?.includes('Loading widget')) reloads[cell] += 1;
  }).observe(area, {subtree: true, childList: true, characterData: true});
}"""
# The static copies in a cell: their text, and whether they (and their rows) are shown.
STATIC_COPIES = """([cell]) => [...document.querySelectorAll('.jp-Notebook .jp-Cell')[cell]
  .querySelectorAll('.citelab-static')].map((copy) => ({
    text: copy.textContent,
    shown: getComputedStyle(copy).display !== 'none',
    rowShown: getComputedStyle(copy.closest('.jp-OutputArea-child')).display !== 'none',
  }))"""
FOCUS = """() => {
  const active = document.activeElement;
  const cell = active?.closest('.jp-Cell');
  return {
    box: active?.closest('form')?.className ?? null,
    cell: cell ? [...document.querySelectorAll('.jp-Notebook .jp-Cell')].indexOf(cell) : null,
  };
}"""


class Notebook:
    """The notebook open in one JupyterLab tab; records requests and page errors."""

    def __init__(self, browser: Any, lab: Lab, name: str) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 1400})
        self.page.set_default_timeout(TIMEOUT_MS)
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("websocket", lambda socket: self.requests.append(socket.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(lab.notebook_url(name))
        self.page.get_by_role("button", name="Python 3 (ipykernel) | Idle", exact=True).wait_for()
        self.cells = self.page.locator(".jp-Notebook .jp-Cell")

    def run_cell(self, index: int) -> None:
        self.cells.nth(index).locator(".jp-InputArea-editor").click()
        self.page.keyboard.press("Shift+Enter")

    def wait_turns(self, cell: int, turns: list[list[str]]) -> None:
        """Wait until the chat view in ``cell`` shows these [question, status] turns."""
        condition = f"([cell, turns]) => JSON.stringify(({TURNS})(({CURRENT_VIEW})([cell]))) "
        condition += "=== JSON.stringify(turns)"
        self.page.wait_for_function(condition, arg=[cell, turns])

    def focus(self) -> dict[str, Any]:
        state: dict[str, Any] = self.page.evaluate(FOCUS)
        return state

    def execution_counts(self) -> list[str]:
        """The prompts of the notebook's own cells (running the last one adds an empty one)."""
        prompts = self.cells.locator(".jp-InputPrompt").all_inner_texts()
        return [prompt.strip() for prompt in prompts[: len(CELLS)]]

    def close(self) -> None:
        self.page.close()
        outside = [
            url
            for url in self.requests
            if urlsplit(url).scheme not in ("data", "blob")
            and urlsplit(url).hostname != "127.0.0.1"
        ]
        assert outside == [], f"the page left loopback: {outside}"
        assert self.errors == [], f"page errors: {self.errors}"


@pytest.fixture
def notebook(browser: Any, lab: Lab) -> Iterator[Notebook]:
    (lab.root / "keys.ipynb").write_text(notebook_json(CELLS), encoding="utf-8")
    opened = Notebook(browser, lab, "keys.ipynb")
    yield opened
    opened.close()


def test_enter_asks_focus_stays_and_replaced_views_stop_drawing(notebook: Notebook) -> None:
    page, cells = notebook.page, notebook.cells
    notebook.run_cell(0)
    cells.nth(0).locator(".citelab-chat").wait_for()
    notebook.run_cell(1)
    cells.nth(1).locator(".citelab-chat").wait_for()
    counts = notebook.execution_counts()

    # Enter in the question box asks (the notebook's own Enter shortcut does not take it).
    page.evaluate(f"window.firstView = ({CURRENT_VIEW})([0])")
    page.evaluate(WATCH_RELOADS, [0])
    box = cells.nth(0).locator("form.citelab-ask input")
    box.click()
    page.keyboard.type(FIRST)
    page.keyboard.press("Enter")
    notebook.wait_turns(0, [[FIRST, "done"]])
    notebook.wait_turns(1, [[FIRST, "done"]])

    # The turn's end rewrote the static copy (what an export shows) and left the live view
    # alone: the same element, never reloaded; the copy stays hidden while a view runs.
    condition = f"([cell, text]) => ({STATIC_COPIES})([cell]).some((c) => c.text.includes(text))"
    for cell in (0, 1):
        page.wait_for_function(condition, arg=[cell, FIRST])
        copies = page.evaluate(STATIC_COPIES, [cell])
        assert [(copy["shown"], copy["rowShown"]) for copy in copies] == [(False, False)]
    assert page.evaluate(f"() => ({CURRENT_VIEW})([0]) === window.firstView")
    assert page.evaluate("() => window.firstView.isConnected")
    assert page.evaluate("() => window.citelabReloads[0]") == 0
    # The question box hides once there is a conversation (only New conversation starts
    # over): its focus moved to the follow-up box; the other view (cell 1) did not take it.
    page.wait_for_function(f"() => ({FOCUS})().box === 'citelab-followup'")
    assert notebook.focus() == {"box": "citelab-followup", "cell": 0}

    # Typed straight away (the focus is there), Shift+Enter neither asks nor runs the cell.
    page.keyboard.type(SECOND)
    page.keyboard.press("Shift+Enter")
    page.wait_for_timeout(300)
    assert notebook.execution_counts() == counts
    notebook.wait_turns(0, [[FIRST, "done"]])
    page.keyboard.press("Enter")
    two = [[FIRST, "done"], [SECOND, "done"]]
    notebook.wait_turns(0, two)
    notebook.wait_turns(1, two)
    assert notebook.execution_counts() == counts
    assert page.evaluate(f"() => ({CURRENT_VIEW})([0]) === window.firstView")

    # An output holding a live view that the kernel rewrites: JupyterLab renders it again with
    # a new view and never closes the old one, which stops following the chat when it leaves
    # the page.
    notebook.run_cell(2)
    notebook.wait_turns(2, two)
    page.evaluate(f"window.replacedView = ({CURRENT_VIEW})([2])")
    page.evaluate(WATCH_RELOADS, [2])
    notebook.run_cell(3)
    page.wait_for_function("() => window.replacedView.isConnected === false")
    assert page.evaluate("() => window.citelabReloads[2]") > 0  # what the watch above sees
    notebook.wait_turns(2, two)
    counts = notebook.execution_counts()

    # The follow-up box asks on Enter too; the replaced view never draws that turn.
    followup = cells.nth(0).locator("form.citelab-followup input")
    followup.click()
    page.keyboard.type("And the deadline?")
    page.keyboard.press("Enter")
    three = [*two, ["And the deadline?", "done"]]
    notebook.wait_turns(0, three)
    notebook.wait_turns(2, three)
    assert notebook.execution_counts() == counts
    old_view = page.evaluate(f"() => ({TURNS})(window.replacedView)")
    assert [question for question, _ in old_view] == [FIRST, SECOND]
