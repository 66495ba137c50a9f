"""ALCE's generation step through citelab: an ASQA-shaped eval file of 1,000 questions with
ALCE's prompt, against ``citelab serve-model`` (the offline model, every call taking 200 ms).

1. Wall time at concurrency 32 against the ideal one (every call exactly the latency, 32 at
   once: ``ceil(n / 32)`` waves), printed as ``ideal / achieved`` (target: at least 0.9).
2. Resume after Ctrl-C: ``citelab alce run`` is interrupted (SIGINT) once some questions are
   finished, then run again; the served model counts the calls, and the second run must ask
   only for the questions the first did not finish.
3. The pipeline on ALCE's items (``pipeline = true``) under several variants and models, with
   the offline model (no network): the suite's units answered in one process with one index
   per item shared by every variant and model, against one index built per unit (as before
   #31), side by side by turns, printed as ``per unit / shared`` with the load.

Run: ``python benchmarks/bench_alce.py [--quick] [--only own-indexes]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from _common import served_model
from citelab.evals import AlceDecoding, AlcePromptSettings, load_suite, plan_run, run_alce
from citelab.evals.records import CaseRecord
from citelab.evals.runner import BatchRunner
from citelab.models import ExtractiveModel, Message, ModelDelta, serve_in_thread

LATENCY_MS = 200.0


def _files(folder: Path, questions: int, words: int = 0) -> tuple[Path, Path]:
    """ALCE's files; with ``words``, every passage has that many more words (ALCE's passages
    are 100-word Wikipedia chunks)."""

    def docs(k: int) -> list[dict[str, str]]:
        return [
            {
                "title": f"Page {k}-{j}",
                "text": f"Passage {j} of question {k} says {k * j}.{_filler(k, j, words)}",
            }
            for j in range(8)
        ]

    prompt = {
        "instruction": "Instruction: Write an accurate answer and cite the documents as [1][2].",
        "demo_sep": "\n\n\n",
        "demo_prompt": "{INST}\n\nQuestion: {Q}\n\n{D}\nAnswer: {A}",
        "doc_prompt": "Document [{ID}](Title: {T}): {P}\n",
        "demos": [
            {"question": f"Demo {k}?", "answer": f"Demo answer {k} [1].", "docs": docs(k)}
            for k in range(4)
        ],
    }
    items = [
        {"question": f"Question {k}?", "answer": f"Gold {k}", "docs": docs(k)}
        for k in range(questions)
    ]
    prompt_file, eval_file = folder / "asqa_default.json", folder / "asqa_eval_bench.json"
    prompt_file.write_text(json.dumps(prompt), encoding="utf-8")
    eval_file.write_text(json.dumps(items), encoding="utf-8")
    return prompt_file, eval_file


_VOCABULARY = (
    "river",
    "city",
    "king",
    "war",
    "album",
    "song",
    "film",
    "season",
    "team",
    "election",
    "church",
    "island",
    "bridge",
    "army",
    "novel",
    "station",
    "school",
    "party",
    "law",
    "court",
    "game",
    "bank",
    "ship",
    "language",
    "museum",
    "painter",
    "festival",
)


def _filler(k: int, j: int, words: int) -> str:
    """``words`` more words for passage ``j`` of question ``k`` (nothing for 0)."""
    rng = random.Random(k * 100 + j)
    return "".join(f" {rng.choice(_VOCABULARY)}{rng.randrange(50)}" for _ in range(words))


def wall_time(questions: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as name, served_model("--latency-ms", str(LATENCY_MS)) as s:
        folder = Path(name)
        prompt_file, eval_file = _files(folder, questions)
        options: dict[str, Any] = {"base_url": s.base_url, "api_key": "none"}
        settings = AlcePromptSettings(shot=2, ndoc=5, seed=42)

        def once(out: str) -> tuple[float, float]:
            began, cpu = time.perf_counter(), time.process_time()
            run_alce(
                prompt_file,
                eval_file,
                "openai:extractive",
                settings,
                AlceDecoding(),
                model_options=options,
                out_dir=folder / out,
                cache=False,
                concurrency=concurrency,
                progress=False,
            )
            return time.perf_counter() - began, time.process_time() - cpu

        once("warm-up")  # imports, SDK clients, first connections
        achieved, cpu = once("result")
    ideal = math.ceil(questions / concurrency) * LATENCY_MS / 1000
    print(
        f"{questions} questions, concurrency {concurrency}, {LATENCY_MS:.0f} ms a call: "
        f"achieved {achieved:.2f} s, ideal {ideal:.2f} s, ideal/achieved {ideal / achieved:.2f}; "
        f"client CPU {cpu * 1000 / questions:.2f} ms a question; "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    )


class _Counting:
    """The offline model, counting the calls it gets."""

    def __init__(self) -> None:
        self.inner = ExtractiveModel()
        self.name = self.inner.name
        self.calls = 0

    async def stream(
        self, messages: Sequence[Message], tools: Any = None, **options: Any
    ) -> AsyncIterator[ModelDelta]:
        self.calls += 1
        async for delta in self.inner.stream(messages, tools, **options):
            yield delta


def resume(questions: int, interrupt_after: int) -> None:
    model = _Counting()
    with tempfile.TemporaryDirectory() as name, serve_in_thread(model, latency_ms=50) as server:
        folder = Path(name)
        prompt_file, eval_file = _files(folder, questions)
        command = [
            sys.executable, "-m", "citelab", "alce", "run", "--prompt-file", str(prompt_file),
            "--eval-file", str(eval_file), "--shot", "2", "--ndoc", "5", "--model",
            "openai:extractive", "--out", str(folder / "result"), "--no-cache",
            "--no-progress", "--concurrency", "4",
        ]  # fmt: skip
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "none"}
        partial = folder / "result" / "asqa-extractive-citelab-shot2-ndoc5-42.partial.jsonl"
        first = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        while _lines(partial) < interrupt_after and first.poll() is None:
            time.sleep(0.05)
        first.send_signal(signal.SIGINT)
        code = first.wait(timeout=60)
        finished, asked_first = _lines(partial), model.calls
        second = subprocess.run(command, env=env, check=True, capture_output=True)
        asked_again = model.calls - asked_first
        done = json.loads(Path(second.stdout.decode().strip()).read_text())["data"]
    redone = asked_again - (questions - finished)
    print(
        f"resume: Ctrl-C (exit {code}) after {finished} of {questions} finished "
        f"({asked_first} calls); the second run asked {asked_again} "
        f"(= {questions} - {finished} + {redone} redone), {len(done)} answers written"
    )


def _lines(path: Path) -> int:
    try:
        return len(path.read_text(encoding="utf-8").splitlines())
    except FileNotFoundError:
        return 0


_VARIANTS = """
models = ["extractive", { spec = "extractive", label = "second" }]
[[variants]]
name = "baseline"
[[variants]]
name = "three"
set = { "retrieval.max_results" = 3 }
[[variants]]
name = "two"
set = { "retrieval.max_results" = 2 }
[[variants]]
name = "one"
set = { "retrieval.max_results" = 1 }
"""


def own_indexes(questions: int, rounds: int) -> None:
    """Units answered with one index per item (shared) against one per unit, by turns."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        _files(folder, questions, words=100)
        suite = folder / "suite.toml"
        suite.write_text(
            'name = "own_indexes"\nconcurrency = 8\n'
            f'{_VARIANTS}\n[[alce]]\nname = "asqa"\nprompt_file = "asqa_default.json"\n'
            'eval_file = "asqa_eval_bench.json"\nshot = 2\nndoc = 5\npipeline = true\n',
            encoding="utf-8",
        )
        plan = plan_run(load_suite(suite))
        times: dict[bool, list[float]] = {True: [], False: []}
        answers: dict[bool, list[str]] = {}
        asyncio.run(_answer_all(BatchRunner(plan, folder / "warm-up", concurrency=8)))
        for turn in range(rounds * 2):
            share = turn % 2 == 0
            batch = BatchRunner(plan, folder / f"cache{turn}", concurrency=8, share_indexes=share)
            began = time.perf_counter()
            records = asyncio.run(_answer_all(batch))
            times[share].append(time.perf_counter() - began)
            answers[share] = [record.turns[0].text for record in records]
            if share:
                builds = len(batch.own_indexes)
    assert answers[True] == answers[False], "sharing the index changed an answer"
    shared, apart = statistics.median(times[True]), statistics.median(times[False])
    units = len(plan.units)
    print(
        f"own indexes: {units} units ({questions} items x 4 variants x 2 models, 5 passages "
        f"of about 100 words an item, offline model): one index per unit {apart:.2f} s "
        f"({units} builds), one per item {shared:.2f} s ({builds} builds), "
        f"per unit / shared {apart / shared:.2f}x "
        f"(median of {rounds} by turns after a warm-up; {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f})"
    )


async def _answer_all(batch: BatchRunner) -> list[CaseRecord]:
    indices = list(range(len(batch.plan.units)))
    await batch.set_up(indices)
    slots = asyncio.Semaphore(batch.concurrency)

    async def one(index: int) -> CaseRecord:
        async with slots:
            return await batch.answer(index)

    try:
        return list(await asyncio.gather(*(one(index) for index in indices)))
    finally:
        await batch.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--only", choices=["own-indexes"], help="run this part alone")
    args = parser.parse_args()
    if args.only is None:
        wall_time(200 if args.quick else 1000, 32)
        resume(120 if args.quick else 400, 40 if args.quick else 150)
    own_indexes(20 if args.quick else 100, 5)


if __name__ == "__main__":
    main()
