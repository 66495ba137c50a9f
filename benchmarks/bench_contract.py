"""How fast the contract validates and renders, against json.loads of the same message.

    .venv/bin/python benchmarks/bench_contract.py [--quick]

json.loads is the floor: no validator can read a message faster than parsing its JSON.
Figures are the best of several runs, measured side by side in one process.
"""

from __future__ import annotations

import argparse
import json
import random
import timeit
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt

from citelab.contract import (
    AnswerMessage,
    build_message,
    render_answer_html,
    validate_message,
)

WORDS = [
    "library",
    "room",
    "study",
    "booking",
    "campus",
    "evening",
    "staff",
    "card",
    "hours",
    "exam",
    "week",
    "café",
]


def big_message(sources: int, anchors: int, seed: int = 7) -> AnswerMessage:
    """``anchors`` cited claims over ``sources`` sources, with some non-ASCII text."""
    rng = random.Random(seed)
    pieces, spans, offset = [], [], 0
    for index in range(anchors):
        claim = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9)))
        claim = claim.capitalize() + (" ☕" if index % 7 == 0 else "")
        number = index % sources + 1
        spans.append((offset, offset + len(claim), number))
        piece = f"{claim} [{number}]. "
        pieces.append(piece)
        offset += len(piece)
    text = "".join(pieces)
    source_items = [
        {"entity_type": "node", "entity_id": str(n), "title": f"Source {n}"}
        for n in range(1, sources + 1)
    ]
    anchor_items = [
        {
            "sourceUri": f"entity:node/{number}",
            "citedText": text[start:end],
            "startIndex": start,
            "endIndex": end,
        }
        for start, end, number in spans
    ]
    return build_message(text, source_items, anchors=anchor_items)


def markdown_answer(characters: int, seed: int = 11) -> str:
    """A Markdown answer of about ``characters`` characters: headings, lists, a table, code."""
    rng = random.Random(seed)
    blocks: list[str] = []
    size = 0
    while size < characters:
        kind = len(blocks) % 5
        sentence = " ".join(rng.choice(WORDS) for _ in range(12)).capitalize()
        if kind == 0:
            block = f"## {sentence[:30]}\n\n{sentence} [1]. {sentence} [2][3]."
        elif kind == 1:
            block = "\n".join(f"- {sentence[: 20 + i]} [{i % 3 + 1}]" for i in range(5))
        elif kind == 2:
            block = "| a | b |\n|:-|-:|\n" + "\n".join(
                f"| {i} | {sentence[:15]} |" for i in range(3)
            )
        elif kind == 3:
            block = f"```\ncode [1] {sentence}\n```"
        else:
            block = f"{sentence}, **bold** and `code [2]` [1, 2]. <b>raw</b> [x](https://a.example)"
        blocks.append(block)
        size += len(block) + 2
    return "\n\n".join(blocks)[:characters]


def best(function: Callable[[], Any], number: int, repeat: int = 5) -> float:
    """Best time per call, in seconds."""
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number


def report(name: str, seconds: float, floor: float) -> None:
    print(f"  {name:<44} {seconds * 1e3:9.2f} ms   {seconds / floor:7.1f}× json.loads")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    sources, anchors, characters = (100, 500, 2_500) if args.quick else (1_000, 5_000, 25_000)

    message = big_message(sources, anchors)
    wire_json = message.to_json()
    wire = json.loads(wire_json)
    assert validate_message(wire_json) == []
    print(
        f"validate_message: {sources:,} sources, {anchors:,} anchors, "
        f"{len(message.text):,}-character text, {len(wire_json):,} bytes of JSON"
    )
    floor = best(lambda: json.loads(wire_json), number=5)
    report("json.loads(json text)  [floor]", floor, floor)
    report("validate_message(json text)", best(lambda: validate_message(wire_json), 3), floor)
    report("validate_message(dict)", best(lambda: validate_message(wire), 3), floor)
    report("validate_message(AnswerMessage)", best(lambda: validate_message(message), 3), floor)
    report(
        "AnswerMessage.model_validate_json (pydantic)",
        best(lambda: AnswerMessage.model_validate_json(wire_json), 3),
        floor,
    )

    answer = build_message(markdown_answer(characters), [{"uri": f"u{i}"} for i in range(3)])
    answer_json = answer.to_json()
    assert "<b>" not in render_answer_html(answer)
    print(f"render_answer_html: {len(answer.text):,}-character Markdown answer")
    floor = best(lambda: json.loads(answer_json), number=50)
    report("json.loads(json text)  [floor]", floor, floor)
    plain = MarkdownIt("js-default")
    markdown_only = best(lambda: plain.render(answer.text), 5)
    report("MarkdownIt('js-default').render alone", markdown_only, floor)
    report("render_answer_html(message)", best(lambda: render_answer_html(answer), 5), floor)


if __name__ == "__main__":
    main()
