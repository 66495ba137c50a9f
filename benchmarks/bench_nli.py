"""What the NLI judge costs on this CPU (issue #25, item 4), measured side by side in one run.

Random T5 models of real shapes (random weights cost what trained ones cost), judged through
:class:`citelab.evals.NLIJudge` as ALCE reads TRUE (``premise: … hypothesis: …``, greedy
generation), on pairs of ALCE's size: a 100-word passage under a title, a 15-word claim
(about 130 tokens together).

1. Seconds per pair with ``batch_size`` 1 and 8, by turns (``--rounds``), for T5-small's and
   T5-base's shapes: what batching saves on a CPU.
2. ALCE's generation beside ``threshold`` mode (one decoding step). A random model generates
   all 10 tokens; TRUE says "1" or "0" and stops, so its generation costs about two steps:
   the one-step figure is the closer one for TRUE.
3. TRUE's own shape (T5-XXL: d_model 1024, d_ff 65536, 128 heads of 128, 24 + 24 layers,
   11.3 billion weights: 45 GB in float32, 23 GB in bfloat16, more than this machine's
   memory). Models of that shape with 1 and 2 layers a side are timed by turns, and the whole
   is estimated as ``t(1) + 23 × (t(2) − t(1))``: an estimate from one layer's cost, not a run
   of the real model.

Run: ``.venv/bin/python benchmarks/bench_nli.py [--quick] [--no-xxl]`` (under ``flock
/tmp/heavy.lock`` on a shared machine; the XXL part holds about 6 GB). Needs the extra
``nli``. Each figure gives the 1-minute load average when it was taken.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration
except ImportError:  # the extra is optional: nothing to measure without it
    print("bench_nli: the extra 'nli' (torch, transformers) is not installed; skipped")
    sys.exit(0)

from citelab.evals import NLIJudge
from citelab.evals.judges._nli import _Runtime

VOCAB = 32_128  # T5's
SHAPES: dict[str, dict[str, int]] = {
    "t5-small": {"d_model": 512, "d_ff": 2048, "num_heads": 8, "d_kv": 64, "num_layers": 6},
    "t5-base": {"d_model": 768, "d_ff": 3072, "num_heads": 12, "d_kv": 64, "num_layers": 12},
    "xxl-1": {"d_model": 1024, "d_ff": 65536, "num_heads": 128, "d_kv": 128, "num_layers": 1},
    "xxl-2": {"d_model": 1024, "d_ff": 65536, "num_heads": 128, "d_kv": 128, "num_layers": 2},
}
XXL_LAYERS = 24
XXL_WEIGHTS = 11_307_321_344  # google/t5_xxl_true_nli_mixture (T5 1.0 XXL)


def _tokenizer() -> PreTrainedTokenizerFast:
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2}
    vocab.update({f"w{index}": index for index in range(3, VOCAB)})
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", 1)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )


def _pairs(count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)

    def words(n: int) -> str:
        return " ".join(f"w{rng.randrange(3, VOCAB)}" for _ in range(n))

    return [(words(15), f"{words(3)}\n{words(100)}") for _ in range(count)]


def _judge(folder: Path, model: Any, tokenizer: Any, **options: Any) -> NLIJudge:
    """A judge on ``model`` as loaded (the folder holds its configuration only: the
    benchmark measures judging, not reading weights from disk)."""
    judge = NLIJudge(str(folder), **options)
    model.eval()
    judge._runtime = _Runtime(judge, torch, tokenizer, model)
    return judge


def _model(shape: str, folder: Path, tokenizer: Any) -> Any:
    config = T5Config(
        vocab_size=VOCAB,
        num_decoder_layers=SHAPES[shape]["num_layers"],
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
        **SHAPES[shape],
    )
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config)
    folder.mkdir(parents=True, exist_ok=True)
    config.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return model


def _per_pair(judge: NLIJudge, pairs: list[tuple[str, str]]) -> float:
    judge._memo.clear()
    started = time.perf_counter()
    judge.supports_many(pairs)
    return (time.perf_counter() - started) / len(pairs)


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _by_turns(judges: dict[str, NLIJudge], count: int, rounds: int) -> dict[str, float]:
    """The median seconds per pair of each judge, the judges taking turns on fresh pairs."""
    times: dict[str, list[float]] = {name: [] for name in judges}
    for round_ in range(rounds):
        pairs = _pairs(count, seed=round_)
        for name, judge in judges.items():
            times[name].append(_per_pair(judge, pairs))
    return {name: statistics.median(values) for name, values in times.items()}


def _small_shapes(root: Path, tokenizer: Any, shapes: list[str], count: int, rounds: int) -> None:
    for shape in shapes:
        model = _model(shape, root / shape, tokenizer)
        weights = sum(p.numel() for p in model.parameters())
        judges = {
            "batch 1": _judge(root / shape, model, tokenizer, batch_size=1),
            "batch 8": _judge(root / shape, model, tokenizer, batch_size=8),
            "batch 8, one step": _judge(
                root / shape, model, tokenizer, batch_size=8, threshold=0.5
            ),
        }
        medians = _by_turns(judges, count, rounds)
        print(f"{shape} ({weights / 1e6:.0f} M weights), {count} pairs × {rounds}, {_load()}:")
        for name, seconds in medians.items():
            ratio = medians["batch 1"] / seconds
            print(f"  {name:<18} {seconds * 1000:8.1f} ms per pair   ×{ratio:.2f} vs batch 1")


def _xxl(root: Path, tokenizer: Any, count: int, rounds: int) -> None:
    medians: dict[str, float] = {}
    for shape in ("xxl-1", "xxl-2"):
        model = _model(shape, root / shape, tokenizer)
        judges = {
            f"{shape} generate": _judge(root / shape, model, tokenizer, batch_size=1),
            f"{shape} one step": _judge(
                root / shape, model, tokenizer, batch_size=1, threshold=0.5
            ),
        }
        medians.update(_by_turns(judges, count, rounds))
        del judges, model
    print(f"TRUE's shape (T5-XXL), batch 1, {count} pairs × {rounds}, {_load()}:")
    for mode in ("generate", "one step"):
        one, two = medians[f"xxl-1 {mode}"], medians[f"xxl-2 {mode}"]
        whole = one + (XXL_LAYERS - 1) * (two - one)
        print(
            f"  {mode:<9} 1 layer {one:6.2f} s, 2 layers {two:6.2f} s per pair → "
            f"{XXL_LAYERS} layers ≈ {whole:6.1f} s per pair (estimate)"
        )
    print(
        f"  weights: {XXL_WEIGHTS / 1e9:.1f} billion = {XXL_WEIGHTS * 4 / 1e9:.0f} GB in float32, "
        f"{XXL_WEIGHTS * 2 / 1e9:.0f} GB in bfloat16"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T5-small only, few pairs")
    parser.add_argument("--no-xxl", action="store_true", help="skip TRUE's shape")
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    tokenizer = _tokenizer()
    with tempfile.TemporaryDirectory(prefix="bench-nli-") as scratch:
        root = Path(scratch)
        if args.quick:
            _small_shapes(root, tokenizer, ["t5-small"], 8, 1)
            return
        _small_shapes(root, tokenizer, ["t5-small", "t5-base"], args.pairs, args.rounds)
        if not args.no_xxl:
            _xxl(root, tokenizer, max(2, args.pairs // 4), args.rounds)


if __name__ == "__main__":
    main()
