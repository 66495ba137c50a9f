"""citelab builds ALCE's prompts character for character (against the rules written out in
``_alce_reference``), on prompt and eval files written here in ALCE's shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.evals.dataset import _alce_reference as reference

from citelab import InvalidInput
from citelab.evals.dataset import (
    ALCE_SYSTEM_MESSAGE,
    AlcePromptSettings,
    alce_chat_messages,
    alce_clean_output,
    alce_prompts,
    load_alce_eval,
    load_alce_prompt_file,
)


def _doc(n: int, *, summary: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"title": f"Title {n}", "text": f"Passage {n} says {n * 7}.", "id": n}
    if summary is not None:
        doc["summary"] = summary
    return doc


PROMPT: dict[str, Any] = {
    "instruction": "Instruction: answer {Q}-free, cite with [1][2].",
    "demo_sep": "\n\n\n",
    "demo_prompt": "{INST}\n\nQuestion: {Q}\n\n{D}\nAnswer: {A}",
    "doc_prompt": "Document [{ID}](Title: {T}): {P}\n",
    "demos": [
        {"question": f"Demo question {k}?", "answer": f"Demo answer {k} [1].", "docs": docs}
        for k, docs in enumerate(
            [
                [_doc(1, summary="S1"), _doc(2, summary="Irrelevant."), _doc(3, summary="S3")],
                [_doc(4), _doc(5)],
                [_doc(6, summary="S6"), _doc(7, summary="S7"), _doc(8, summary="S8")],
                [_doc(9, summary="irrelevant"), _doc(10, summary="S10")],
                [_doc(11, summary="S11")],
            ]
        )
    ]
    + [
        {
            "question": "A listed demo?",
            "answer": ["Check: Document [1]", "Output: Listed [1].", "End."],
            "docs": [{"title": "A {P} title", "text": "text with {A} inside"}],
        }
    ],
}

ITEMS: list[dict[str, Any]] = [
    {
        "question": f"Question {k} with {{ID}}?" if k == 2 else f"Question {k}?",
        "answer": f"Gold {k}",
        "qa_pairs": [{"question": "q", "short_answers": [f"s{k}"]}],
        "docs": [_doc(100 + k * 10 + j, summary=f"sum {j}" if j % 3 else None) for j in range(k)],
    }
    for k in range(7)
]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    prompt = tmp_path / "asqa_default.json"
    prompt.write_text(json.dumps(PROMPT), encoding="utf-8")
    data = tmp_path / "asqa_eval_gtr_top100.json"
    data.write_text(json.dumps(ITEMS), encoding="utf-8")
    return prompt, data


def _built(files: tuple[Path, Path], **options: Any) -> list[tuple[int, str]]:
    prompt, data = files
    built = alce_prompts(
        load_alce_prompt_file(prompt), load_alce_eval(data), AlcePromptSettings(**options)
    )
    return [(index, text) for index, _, text in built]


@pytest.mark.parametrize("seed", [0, 1, 42, 2024])
@pytest.mark.parametrize(("shot", "ndoc"), [(0, 0), (1, 3), (2, 5), (3, 1), (6, 2), (2, 0)])
def test_prompts_equal_alces_rules_for_seeds_shots_and_ndocs(
    files: tuple[Path, Path], seed: int, shot: int, ndoc: int
) -> None:
    expected = reference.prompts(PROMPT, ITEMS, shot=shot, ndoc=ndoc, seed=seed)
    assert _built(files, shot=shot, ndoc=ndoc, seed=seed) == expected


@pytest.mark.parametrize(
    "options",
    [
        {"no_doc_in_demo": True},
        {"ndoc_in_demo": 1},
        {"ndoc_in_demo": 0},
        {"quick_test": 3},
        {"use_shorter": "summary"},
        {"use_shorter": "summary", "ndoc_in_demo": 2, "quick_test": 4},
    ],
)
def test_demo_options_equal_alces_rules(files: tuple[Path, Path], options: dict[str, Any]) -> None:
    expected = reference.prompts(PROMPT, ITEMS, shot=2, ndoc=3, seed=42, **options)
    assert _built(files, shot=2, ndoc=3, seed=42, **options) == expected


def test_seeds_draw_different_demos(files: tuple[Path, Path]) -> None:
    heads = {_built(files, shot=2, ndoc=1, seed=seed)[0][1] for seed in range(6)}
    assert len(heads) > 2


def test_the_shown_docs_are_the_prompts_docs_and_other_fields_are_kept(
    files: tuple[Path, Path],
) -> None:
    prompt, data = files
    built = alce_prompts(
        load_alce_prompt_file(prompt), load_alce_eval(data), AlcePromptSettings(shot=1, ndoc=2)
    )
    index, item, text = built[5]
    assert index == 5
    assert [doc.title for doc in item.docs] == ["Title 150", "Title 151"]
    assert "Document [2](Title: Title 151)" in text
    assert "Title 152" not in text
    assert item.model_dump()["qa_pairs"] == ITEMS[5]["qa_pairs"]


def test_chat_conversion_and_output_cleaning() -> None:
    assert alce_chat_messages("P") == [
        {"role": "system", "content": ALCE_SYSTEM_MESSAGE},
        {"role": "user", "content": "P"},
    ]
    assert ALCE_SYSTEM_MESSAGE == reference.SYSTEM
    assert alce_clean_output("An answer [1]. End.<|im_end|>  \n") == "An answer [1]. "


def test_bad_files_name_the_file_and_the_field(tmp_path: Path, files: tuple[Path, Path]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**PROMPT, "doc_prompt": None}), encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"bad\.json: field doc_prompt"):
        load_alce_prompt_file(bad)
    bad.write_text(json.dumps([{"question": "q", "docs": [{"title": "t"}]}]), encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"bad\.json: item 0: field docs\.0\.text"):
        load_alce_eval(bad)
    with pytest.raises(InvalidInput, match="only 6 demos"):
        _built(files, shot=7, ndoc=1)
