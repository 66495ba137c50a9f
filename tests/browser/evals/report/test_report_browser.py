"""The HTML report in a real browser (Debian's chromium through Playwright): the case browser
filters and opens a case, the page logs no error and asks for nothing but itself.

The report is served by a plain HTTP server on loopback, as a file server would serve it.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import citelab.evals.report._case_browser as case_browser
from citelab.evals import (
    Case,
    CaseRecord,
    GoldClaim,
    GoldTurn,
    build_scorers,
    score_records,
    write_outputs,
)
from citelab.evals.records import RoundRecord
from evals._builders import record

FEES, PARKING = "entity:page/fees", "entity:page/parking"
TEXT = "Tuition fees are due in May [1]. Permits cost 30 euros per term [2]."
ANCHORS = [
    {"sourceUri": FEES, "citedText": "Tuition fees are due in May", "startIndex": 0, "endIndex": 27}
]
HOSTILE = (
    'Fees <img src="http://203.0.113.9/x.png" onerror="alert(1)"> are due in May [1]. '
    "[click](javascript:alert(1))"
)


def _result(per_dataset: int = 3) -> Any:
    cases: dict[tuple[str, str], Case] = {}
    records = []
    for dataset in ("campus", "library"):
        for i in range(per_dataset):
            case_id = f"{dataset}-{i}"
            question = f"When are fees due at {dataset} {i}?"
            claim = GoldClaim(text="Tuition fees are due in May", supported_by=[FEES])
            cases[(dataset, case_id)] = Case(
                id=case_id, turns=[GoldTurn(question=question, claims=[claim])]
            )
            for variant, second in (
                ("baseline", {1: FEES, 2: PARKING}),
                ("shuffled", {1: PARKING, 2: FEES}),
            ):
                text = HOSTILE if (variant, dataset, i) == ("shuffled", "library", 2) else TEXT
                rounds = [
                    RoundRecord(index=0, visible={1: FEES}, searches=1, added={1: FEES}),
                    RoundRecord(index=1, text=text, visible=second),
                ]
                turn = record(
                    text, ("fees", "parking"), rounds=rounds, question=question, anchors=ANCHORS
                )
                records.append(
                    CaseRecord(
                        key=f"{variant}|{case_id}",
                        variant=variant,
                        model="m",
                        dataset=dataset,
                        case_id=case_id,
                        turns=[turn],
                    )
                )
    scorers = build_scorers(["citation_recall", "numbering_stability", "claim_recall"])
    config = {
        "suite": {"name": "browser"},
        "variants": {
            "baseline": {"set": {}, "description": "as shipped"},
            "shuffled": {"set": {}, "description": "numbers shuffled between rounds"},
        },
    }
    return score_records(records, cases, scorers, config=config, seed=1)


@pytest.fixture(scope="module")
def report_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("report")
    write_outputs(_result(), folder, [], title="browser")
    yield from _served(folder)


@pytest.fixture(scope="module")
def small_blocks_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A report of 30 cases a dataset (120 turns) with its details packed 5 turns a block."""
    folder = tmp_path_factory.mktemp("blocks")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(case_browser, "DETAIL_BLOCK", 5)
        write_outputs(_result(30), folder, [], title="blocks")
    assert 'data-block="5"' in (folder / "report.html").read_text(encoding="utf-8")
    yield from _served(folder)


def _served(folder: Any) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/report.html"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def page(browser: Any, report_url: str) -> Iterator[Any]:
    with _opened(browser, report_url) as opened:
        yield opened


@contextmanager
def _opened(browser: Any, report_url: str) -> Iterator[Any]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    requests: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(report_url)
    page.wait_for_selector(".citelab-case-row")
    yield page
    assert problems == []
    assert dialogs == []
    assert [url for url in requests if not url.startswith("data:")] == [report_url]
    page.close()


def _rows(page: Any) -> list[list[str]]:
    return [
        [cell.inner_text() for cell in row.query_selector_all("td")]
        for row in page.query_selector_all(".citelab-case-row")
    ]


def test_the_case_browser_filters_by_variant_dataset_metric_and_difference(page: Any) -> None:
    count = page.locator(".citelab-case-count")
    assert count.inner_text() == "12 of 12 turns match"
    page.select_option("select[name=variant]", label="shuffled")
    assert count.inner_text() == "6 of 12 turns match"
    assert {row[0] for row in _rows(page)} == {"shuffled"}
    page.select_option("select[name=dataset]", "library")
    assert {(row[0], row[2]) for row in _rows(page)} == {("shuffled", "library")}
    page.select_option("select[name=dataset]", "")
    page.select_option("select[name=variant]", "")
    page.select_option("select[name=metric]", "numbering_stability")
    assert {row[0] for row in _rows(page)} == {"shuffled"}
    assert all("numbering_stability" in row[6] for row in _rows(page))
    page.select_option("select[name=metric]", "")
    page.check("input[name=differs]")
    assert count.inner_text() == "6 of 12 turns match"
    assert {row[0] for row in _rows(page)} == {"shuffled"}
    page.fill("input[name=text]", "campus 1")
    assert [row[3] for row in _rows(page)] == ["campus-1"]


