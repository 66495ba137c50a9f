"""``citelab alce``: ALCE's benchmark with any model, from ALCE's own files.

``citelab alce prompt`` prints the prompts ALCE's ``run.py`` would send (one JSON object a
line: ``index``, ``prompt``), to diff against ``run.py``'s; ``citelab alce run`` generates the
answers with a citelab model and writes ALCE's result file, which ALCE's ``eval.py`` and
``citelab score --format alce`` read.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["register"]

_EPILOG = """\
example (reproduce an ALCE row with your model):
  citelab alce run --prompt-file prompts/asqa_default.json \\
      --eval-file data/asqa_eval_gtr_top100.json --shot 2 --ndoc 5 --seed 42 \\
      --model openai:my-model --out result/
  citelab score result/asqa-my-model-citelab-shot2-ndoc5-42.json --format alce

exit codes: 0 done; 2 bad input or configuration (the message says where); 130 interrupted
(run again: finished questions are not asked again).
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "alce",
        help="ALCE's prompts and generation with any model (ALCE's files as they are)",
        description="ALCE's benchmark from ALCE's prompt and eval files: print its prompts, "
        "or generate its result files with a citelab model.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="alce_command", metavar="COMMAND", required=True)
    prompt = commands.add_parser(
        "prompt",
        help="print the prompts run.py would send, one JSON object a line (index, prompt)",
    )
    _add_prompt_arguments(prompt)
    prompt.set_defaults(func=_print_prompts)
    run = commands.add_parser(
        "run",
        help="generate answers with a citelab model and write ALCE's result file",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_prompt_arguments(run)
    _add_run_arguments(run)
    run.set_defaults(func=_run)


def _add_prompt_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompt-file", required=True, metavar="F", help="ALCE's prompt file")
    parser.add_argument("--eval-file", required=True, metavar="E", help="ALCE's eval file")
    parser.add_argument("--shot", type=int, required=True, metavar="K", help="demonstrations")
    parser.add_argument("--ndoc", type=int, required=True, metavar="N", help="documents shown")
    parser.add_argument("--seed", type=int, default=42, metavar="S", help="(default: 42)")
    parser.add_argument(
        "--no-doc-in-demo", action="store_true", help="demonstrations without documents"
    )
    parser.add_argument(
        "--fewer-doc-in-demo", type=int, metavar="M", help="M documents in each demonstration"
    )
    parser.add_argument(
        "--use-shorter", choices=["summary", "extraction"], help="documents' summary/extraction"
    )
    parser.add_argument("--quick-test", type=int, metavar="Q", help="only Q items, drawn")


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="extractive", help="a model spec (citelab list)")
    parser.add_argument(
        "--model-options", default="{}", metavar="JSON", help="the model factory's keywords"
    )
    parser.add_argument("--temperature", type=float, default=0.5, help="(default: 0.5)")
    parser.add_argument("--top-p", type=float, default=1.0, help="(default: 1.0)")
    parser.add_argument("--max-new-tokens", type=int, default=300, help="(default: 300)")
    parser.add_argument(
        "--completion",
        action="store_true",
        help="send the prompt alone and stop at the first newline (run.py's completion "
        "models); default: ALCE's system message first (its chat models)",
    )
    parser.add_argument("--out", default="result", metavar="DIR", help="(default: result)")
    parser.add_argument("--dataset-name", help="(default: the eval file's name before '_')")
    parser.add_argument("--tag", default="citelab", help="part of the file name")
    parser.add_argument("--concurrency", type=int, default=8, help="calls at once (default: 8)")
    parser.add_argument("--no-cache", action="store_true", help="ask the model every time")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _settings(args: argparse.Namespace) -> Any:
    from pydantic import ValidationError

    from citelab._errors import ConfigError
    from citelab.evals.dataset import AlcePromptSettings

    try:
        return AlcePromptSettings(
            shot=args.shot,
            ndoc=args.ndoc,
            seed=args.seed,
            no_doc_in_demo=args.no_doc_in_demo,
            ndoc_in_demo=args.fewer_doc_in_demo,
            use_shorter=args.use_shorter,
            quick_test=args.quick_test,
        )
    except ValidationError as exc:
        raise ConfigError(_problems(exc)) from exc


def _problems(exc: Any) -> str:
    return "; ".join(
        f"--{'-'.join(str(p) for p in e['loc']).replace('_', '-')}: {e['msg']}"
        for e in exc.errors()
    )


def _print_prompts(args: argparse.Namespace) -> int:
    from citelab.evals.dataset import alce_prompts, load_alce_eval, load_alce_prompt_file

    built = alce_prompts(
        load_alce_prompt_file(args.prompt_file), load_alce_eval(args.eval_file), _settings(args)
    )
    for index, _, prompt in built:
        print(json.dumps({"index": index, "prompt": prompt}, ensure_ascii=False))
    return 0


def _run(args: argparse.Namespace) -> int:
    import sys

    from pydantic import ValidationError

    from citelab._errors import ConfigError
    from citelab.evals.runner import AlceDecoding, run_alce

    try:
        options = json.loads(args.model_options)
    except ValueError as exc:
        raise ConfigError(f"--model-options: not JSON: {exc}") from exc
    if not isinstance(options, dict):
        raise ConfigError("--model-options: must be a JSON object")
    try:
        decoding = AlceDecoding(
            temperature=args.temperature,
            top_p=args.top_p,
            max_new_tokens=args.max_new_tokens,
            chat=not args.completion,
        )
    except ValidationError as exc:
        raise ConfigError(_problems(exc)) from exc
    path = run_alce(
        args.prompt_file,
        args.eval_file,
        args.model,
        _settings(args),
        decoding,
        model_options=options,
        out_dir=args.out,
        dataset_name=args.dataset_name,
        tag=args.tag,
        cache=not args.no_cache,
        concurrency=args.concurrency,
        progress=not args.no_progress,
    )
    print(path)
    print(f"score it: citelab score {path} --format alce", file=sys.stderr)
    return 0
