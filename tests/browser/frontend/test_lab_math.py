"""JupyterLab typesets ``$…$`` in HTML outputs as math: TemplateLab's columns (templates
holding ``$guidance``, answers quoting prices) and the chat's static copy are left as written
(#24). A control output in the same notebook shows the typesetter is on. Uses the private
JupyterLab of ``tests/browser/_lab.py``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browser._lab import Lab, notebook_json

from .test_lab_chat import Notebook

CELLS = [
    "from IPython.display import HTML\n"
    "HTML('<p class=\"control\">Math here: $x^2 + y$ and $z$.</p>')",
    "from citelab import TemplateLab\n"
    "lab = TemplateLab(['default', 'Cite as [n].\\n$guidance\\nSources:\\n$sources'],\n"
    "                  'How much is the semester fee?')\n"
    "await lab.run()\n"
    "display(lab)\n"
    "HTML('<p>After it: $a$.</p>')  # typeset after the lab's output",
]


@pytest.fixture
def notebook(browser: Any, lab: Lab) -> Iterator[Notebook]:
    (lab.root / "math.ipynb").write_text(notebook_json(CELLS), encoding="utf-8")
    opened = Notebook(browser, lab, "math.ipynb")
    yield opened
    opened.close()


def test_template_lab_is_not_typeset_as_math(notebook: Notebook) -> None:
    cells = notebook.cells
    notebook.run_cell(0)
    # The typesetter works here: the control's $…$ becomes math.
    cells.nth(0).locator("mjx-container").first.wait_for()
    notebook.run_cell(1)
    view = cells.nth(1).locator(".citelab-lab-view")
    view.wait_for()
    # The output after the lab's is typeset: the lab's own output has been looked at.
    cells.nth(1).locator(".jp-OutputArea-child").nth(1).locator("mjx-container").wait_for()
    header = view.locator("h4").nth(1)
    assert header.inner_text() == "Cite as [n]. $guidance Sources: $sources"
    assert view.locator("mjx-container").count() == 0
