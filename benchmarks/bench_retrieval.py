"""Retrieval speed: rag_search on a large synthetic corpus, and bm25s against rank-bm25.

    .venv/bin/python benchmarks/bench_retrieval.py            # 1,000,000 and 100,000 chunks
    .venv/bin/python benchmarks/bench_retrieval.py --quick    # 50,000 and 10,000 chunks

Part 1 builds the persisted index of a synthetic corpus (``citelab corpus synth``), reopens
it, and times ``rag_search`` calls (keyword queries of 2 to 5 words drawn from random chunks,
anonymous reader, 10 results). Part 2 times the same queries side by side, in one run, on a
smaller corpus: ``rank_bm25.BM25Okapi`` (top 10 of ``get_scores``) against raw ``bm25s`` on
the very same token lists, and against the whole ``rag_search`` tool.

Every timing is printed as wall-clock time and as CPU time of this process (or thread, for
single queries): on a shared machine the CPU figures are the stable ones.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
from rank_bm25 import BM25Okapi

from citelab.corpus import Reader, load_corpus, synth_documents
from citelab.retrieval import RagSearch, SearchIndex, Tokenizer

READER = Reader.anonymous()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--chunks", type=int, help="chunks in part 1 (default 1,000,000)")
    parser.add_argument("--compare-chunks", type=int, help="chunks in part 2 (default 100,000)")
    parser.add_argument("--queries", type=int, default=50, help="queries per measurement")
    parser.add_argument("--workdir", type=Path, help="where corpora go (default: a temp dir)")
    args = parser.parse_args()
    large = args.chunks or (50_000 if args.quick else 1_000_000)
    small = args.compare_chunks or (10_000 if args.quick else 100_000)
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as scratch:
        workdir = args.workdir or Path(scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        part_one(workdir, large, args.queries)
        part_two(workdir, small, args.queries)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory: {peak:,.0f} MiB")


def part_one(workdir: Path, chunks: int, queries: int) -> None:
    print(f"== rag_search on {chunks:,} synthetic chunks ==")
    path = workdir / f"synth-{chunks}.jsonl"
    synth = timed(lambda: write_corpus(path, chunks, seed=1))
    entities, written = synth.result
    size = path.stat().st_size / 2**20
    print(f"synth:      {entities:,} entities, {written:,} chunks, {size:,.0f} MiB in {synth}")
    loading = timed(lambda: load_corpus(path))
    corpus = loading.result
    print(f"load:       {loading} (JSONL parse and validation)")
    print(f"hash:       {timed(corpus.content_hash)} (corpus content hash)")
    building = timed(lambda: SearchIndex.build(corpus))
    index = building.result
    print(f"build:      {building} ({len(index):,} chunks, {index.vocabulary_size:,} terms)")
    directory = workdir / f"synth-{chunks}.jsonl.index"
    print(f"save:       {timed(lambda: index.save(directory))}")
    reopening = timed(lambda: SearchIndex.open(corpus, directory=directory))
    reopened = reopening.result
    assert reopened.origin == "loaded", reopened.rebuild_reason
    print(f"reopen:     {reopening} (verify checksums and load; no rebuild)")
    tool = RagSearch(reopened, default_max_results=10)
    texts = sample_queries(reopened, queries, seed=2)
    latencies = measure(lambda q: tool.run({"query": q}, READER), texts)
    print(f"rag_search: {latencies.describe()}")


def part_two(workdir: Path, chunks: int, queries: int) -> None:
    print(f"\n== side by side on {chunks:,} chunks, top 10, {queries} queries ==")
    path = workdir / f"synth-{chunks}.jsonl"
    write_corpus(path, chunks, seed=3)
    index = SearchIndex.build(load_corpus(path))
    tokenizer = Tokenizer()
    tokens = [
        tokenizer.terms(index.chunk(i).text, index.chunk(i).langcode) for i in range(len(index))
    ]
    okapi = timed(lambda: BM25Okapi(tokens))
    raw = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    raw_build = timed(lambda: raw.index(tokens, show_progress=False))
    print(f"build:      rank-bm25 {okapi}, bm25s {raw_build}")
    texts = sample_queries(index, queries, seed=4)
    query_tokens = [tokenizer.terms(q, None) for q in texts]
    tool = RagSearch(index, default_max_results=10)
    timings = {
        "rank-bm25": measure(lambda t: top_ten(okapi.result.get_scores(t)), query_tokens),
        "bm25s": measure(lambda t: raw.retrieve([t], k=10, show_progress=False), query_tokens),
        "rag_search": measure(lambda q: tool.run({"query": q}, READER), texts),
    }
    for name, latencies in timings.items():
        print(f"{name + ':':11} {latencies.describe()}")
    for name in ("bm25s", "rag_search"):
        wall = statistics.median(timings["rank-bm25"].wall) / statistics.median(timings[name].wall)
        cpu = statistics.median(timings["rank-bm25"].cpu) / statistics.median(timings[name].cpu)
        print(f"ratio:      rank-bm25 / {name} = {wall:.1f}x wall, {cpu:.1f}x CPU (median query)")


def write_corpus(path: Path, chunks: int, seed: int) -> tuple[int, int]:
    """Write synthetic documents until ``chunks`` paragraphs (= chunks) are reached."""
    written = entities = 0
    with path.open("w", encoding="utf-8") as handle:
        for document in synth_documents(chunks, seed=seed):
            handle.write(json.dumps(document, ensure_ascii=False) + "\n")
            entities += 1
            written += sum(
                t["content"].count("\n\n") + 1 for t in document["translations"].values()
            )
            if written >= chunks:
                break
    return entities, written


def sample_queries(index: SearchIndex, count: int, seed: int) -> list[str]:
    """Keyword queries of 2 to 5 words taken from random chunks."""
    rng = random.Random(seed)
    queries = []
    for _ in range(count):
        words = index.chunk(rng.randrange(len(index))).text.rstrip(".").split()
        size = min(len(words), rng.randint(2, 5))
        start = rng.randrange(len(words) - size + 1)
        queries.append(" ".join(words[start : start + size]))
    return queries


def measure(call: Callable[[Any], object], inputs: list[Any]) -> Latencies:
    call(inputs[0])  # warm-up
    latencies = Latencies([], [])
    for item in inputs:
        started, cpu_started = time.perf_counter(), time.thread_time()
        call(item)
        latencies.wall.append(time.perf_counter() - started)
        latencies.cpu.append(time.thread_time() - cpu_started)
    return latencies


def top_ten(scores: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    best = np.argpartition(-scores, 10)[:10]
    return best[np.argsort(-scores[best])]


@dataclass
class Latencies:
    """Per-call wall-clock and CPU seconds (CPU time is immune to other load on the machine)."""

    wall: list[float]
    cpu: list[float]

    def describe(self) -> str:
        return (
            f"median {ms(self.wall, 50)}, p95 {ms(self.wall, 95)} per query "
            f"(CPU median {ms(self.cpu, 50)})"
        )


@dataclass
class Timed:
    result: Any
    wall: float
    cpu: float

    def __str__(self) -> str:
        return f"{self.wall:.1f} s (CPU {self.cpu:.1f} s)"


def timed(call: Callable[[], Any]) -> Timed:
    started, cpu_started = time.perf_counter(), time.process_time()
    result = call()
    return Timed(result, time.perf_counter() - started, time.process_time() - cpu_started)


def ms(latencies: list[float], percentile: int) -> str:
    value = float(np.percentile(latencies, percentile)) * 1000
    return f"{value:.1f} ms"


if __name__ == "__main__":
    main()
