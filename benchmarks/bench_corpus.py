"""How fast a folder of Markdown notes becomes a corpus, and its search index after it.

    .venv/bin/python benchmarks/bench_corpus.py [--files 2000] [--repeat 3]

Writes ``--files`` generated Markdown notes (front matter on every third, a heading, a few
paragraphs of invented words; deterministic) to a temporary folder, then measures, side by
side in one process:

* ``read``: reading every file's bytes (the floor: no import can be faster than reading);
* ``import``: ``import_folder`` + ``write_corpus`` (``citelab corpus import``'s work);
* ``cached``: ``imported_corpus`` a second time (fingerprint only: what ``--corpus DIR`` pays
  when nothing changed);
* ``index``: loading the written JSONL and building its BM25 index (``SearchIndex.open``).

Figures are the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from citelab.corpus import import_folder, imported_corpus, load_corpus, write_corpus
from citelab.retrieval import SearchIndex

SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "re",
    "su",
    "ta",
    "ve",
    "no",
    "pi",
    "da",
    "fe",
    "gu",
    "ri",
    "so",
    "la",
    "me",
]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4)))


def _paragraph(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(3, 6)):
        words = [_word(rng) for _ in range(rng.randint(6, 14))]
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences)


def write_notes(folder: Path, files: int, seed: int = 0) -> int:
    """Write ``files`` Markdown notes under ``folder`` (20 per subfolder); returns bytes."""
    rng = random.Random(seed)
    total = 0
    for number in range(files):
        sub = folder / f"topic-{number // 20:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        title = " ".join(_word(rng) for _ in range(3)).title()
        head = f"---\ntitle: {title}\nlang: en\n---\n" if number % 3 == 0 else ""
        body = "\n\n".join(_paragraph(rng) for _ in range(rng.randint(2, 5)))
        text = f"{head}# {title}\n\n{body}\n"
        (sub / f"note-{number:05d}.md").write_text(text, encoding="utf-8")
        total += len(text.encode())
    return total


def best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="citelab-bench-corpus-"))
    try:
        notes = work / "notes"
        size = write_notes(notes, args.files)
        out = work / "corpus.jsonl"
        paths = sorted(notes.rglob("*.md"))

        def read() -> None:
            for path in paths:
                path.read_bytes()

        def run_import() -> None:
            write_corpus(import_folder(notes).documents, out)

        cache = work / "cache"
        imported_corpus(notes, cache=cache)  # the first import fills the cache

        def cached() -> None:
            imported_corpus(notes, cache=cache)

        def index() -> None:
            SearchIndex.open(load_corpus(out), directory=work / f"index-{time.perf_counter_ns()}")

        t_read = best(read, args.repeat)
        t_import = best(run_import, args.repeat)
        t_cached = best(cached, args.repeat)
        t_index = best(index, args.repeat)
        files = args.files
        print(f"{files} Markdown files, {size / 1e6:.1f} MB, best of {args.repeat}")
        print(f"  read bytes     {t_read * 1000:8.1f} ms  {files / t_read:9.0f} files/s  (floor)")
        print(
            f"  corpus import  {t_import * 1000:8.1f} ms  {files / t_import:9.0f} files/s  "
            f"{t_import / t_read:6.1f}x read"
        )
        print(
            f"  cached folder  {t_cached * 1000:8.1f} ms  {files / t_cached:9.0f} files/s  "
            f"{t_cached / t_read:6.1f}x read"
        )
        print(
            f"  index build    {t_index * 1000:8.1f} ms  {files / t_index:9.0f} docs/s   "
            f"{t_index / t_import:6.1f}x import"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
