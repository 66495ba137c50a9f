"""The labelling widget in a real JupyterLab, driven in Debian's chromium through Playwright.

A person labels pairs with the keyboard, takes one label back, the kernel is restarted, and
the cell run again resumes at the first pair not labelled: the labels file on disk holds every
decision, in order, each once.
"""

from __future__ import annotations

import json
from typing import Any

from ._lab import Lab, notebook_json
from .test_jupyterlab import LabPage

CLAIMS = [
    "Tuition fees are due in May.",
    "Late payment costs 50 euros.",
    "Tuition fees are due in June.",
    "The library opens at 8 am.",
]
PASSAGE = "Tuition fees are due in May. Late payment costs 50 euros. The library is closed."

SETUP = f"""\
from citelab import Labeller
from citelab.evals.labels import LabelItem, LabelPassage

items = [
    LabelItem(
        id=f"pair-{{i}}", claim=claim,
        passages=(LabelPassage(text={PASSAGE!r}, title="Fees", number=1),),
    )
    for i, claim in enumerate({CLAIMS!r})
]
labeller = Labeller(items, "labels.jsonl", sample=None, seed=0)
order = [item.claim for item in labeller.queue.items]
print("ORDER:" + "|".join(order))
labeller"""


def saved(lab: Lab) -> list[dict[str, Any]]:
    path = lab.root / "labels.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_labels_by_keyboard_are_saved_at_once_and_a_restarted_kernel_resumes(
    browser: Any, lab: Lab
) -> None:
    (lab.root / "label.ipynb").write_text(notebook_json([SETUP]), encoding="utf-8")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tab = LabPage(browser, lab, "label.ipynb", PlaywrightTimeout, workspace="label")
    page, cell = tab.page, tab.cells.nth(0)
    tab.run_cell(0)
    order = tab.printed(0, "ORDER:").split("|")
    assert sorted(order) == sorted(CLAIMS)
    widget = cell.locator(".citelab-labeller")
    widget.locator(".citelab-labeller-claim").wait_for()

    def expect_claim(text: str) -> None:
        # Queried afresh each time: the view draws each pair anew.
        try:
            page.wait_for_function(
                "([cell, text]) => [...cell.querySelectorAll('.citelab-labeller-claim')]"
                ".some((el) => el.textContent === text && el.isConnected)",
                arg=[cell.element_handle(), text],
            )
        except PlaywrightTimeout as exc:
            shown = cell.locator(".citelab-labeller").all_inner_texts()
            problem = f"wanted claim {text!r}; saved {saved(lab)}; shown {shown}"
            raise AssertionError(problem) from exc

    expect_claim(order[0])
    # The cited span is marked in the passage: the sentence the claim rests on, when there.
    marks = widget.locator(".citelab-labeller-passage mark")
    if order[0] in PASSAGE:
        assert marks.first.inner_text() == order[0]

    widget.focus()
    page.keyboard.press("1")  # supported
    expect_claim(order[1])
    assert [line["label"] for line in saved(lab)] == ["supported"], "saved before the next pair"
    page.keyboard.press("n")  # not supported
    expect_claim(order[2])
    page.keyboard.press("u")  # undo: the second pair is shown again
    expect_claim(order[1])
    assert [line["label"] for line in saved(lab)] == ["supported"]
    page.keyboard.press("2")  # partly
    expect_claim(order[2])
    lines = saved(lab)
    assert [(line["claim"], line["label"]) for line in lines] == [
        (order[0], "supported"),
        (order[1], "partially_supported"),
    ]
    assert lines[0]["evidence"] == [PASSAGE]

    # JupyterLab's own Restart Kernel…, then the cell again: the labeller resumes.
    page.locator(".lm-MenuBar-itemLabel:text-is('Kernel')").click()
    page.locator(".lm-Menu-itemLabel:text-is('Restart Kernel…')").click()
    page.locator(".jp-Dialog button.jp-mod-accept").click()
    page.get_by_role("button", name="Python 3 (ipykernel) | Idle", exact=True).wait_for()
    tab.run_cell(0)
    fresh = cell.locator(".citelab-labeller")
    page.wait_for_function(
        "(cell) => cell.querySelectorAll('.citelab-labeller').length === 1",
        arg=cell.element_handle(),
    )
    expect_claim(order[2])
    assert "Resumed: 2 decisions" in fresh.inner_text()
    fresh.focus()
    page.keyboard.press("s")  # skip
    expect_claim(order[3])
    page.keyboard.press("3")
    fresh.locator(".citelab-labeller-done").wait_for(state="visible")
    assert [line["label"] for line in saved(lab)] == [
        "supported",
        "partially_supported",
        "skip",
        "not_supported",
    ]
    assert len({line["id"] for line in saved(lab)}) == 4, "no pair labelled twice"
    tab.close()
