"""#24 on the standalone page, in Debian's chromium (Playwright) against ``citelab serve``: a
conversation is kept in the server's store, not only in one tab. Asked in one tab, it is
listed under "Recent conversations" in a NEW tab of the same browser (which shares the
session cookie, not the first tab's sessionStorage), opens there with its numbered sources,
and a follow-up continues it; opened from the list's link in a tab of its own, it shows too.
The list is used with the keyboard."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser._chromium import guard_loopback
from browser._page import MARKERS, QUESTIONS, low_contrast, numbers_agree
from server.processes import served_page

ROOT = Path(__file__).resolve().parents[3]
# Where the README's screenshots are written when asked (CITELAB_SCREENSHOTS=docs/images).
SHOTS = os.environ.get("CITELAB_SCREENSHOTS")
TIMEOUT_MS = 60_000
AGENTS = """
[agents.default]
prompt = "You answer questions about Hollin University."
corpus = "university"
model = "extractive"
starter_questions = ["How much is the semester fee?"]

[agents.default.retrieval]
max_results = 10
entity_cap = 5
"""
TURN_QUESTIONS = """() => [...document.querySelectorAll('.citelab-turn .citelab-question')]
  .map((question) => question.textContent)"""
RECENT = """() => [...document.querySelectorAll('.citelab-recent-item a')].map((link) => ({
  question: link.querySelector('.citelab-recent-question').textContent,
  meta: link.querySelector('.citelab-recent-meta').textContent,
  current: link.getAttribute('aria-current'),
  href: link.getAttribute('href'),
}))"""


@pytest.fixture(scope="module")
def printed_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_page(tmp_path_factory.mktemp("serve-recent"), AGENTS) as url:
        yield url


class Tabs:
    """One browser context (one cookie jar, as a person's browser), its tabs kept on
    loopback and free of page errors."""

    def __init__(self, browser: Any, scheme: str = "light") -> None:
        self.context = browser.new_context(
            viewport={"width": 1280, "height": 900}, color_scheme=scheme
        )
        self.context.set_default_timeout(TIMEOUT_MS)
        self.outside: list[str] = []
        self.errors: list[str] = []
        guard_loopback(self.context, self.outside)

    def open(self, url: str) -> Any:
        page = self.context.new_page()
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on(
            "console",
            lambda message: (
                self.errors.append(message.text) if message.type in ("error", "warning") else None
            ),
        )
        page.goto(url)
        return page

    def close(self) -> None:
        self.context.close()
        assert self.outside == [], f"requests left loopback: {self.outside}"
        assert self.errors == [], f"console or page errors: {self.errors}"


def _done(page: Any, count: int) -> None:
    page.locator('.citelab-turn[data-status="done"]').nth(count - 1).wait_for()


def _recent(page: Any, count: int) -> list[dict[str, Any]]:
    page.locator(".citelab-recent-item").nth(count - 1).wait_for()
    listed: list[dict[str, Any]] = page.evaluate(RECENT)
    return listed


def test_a_conversation_asked_in_one_tab_reopens_from_the_list_in_a_new_tab(
    browser: Any, printed_url: str
) -> None:
    tabs = Tabs(browser)
    try:
        first = tabs.open(printed_url)  # the login link: the session cookie is set
        first.get_by_label("Question", exact=True).wait_for()
        # The list loads after the page: wait for its empty state, not for the page alone.
        first.locator(".citelab-page-recent").get_by_text("No conversations yet").wait_for()
        # An earlier conversation (a starter question), then New conversation.
        first.locator(".citelab-starters .citelab-chip").first.click()
        _done(first, 1)
        assert _recent(first, 1)[0]["current"] == "true"
        first.get_by_role("button", name="New conversation", exact=True).click()
        first.get_by_label("Question", exact=True).fill(QUESTIONS[1])
        first.get_by_role("button", name="Ask", exact=True).click()
        _done(first, 1)
        first.get_by_label("Follow-up question", exact=True).fill(QUESTIONS[2])
        first.get_by_role("button", name="Send", exact=True).click()
        _done(first, 2)
        markers = numbers_agree_or_two(first)
        # After its first answer the conversation is listed on top, marked as the one shown.
        listed, earlier = _recent(first, 2)
        assert listed["question"] == QUESTIONS[1]
        assert listed["current"] == "true"
        assert earlier["question"] == "How much is the semester fee?"
        assert earlier["current"] is None

        # A NEW tab (same cookies, fresh sessionStorage): the page starts empty and lists it.
        base = re.sub(r"\?.*$", "", printed_url)
        second = tabs.open(base)
        second.get_by_label("Question", exact=True).wait_for()
        again, _ = _recent(second, 2)
        assert again["question"] == QUESTIONS[1]
        assert again["meta"].startswith("2 questions · ")
        assert again["current"] is None
        assert second.locator(".citelab-turn").count() == 0

        # With the keyboard: Tab to the link, Enter shows it here with its numbered sources.
        link = second.locator(".citelab-recent-item a").first
        link.focus()
        second.keyboard.press("Enter")
        _done(second, 2)
        assert second.evaluate(TURN_QUESTIONS) == QUESTIONS[1:]
        assert second.evaluate(MARKERS) == markers
        assert second.locator("li.citelab-source").count() >= 2
        assert link.get_attribute("aria-current") == "true"
        assert "ask a follow-up" in second.locator(".citelab-recent-status").inner_text()
        assert low_contrast(second, "body") == []
        if SHOTS:
            second.screenshot(path=str(ROOT / SHOTS / "page-recent.png"), animations="disabled")

        # A follow-up continues the same conversation (listed once, now with 3 questions).
        second.get_by_label("Follow-up question", exact=True).fill(QUESTIONS[0])
        second.get_by_role("button", name="Send", exact=True).click()
        _done(second, 3)
        second.wait_for_function(
            "() => document.querySelector('.citelab-recent-meta')?.textContent"
            ".startsWith('3 questions')"
        )
        assert len(second.evaluate(RECENT)) == 2
        numbers_agree(second)
        asked = [*QUESTIONS[1:], QUESTIONS[0]]

        # The list's link opened in a tab of its own shows the conversation there too, and
        # the address forgets it (a reload shows what is open then).
        third = tabs.open(f"{base.rstrip('/')}{again['href']}")
        _done(third, 3)
        assert third.evaluate(TURN_QUESTIONS) == asked
        assert "conversation=" not in third.url
        third.reload()
        _done(third, 3)
        assert third.evaluate(TURN_QUESTIONS) == asked
    finally:
        tabs.close()


def numbers_agree_or_two(page: Any) -> list[list[str]]:
    """The markers of the answers so far, after checking each card shows its marker's
    number (two turns may hold fewer than the three markers ``numbers_agree`` wants)."""
    markers: list[list[str]] = page.evaluate(MARKERS)
    assert markers
    assert all(shown.split(" ")[0] == f"[{number}]" for number, shown in markers), markers
    return markers
