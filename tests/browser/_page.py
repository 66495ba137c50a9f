"""What the real-browser tests of a chat view share, on the standalone page or in a notebook.

:class:`OpenedPage` is one tab of the standalone page: opened on loopback only, recording page
errors (and, when asked, console errors and warnings), and checking both when it closes. The
questions and scripts below read any chat view (``.citelab-chat``) the same way.
"""

from __future__ import annotations

from typing import Any

from browser._chromium import guard_loopback
from browser._contrast import CONTRAST

__all__ = [
    "LIST",
    "MARKERS",
    "NUMBERING_CELL",
    "QUESTIONS",
    "OpenedPage",
    "conversation_numbers_hold",
    "hover_card_follows_pointer_and_focus",
    "low_contrast",
    "numbers_agree",
]

QUESTIONS = [
    "How much is the semester fee?",
    "What are the admission requirements for the Computer Science MSc?",
    "What does the semester fee include?",
]
"""Three turns of one conversation about the university corpus, sharing sources."""
MARKERS = """() => [...document.querySelectorAll('.citelab-chat .citelab-answer a[data-ref-index]')]
  .map((link) => {
    const card = document.getElementById(link.getAttribute('href').slice(1));
    return [link.dataset.refIndex, card?.querySelector('.citelab-source-number')?.textContent];
  })"""
"""Every marker of every answer: [its number, the number its card shows]."""
LIST = """() => [...document.querySelectorAll('.citelab-chat-sources li.citelab-source')]
  .map((card) => card.querySelector('.citelab-source-number').textContent)"""
"""The numbers the shared source list shows, in order."""
NUMBERING_CELL = """\
import json, re
print("NUMBERING:" + json.dumps([
    {
        "markers": [int(n) for n in re.findall(r"\\[(\\d+)\\]", turn["text"])],
        "sources": {
            str(ref["number"]): {key: ref.get(key) for key in ("uri", "title", "detail")}
            for ref in turn["references"]
        },
    }
    for turn in chat.turns
]))"""
"""A notebook cell printing, after ``NUMBERING:``, what the kernel's chat holds per turn: the
numbers its text's markers use (in order) and the source each number names."""
TURN_MARKERS = """(root) => [...root.querySelectorAll('.citelab-turn')].map((turn) =>
  [...turn.querySelectorAll('.citelab-answer a[data-ref-index]')].map((link) => {
    const card = document.getElementById(link.getAttribute('href')?.slice(1) ?? '');
    return {
      number: Number(link.dataset.refIndex),
      card: card?.id ?? null,
      badge: card?.querySelector('.citelab-source-number')?.textContent ?? null,
    };
  }))"""
"""Per turn of a chat view, its markers: the number, the card it points at and that card's
number badge."""
LIST_CARDS = """(root) => [...root.querySelectorAll('.citelab-chat-sources li.citelab-source')]
  .map((card) => ({
    id: card.id,
    badge: card.querySelector('.citelab-source-number').textContent,
    text: card.textContent,
    state: card.dataset.state,
  }))"""
"""The chat view's shared source list: each card's id, number badge, text and state."""


def low_contrast(page: Any, selector: str, ratio: float = 4.5) -> list[dict[str, Any]]:
    """Every text/background pair under ``selector`` below ``ratio`` (after checking that
    there was text to measure)."""
    result = page.evaluate(CONTRAST, [selector, ratio])
    assert result["checked"] > 5, result
    failures: list[dict[str, Any]] = result["failures"]
    return failures


def numbers_agree(page: Any) -> list[list[str]]:
    """Assert that every marker's card shows the marker's number and no two cards show the
    same one; the markers, for comparing later."""
    markers: list[list[str]] = page.evaluate(MARKERS)
    assert len(markers) >= 3
    # (Under per-turn numbering a repeated number is qualified: "[1] (answer 2)".)
    assert all(shown.split(" ")[0] == f"[{number}]" for number, shown in markers), markers
    numbers = page.evaluate(LIST)
    assert len(numbers) == len(set(numbers)), numbers  # no card shows another's number
    return markers