def test_opening_a_case_shows_its_answer_sources_gold_verdicts_and_rounds(page: Any) -> None:
    page.select_option("select[name=variant]", label="shuffled")
    page.locator(".citelab-case-row", has_text="campus-0").click()
    detail = page.locator(".citelab-case-detail")
    title = detail.locator("h3.citelab-case-title").inner_text()
    assert "shuffled · m · campus/campus-0 · turn 1" in title
    assert "numbers shuffled between rounds" in detail.inner_text()
    assert detail.locator(".citelab-case-q").inner_text() == "When are fees due at campus 0?"
    # The answer through the front end: the anchor's span highlighted, the sources listed.
    marks = detail.locator(".citelab-case-answer mark.citelab-cited")
    assert marks.first.inner_text() == "Tuition fees are due in May"
    assert detail.locator(".citelab-case-answer .citelab-source").count() == 2
    held = detail.locator(".citelab-case-sources tr.citelab-cited")
    assert held.count() == 2
    gold = detail.locator(".citelab-case-gold").inner_text()
    assert "Claim: Tuition fees are due in May" in gold
    assert FEES in gold
    verdict = detail.locator('.citelab-case-verdicts tr[data-metric="numbering_stability"]')
    assert "✘ missed" in verdict.inner_text()
    assert "✘" in verdict.locator(".citelab-case-reasons").inner_text()
    rounds = detail.locator(".citelab-case-round")
    assert rounds.count() == 2
    assert "Searched 1×" in rounds.nth(0).inner_text()
    assert "[1] Parking · [2] Fees" in rounds.nth(1).inner_text()
    assert TEXT in rounds.nth(1).locator("pre").inner_text()


def test_a_hostile_answer_is_rendered_inert(page: Any) -> None:
    page.fill("input[name=text]", "library 2")
    page.select_option("select[name=variant]", label="shuffled")
    page.locator(".citelab-case-row").first.click()
    answer = page.locator(".citelab-case-answer")
    assert "are due in May" in answer.inner_text()
    assert answer.locator("img").count() == 0
    assert page.locator("[onerror]").count() == 0
    hrefs = [a.get_attribute("href") or "" for a in answer.locator("a").all()]
    assert not [h for h in hrefs if h.lower().startswith("javascript")]
    # The raw text the model wrote is shown as text, tags and all.
    assert "onerror" in page.locator(".citelab-case-round pre").nth(1).inner_text()


def test_each_turn_opens_from_its_own_compressed_block(browser: Any, small_blocks_url: str) -> None:
    """Rows 11, 0, 5 and 6 live in blocks 2, 0, 1 and 1: each shows its own turn."""
    with _opened(browser, small_blocks_url) as page:
        rows = page.locator(".citelab-case-row")
        detail = page.locator(".citelab-case-detail")
        for index in (11, 0, 5, 6):
            row = rows.nth(index)
            case = row.locator("td").nth(3).inner_text()
            variant = row.locator("td").nth(0).inner_text()
            row.click()
            title = detail.locator("h3.citelab-case-title")
            title.wait_for()
            assert f"{variant} · m · " in title.inner_text()
            assert f"/{case} · turn 1" in title.inner_text()
            assert detail.locator(".citelab-case-error").count() == 0
            assert (
                "Tuition fees are due in May" in detail.locator(".citelab-case-gold").inner_text()
            )
            assert detail.get_attribute("aria-busy") is None


def test_a_long_list_draws_its_next_rows_when_scrolled_to_its_end(
    browser: Any, small_blocks_url: str
) -> None:
    with _opened(browser, small_blocks_url) as page:
        rows = page.locator(".citelab-case-row")
        count = page.locator(".citelab-case-count")
        assert rows.count() == 50
        assert count.inner_text() == "120 of 120 turns match (showing the first 50)"
        scroll = page.locator(".citelab-case-scroll")
        to_end = "box => { box.scrollTop = box.scrollHeight; }"
        scroll.evaluate(to_end)
        page.wait_for_function("document.querySelectorAll('.citelab-case-row').length === 100")
        assert count.inner_text() == "120 of 120 turns match (showing the first 100)"
        scroll.evaluate(to_end)
        page.wait_for_function("document.querySelectorAll('.citelab-case-row').length === 120")
        assert count.inner_text() == "120 of 120 turns match"
        assert page.locator(".citelab-case-more").is_hidden()
        rows.nth(99).click()  # a row drawn later opens like the first ones
        title = page.locator(".citelab-case-detail h3.citelab-case-title")
        assert f"/{rows.nth(99).locator('td').nth(3).inner_text()} · " in title.inner_text()


def test_the_plots_are_drawn_when_scrolled_to(page: Any) -> None:
    plots = page.locator("img[alt]")
    assert plots.count() == 3
    for index in range(3):
        plot = plots.nth(index)
        plot.scroll_into_view_if_needed()
        plot.evaluate("img => img.decode()")
        assert plot.evaluate("img => img.complete && img.naturalWidth > 0")
