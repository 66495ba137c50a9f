"""Finalize citations and build anchors on a long answer, beside a one-regex-pass floor.

The answer is synthetic Markdown: paragraphs and lists of cited sentences, a few inline code
spans and one fenced block, ``--markers`` marker groups (one in ten names two sources) over
``--sources`` numbered sources. Each figure is the best of ``--repeat`` runs (the machine may
be shared); ratios are to the floor, one ``re.finditer`` pass over the same text with a plain
``\\[\\d+\\]`` pattern, timed in the same run, so figures from different machines compare.

The headline is ``finalize_citations + build_anchors`` at conversation scope (half the
sources already carry the conversation's numbers, ``keep``), on clean text and with 1% of the
numbers dangling; turn scope (``keep=0``) is shown beside it. There is no target: the figures
a user notices are the pipeline's overhead per answer (``bench_pipeline.py``) and ``citelab
score`` (``bench_score.py``); this one shows where finalize's share of them goes. The stage
rows split that time, and the "unavoidable" rows show what its fixed parts cost on their own:
making the output objects (5,000 ``Marker`` tuples, the renumbered ``Source`` copies, the
``Anchor`` models) and one regex call per marker.

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
from itertools import repeat

from markdown_it import MarkdownIt
from pydantic import TypeAdapter

from citelab.contract import Anchor
from citelab.contract import _code as code_module
from citelab.contract import _markers as markers_module
from citelab.sources import Marker, Source, build_anchors, finalize_citations, parse_markers
from citelab.sources import _anchors as anchors_module
from citelab.sources import _finalize as finalize_module

_FLOOR = re.compile(r"\[\d+\]")
_EMPTY = re.compile("")
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


def best(run: Callable[[], object], repeat_count: int) -> float:
    """Best of ``repeat_count`` runs, garbage collection paused as ``timeit`` does."""
    times = []
    for _ in range(repeat_count):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return min(times)


def stages(
    text: str, sources: list[Source], keep: int, repeat_count: int
) -> list[tuple[str, float]]:
    """The parts of finalize + anchors, each timed on its own (private functions)."""
    by_number = finalize_module._by_number(sources)
    scan = markers_module.scan_markers(text)
    plan = finalize_module._Plan.make(scan, by_number, keep)
    rewrite = finalize_module._Rewrite(text, plan)
    finalized = rewrite.run(remove=True)
    final = finalize_citations(text, sources, keep=keep)
    markers = final.markers
    starts = [marker.start for marker in markers]
    lows = [0, *(marker.end for marker in markers[:-1])]
    rows = [anchor.model_dump() for anchor in build_anchors(final)]

    def reread() -> object:
        return rewrite.reads_back(finalized)

    rows_only: list[tuple[str, Callable[[], object]]] = [
        ("  number the sources (check, index)", lambda: finalize_module._by_number(sources)),
        ("  find code (code_ranges)", lambda: code_module.code_ranges(text)),
        ("  scan markers (incl. code)", lambda: markers_module.scan_markers(text)),
        (
            "  plan: renumber, rewrite table",
            lambda: finalize_module._Plan.make(scan, by_number, keep),
        ),
        (
            "  write text, markers, sources",
            lambda: finalize_module._Rewrite(text, plan).run(remove=True),
        ),
        (
            f"  re-read ({'needed' if rewrite.must_reread() else 'skipped: removals were local'})",
            reread,
        ),
        ("  anchors: claim spans", lambda: anchors_module._claims(final.text, lows, starts)),
        ("  anchors: Anchor models", lambda: [Anchor(**row) for row in rows]),
    ]
    return [(label, best(run, repeat_count)) for label, run in rows_only]


def unavoidable(
    text: str, sources: list[Source], keep: int, repeat_count: int
) -> list[tuple[str, float]]:
    """What the output objects and per-marker regex calls cost on their own."""
    final = finalize_citations(text, sources, keep=keep)
    markers = [tuple(marker) for marker in final.markers]
    rows = [anchor.model_dump() for anchor in build_anchors(final)]
    adapter = TypeAdapter(list[Anchor])
    kept = list(final.sources)
    numbers = list(range(1, len(kept) + 1))
    starts = [marker[0] for marker in markers]
    lows = [0, *(marker[1] for marker in markers[:-1])]
    runs: list[tuple[str, Callable[[], object]]] = [
        (f"  {len(markers):,} Marker tuples", lambda: list(map(Marker._make, markers))),
        (
            f"  {len(kept):,} Source copies (model_copy)",
            lambda: [
                s.model_copy(update={"number": n}) for s, n in zip(kept, numbers, strict=True)
            ],
        ),
        (f"  {len(rows):,} Anchor models", lambda: [Anchor(**row) for row in rows]),
        (
            f"  {len(rows):,} Anchor models (one list call)",
            lambda: adapter.validate_python(rows),
        ),
        (
            f"  {len(markers):,} empty regex matches",
            lambda: list(map(_EMPTY.match, repeat(final.text), lows, starts)),
        ),
    ]
    return [(label, best(run, repeat_count)) for label, run in runs]


def scenario(name: str, text: str, sources: list[Source], keep: int, repeat_count: int) -> float:
    def floor() -> None:
        for _ in _FLOOR.finditer(text):
            pass

    finalized = finalize_citations(text, sources, keep=keep)
    floor_time = best(floor, repeat_count)
    # What finding code with a real Markdown parser would cost (the scan it replaced).
    markdown = MarkdownIt("commonmark")
    markdown_time = best(lambda: markdown.parse(text), max(3, repeat_count // 3))

    def both() -> object:
        return build_anchors(finalize_citations(text, sources, keep=keep))

    both_time = best(both, repeat_count)
    anchors = build_anchors(finalized)
    print(
        f"\n{name} (keep={keep}): {len(text):,} chars, {len(parse_markers(text)):,} marker groups, "
        f"{len(finalized.sources):,} sources kept, {len(finalized.dangling):,} dangling, "
        f"{len(anchors):,} anchors"
    )
    rows = [
        ("floor: one re.finditer pass", floor_time),
        ("parse_markers", best(lambda: parse_markers(text), repeat_count)),
        ("(markdown-it-py parse alone, compared)", markdown_time),
        (
            "finalize_citations",
            best(lambda: finalize_citations(text, sources, keep=keep), repeat_count),
        ),
        ("build_anchors", best(lambda: build_anchors(finalized), repeat_count)),
        ("finalize_citations + build_anchors", both_time),
        ("stages:", None),
        *stages(text, sources, keep, repeat_count),
        ("unavoidable parts, alone:", None),
        *unavoidable(text, sources, keep, repeat_count),
    ]
    groups = len(parse_markers(text))
    for label, seconds in rows:
        if seconds is None:
            print(f"  {label}")
        else:
            print(
                f"  {label:<40} {seconds * 1e3:8.2f} ms  {seconds / floor_time:7.1f}x floor"
                f"  {seconds / groups * 1e6:6.2f} µs/marker"
            )
    return both_time / floor_time


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
    keep = args.sources // 2
    texts = [(name, text) for name, text in scenarios]
    conversation = [scenario(name, text, sources, keep, args.repeat) for name, text in texts]
    turn = [scenario(name, text, sources, 0, args.repeat) for name, text in texts[::2]]
    print(
        f"\nfinalize_citations + build_anchors at conversation scope (keep={keep}): "
        f"{conversation[0]:.1f}x the floor on clean text, {conversation[2]:.1f}x with "
        f"code and 1% dangling numbers; at turn scope {turn[0]:.1f}x and {turn[1]:.1f}x"
    )


if __name__ == "__main__":
    main()
