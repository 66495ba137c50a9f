"""The standalone page in Debian's chromium (Playwright): open the printed address, ask, watch
the answer stream in with its sources, follow a citation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser._page import OpenedPage
from server.processes import served_page

ROOT = Path(__file__).resolve().parents[3]
ARTIFACTS = ROOT / "test-artifacts"
# The offline model, slowed down so that the stream is visible piece by piece.
AGENTS = """
[agents.default]
prompt = "You answer questions about Hollin University."
corpus = "university"
model = "extractive"
model_options = { piece_delay = 0.04 }

[agents.default.retrieval]
max_results = 10
entity_cap = 5
"""
RECORD_ANSWER_LENGTHS = """() => {
  window.answerLengths = [];
  const chat = document.getElementById("citelab-chat");
  new MutationObserver(() => {
    const answer = chat.querySelector(".citelab-answer");
    if (answer) window.answerLengths.push(answer.textContent.length);
  }).observe(chat, {subtree: true, childList: true, characterData: true});
}"""


@pytest.fixture(scope="module")
def printed_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_page(tmp_path_factory.mktemp("serve-page"), AGENTS) as url:
        yield url


def test_the_page_streams_an_answer_with_sources_and_follows_a_citation(
    browser: Any, printed_url: str
) -> None:
    opened = OpenedPage(browser, printed_url, size=(1000, 900), console=True)
    page = opened.page
    assert "token=" not in page.url  # the session cookie replaced it
    page.get_by_label("Question", exact=True).wait_for()
    page.evaluate(RECORD_ANSWER_LENGTHS)
    page.get_by_label("Question", exact=True).fill("How much is the semester fee?")
    page.get_by_role("button", name="Ask", exact=True).click()
    opened.done_turns(1, timeout_ms=30_000)

    answer = page.locator(".citelab-answer").first
    assert "312 euros" in answer.inner_text()
    lengths = page.evaluate("window.answerLengths")
    growing = sorted({n for n in lengths if n > 0})
    assert len(growing) >= 3, f"the answer did not stream: {lengths}"
    cards = page.locator("li.citelab-source")
    assert cards.count() >= 1
    assert "Semester fee" in cards.first.inner_text()

    marker = answer.locator("a[data-ref-index]").first
    target = marker.get_attribute("href")
    assert target is not None
    assert target.startswith("#")
    marker.click()
    assert f"#{page.evaluate('document.activeElement.id')}" == target
    assert "citelab-source-target" in (page.locator(target).get_attribute("class") or "")

    with page.expect_response(lambda r: r.url.endswith("/api/feedback")) as rated:
        page.get_by_role("button", name="Helpful", exact=True).click()
    assert rated.value.status == 200

    page.get_by_label("Follow-up question", exact=True).fill("What does the fee include?")
    page.get_by_role("button", name="Send", exact=True).click()
    opened.done_turns(2, timeout_ms=30_000)
    assert "public transport" in page.locator(".citelab-answer").nth(1).inner_text()

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "page.png"), full_page=True)
    opened.close()
