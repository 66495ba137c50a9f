"""Several processes over one corpus: the same content hash in each, one index build."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import filelock

from citelab.corpus import load_corpus
from citelab.retrieval import SearchIndex, index_directory

OPEN = (
    "import sys; from citelab.corpus import load_corpus; from citelab.retrieval import "
    "SearchIndex; print(SearchIndex.open(load_corpus(sys.argv[1])).origin)"
)
HASH = (
    "import sys; from citelab.corpus import load_corpus; "
    "print(load_corpus(sys.argv[1]).content_hash())"
)


def restricted_corpus(path: Path) -> Path:
    rows = [
        {
            "entity_type": "node",
            "entity_id": str(n),
            "translations": {"en": {"title": f"Doc {n}", "content": f"Budget line {n} text."}},
            "access": {
                "public": False,
                "users": [f"user{i}" for i in range(8)],
                "roles": ["hr", "finance", "staff", "board", "legal", "it"],
            },
        }
        for n in range(20)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def run(code: str, *args: str, seed: str = "0") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True
    )


def test_the_corpus_hash_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    corpus = restricted_corpus(tmp_path / "restricted.jsonl")
    hashes = {run(HASH, str(corpus), seed=seed).stdout.strip() for seed in "0123456"}
    assert hashes == {load_corpus(corpus).content_hash()}


def test_a_second_process_waits_for_the_build_then_loads_it(tmp_path: Path) -> None:
    path = restricted_corpus(tmp_path / "restricted.jsonl")
    target = index_directory(path)
    lock = filelock.FileLock(target.with_name(f".{target.name}.lock"))
    with lock:  # as a process that is building would hold it
        waiting = subprocess.Popen(
            [sys.executable, "-c", OPEN, str(path)], stdout=subprocess.PIPE, text=True
        )
        time.sleep(1.0)
        assert waiting.poll() is None  # it waits rather than building a second index
        SearchIndex.build(load_corpus(path)).save(target)
    out, _ = waiting.communicate(timeout=60)
    assert out.strip() == "loaded"
    assert run(OPEN, str(path), seed="7").stdout.strip() == "loaded"  # any hash seed
