"""TemplateLab: one question under several contract templates, side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from citelab import ConfigError, InvalidInput, TemplateLab
from citelab._paths import CACHE_ENV
from citelab.models import ScriptedModel
from citelab.widget._lab import prompt_diff_html

from .conftest import typeset_text

QUESTION = "How much is the semester fee?"
PLAIN = "Cite as [n].\n$guidance\nSources:\n$sources"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))


@pytest.mark.anyio
async def test_each_template_answers_and_the_prompts_differ_only_by_it() -> None:
    lab = TemplateLab(["default", "terse", PLAIN], QUESTION)
    frame = await lab.run()
    assert list(frame["template"]) == [
        "default",
        "terse",
        "Cite as [n]. $guidance Sources: $sources",
    ]
    assert all("312 euros" in text for text in frame["answer"])
    assert (frame["supported"] == 1.0).all()
    assert (frame["cited"] > 0).all()
    prompts = [r.prompt for r in lab.results]
    assert "## How to cite" in prompts[0]
    assert "## How to cite" not in prompts[1]
    assert prompts[0].split("\n")[0] == prompts[1].split("\n")[0]  # the agent's own prompt
    shown = lab._repr_html_()
    assert shown.count("<section>") == 3
    assert '<span class="del">-## How to cite</span>' in shown
    assert "312 euros" in shown


@pytest.mark.anyio
async def test_several_questions_and_the_summary() -> None:
    lab = TemplateLab(
        ["default", "terse"], [QUESTION, "When do Data Science MSc applications close?"]
    )
    frame = await lab.run()
    assert len(frame) == 4
    summary = lab.summary()
    assert list(summary.index) == ["default", "terse"]
    assert summary.loc["default", "statements"] >= 1


@pytest.mark.anyio
async def test_hostile_model_output_and_metrics_of_a_bad_answer() -> None:
    hostile = '<img src=x onerror="alert(1)"> The fee is 999 euros [1]. Unbacked claim [7].'
    model = ScriptedModel([{"text": hostile}], name="hostile")
    lab = TemplateLab(["default"], QUESTION, model=model)
    frame = await lab.run()
    shown = lab._repr_html_()
    assert "<img" not in shown  # shown as text, never as a tag
    assert "&lt;img" in shown
    row = frame.iloc[0]
    assert row["dangling"] == 1.0
    assert row["supported"] < 1.0


def test_the_diff_is_escaped_and_says_when_nothing_changed() -> None:
    assert prompt_diff_html("a\nb", "a\nb") == "(the same prompt)"
    diff = prompt_diff_html("a\n<b>", "a\n<script>")
    assert '<span class="del">-&lt;b&gt;</span>' in diff
    assert '<span class="add">+&lt;script&gt;</span>' in diff


def test_bad_templates_agents_and_questions_are_named() -> None:
    with pytest.raises(ConfigError, match=r"templates\[1\]: unknown contract template 'nope'"):
        TemplateLab(["default", "nope"], QUESTION)
    with pytest.raises(ConfigError, match="agent 'ghost' not found"):
        TemplateLab(["default"], QUESTION, agent="ghost")
    with pytest.raises(InvalidInput, match="non-empty question"):
        TemplateLab(["default"], ["  "])
    assert "not run yet" in TemplateLab(["default"], QUESTION)._repr_html_()


@pytest.mark.anyio
async def test_no_template_text_is_typeset_as_math_in_jupyterlab() -> None:
    # #24: the header "Cite as [n]. $guidance Sources: $sources" showed as math in
    # JupyterLab, which typesets `$…$` in HTML outputs (answers may hold dollars too).
    lab = TemplateLab(["default", PLAIN], QUESTION)
    await lab.run()
    shown = lab._repr_html_()
    assert "$guidance Sources: $sources" in shown  # shown as written …
    assert [text for text in typeset_text(shown) if text.strip()] == []  # … never as math


def test_the_math_finder_of_these_tests_sees_math() -> None:
    assert typeset_text("<p>$a$ and <code>$b$</code></p>") == ["$a$ and "]
    assert typeset_text('<div class="x mathjax_ignore"><p>$a$</p></div><p>$c$</p>') == ["$c$"]


@pytest.mark.anyio
async def test_identical_answers_under_every_template_are_said_and_explained() -> None:
    # The offline extractive model does not read the prompt: every template answers alike,
    # and the lab says so and why, with how to plug in a real model (#32).
    lab = TemplateLab(["default", "terse"], QUESTION)
    assert lab.note() == ""  # not run yet
    await lab.run()
    note = lab.note()
    assert note.startswith("Every template gave the same answers: the model does not read")
    assert 'model="openai:<model>"' in note
    assert "Every template gave the same answers" in lab._repr_html_()
    assert TemplateLab(["default"], QUESTION).note() == ""