def conversation_numbers_hold(chat: Any, kernel: list[dict[str, Any]]) -> None:
    """Assert that the chat view ``chat`` (a locator) shows the conversation's numbers
    exactly, as ``kernel`` (what :data:`NUMBERING_CELL` printed) has them: each source keeps
    one number over the turns (the numbers 1..N, new ones in first-citation order); every
    turn's markers are the numbers its text uses, each pointing at the one card of its source,
    whose badge is exactly ``[n]`` (no "answer 2" qualifier, no alias); and the shared list
    holds exactly those N cards, in number order, each the source the kernel names."""
    number_of: dict[str, int] = {}
    named: dict[int, dict[str, Any]] = {}
    for turn in kernel:
        for number, source in turn["sources"].items():
            # One number per source, and one source per number, over the whole conversation.
            assert number_of.setdefault(source["uri"], int(number)) == int(number), kernel
            assert named.setdefault(int(number), source)["uri"] == source["uri"], kernel
    first_use = [n for turn in kernel for n in dict.fromkeys(turn["markers"])]
    assert list(dict.fromkeys(first_use)) == list(range(1, len(named) + 1)), kernel
    shown = chat.evaluate(TURN_MARKERS)
    assert [[m["number"] for m in turn] for turn in shown] == [t["markers"] for t in kernel]
    card_of: dict[int, str] = {}
    for marker in (m for turn in shown for m in turn):
        assert marker["badge"] == f"[{marker['number']}]", shown
        assert card_of.setdefault(marker["number"], marker["card"]) == marker["card"], shown
    cards = chat.evaluate(LIST_CARDS)
    assert [card["badge"] for card in cards] == [f"[{n}]" for n in range(1, len(named) + 1)]
    assert [card["id"] for card in cards] == [card_of[n] for n in range(1, len(named) + 1)]
    for number, card in enumerate(cards, start=1):
        assert card["state"] == "cited", card
        assert named[number]["title"] in card["text"], (named[number], card)
        if named[number]["detail"]:
            assert named[number]["detail"] in card["text"], (named[number], card)
    # A source cited again in a later turn keeps its number there (conversation-wide).
    again = [n for n in named if sum(n in turn["markers"] for turn in kernel) > 1]
    assert again, f"no source is cited in two turns, nothing shows the numbering: {kernel}"


def hover_card_follows_pointer_and_focus(page: Any, chat: Any) -> Any:
    """Assert that the first marker in ``chat`` (a page or a locator) opens its hover card on
    the pointer, closes it when the pointer leaves, opens it again on keyboard focus
    (described by the card) and highlights the cited span; the card, left open."""
    marker = chat.locator(".citelab-answer a[data-ref-index]").first
    marker.hover()
    card = chat.locator(".citelab-hovercard")
    card.wait_for(state="visible")
    assert "Semester fee" in card.inner_text()
    page.mouse.move(5, 5)
    card.wait_for(state="hidden")
    marker.focus()
    card.wait_for(state="visible")
    assert marker.get_attribute("aria-describedby") == card.get_attribute("id")
    assert chat.locator("mark.citelab-cited-active").count() >= 1  # the cited span
    return card


class OpenedPage:
    """A new tab on ``url``, kept on loopback; :meth:`close` asserts nothing left it and no
    error was logged."""

    def __init__(
        self,
        browser: Any,
        url: str,
        *,
        size: tuple[int, int] = (1100, 1000),
        scheme: str = "light",
        timeout_ms: float | None = None,
        console: bool = False,
    ) -> None:
        width, height = size
        self.page = browser.new_page(
            viewport={"width": width, "height": height}, color_scheme=scheme
        )
        if timeout_ms is not None:
            self.page.set_default_timeout(timeout_ms)
        self.outside: list[str] = []
        self.errors: list[str] = []
        guard_loopback(self.page, self.outside)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        if console:
            self.page.on("console", self._console)
        self.page.goto(url)

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(message.text)

    def low_contrast(self, selector: str = "body") -> list[dict[str, Any]]:
        return low_contrast(self.page, selector)

    def done_turns(self, count: int, timeout_ms: float | None = None) -> None:
        """Wait until ``count`` turns are done."""
        done = self.page.locator('.citelab-turn[data-status="done"]').nth(count - 1)
        done.wait_for(timeout=timeout_ms)

    def close(self) -> None:
        self.page.close()
        assert self.outside == [], f"requests left loopback: {self.outside}"
        assert self.errors == [], f"console or page errors: {self.errors}"
