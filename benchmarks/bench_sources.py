"""Finalize citations and build anchors on a long answer, against a one-regex-pass floor.

The answer is synthetic Markdown: paragraphs and lists of cited sentences, a few inline code
spans and one fenced block, ``--markers`` marker groups (one in ten names two sources) over
``--sources`` numbered sources. Each figure is the best of ``--repeat`` runs; ratios are
to the floor, one ``re.finditer`` pass over the same text with a plain ``\\[\\d+\\]`` pattern,
timed in the same run.

    .venv/bin/python benchmarks/bench_sources.py            # 100,000 chars, 5,000 markers
    .venv/bin/python benchmarks/bench_sources.py --quick    # a tenth of that
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import time
from collections.abc import Callable

from markdown_it import MarkdownIt

from citelab.sources import Source, build_anchors, finalize_citations, parse_markers

_FLOOR = re.compile(r"\[\d+\]")
_WORDS = ["the", "program", "admits", "students", "each", "autumn", "and", "fee", "covers"]
_WORDS += ["tuition", "while", "housing", "is", "separate", "applicants", "need", "a", "degree"]


def answer(
    chars: int, markers: int, sources: int, *, dangling: float, code: bool, seed: int
) -> str:
    """A Markdown answer of about ``chars`` characters holding ``markers`` marker groups."""
    rng = random.Random(seed)
    sentence_chars = chars // markers
    blocks: list[str] = []
    lines: list[str] = []
    for index in range(markers):
        words = " ".join(rng.choice(_WORDS) for _ in range(max(1, sentence_chars // 7)))
        if code and index % 97 == 0:
            words += " with `setting [3]`"
        lines.append(f"{words.capitalize()} {_group(rng, sources, dangling)}.")
        if len(lines) == 8:
            blocks.append(_block(rng, lines))
            lines = []
    if lines:
        blocks.append(_block(rng, lines))
    if code:
        blocks.insert(len(blocks) // 2, "```python\nvalues = table[1][2]  # [4]\n```")
    return "\n\n".join(blocks)


def _group(rng: random.Random, sources: int, dangling: float) -> str:
    def number() -> int:
        return sources + rng.randint(1, 50) if rng.random() < dangling else rng.randint(1, sources)

    return f"[{number()}, {number()}]" if rng.random() < 0.1 else f"[{number()}]"


def _block(rng: random.Random, lines: list[str]) -> str:
    if rng.random() < 0.3:
        return "\n".join(f"- {line}" for line in lines)
    return " ".join(lines)


def best(run: Callable[[], object], repeat: int) -> float:
    """Best of ``repeat`` runs, garbage collection paused as ``timeit`` does."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return min(times)


def scenario(name: str, text: str, sources: list[Source], repeat: int) -> None:
    def floor() -> None:
        for _ in _FLOOR.finditer(text):
            pass

    finalized = finalize_citations(text, sources)
    floor_time = best(floor, repeat)
    parse_time = best(lambda: parse_markers(text), repeat)
    # What finding code with a real Markdown parser would cost (the scan it replaced).
    markdown = MarkdownIt("commonmark")
    markdown_time = best(lambda: markdown.parse(text), max(3, repeat // 3))
    finalize_time = best(lambda: finalize_citations(text, sources), repeat)
    anchors_time = best(lambda: build_anchors(finalized), repeat)
    both_time = best(lambda: build_anchors(finalize_citations(text, sources)), repeat)
    anchors = build_anchors(finalized)
    print(
        f"\n{name}: {len(text):,} chars, {len(parse_markers(text)):,} marker groups, "
        f"{len(finalized.sources):,} sources kept, {len(finalized.dangling):,} dangling, "
        f"{len(anchors):,} anchors"
    )
    rows = [
        ("floor: one re.finditer pass", floor_time),
        ("parse_markers", parse_time),
        ("(markdown-it-py parse alone, compared)", markdown_time),
        ("finalize_citations", finalize_time),
        ("build_anchors", anchors_time),
        ("finalize_citations + build_anchors", both_time),
    ]
    for label, seconds in rows:
        print(f"  {label:<38} {seconds * 1e3:8.2f} ms  {seconds / floor_time:7.1f}x floor")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the default size")
    parser.add_argument("--chars", type=int, default=100_000)
    parser.add_argument("--markers", type=int, default=5_000)
    parser.add_argument("--sources", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    if args.quick:
        args.chars, args.markers, args.sources, args.repeat = 10_000, 500, 100, 3
    sources = [
        Source(number=n, entity_type="node", entity_id=str(n), title=f"Source {n}")
        for n in range(1, args.sources + 1)
    ]
    size = (args.chars, args.markers, args.sources)
    scenarios = [
        ("prose and lists, every marker valid", answer(*size, dangling=0, code=False, seed=1)),
        ("with inline code and a fenced block", answer(*size, dangling=0, code=True, seed=2)),
        ("with code, 1% dangling numbers", answer(*size, dangling=0.01, code=True, seed=3)),
    ]
    for name, text in scenarios:
        scenario(name, text, sources, args.repeat)


if __name__ == "__main__":
    main()
