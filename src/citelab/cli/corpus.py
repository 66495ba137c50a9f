"""``citelab corpus``: make synthetic corpora, describe a corpus, build and query its index.

citelab corpus import DIR -o PATH [--entity-type T] [--lang L] [--base-url URL] [--skip-bad]
citelab corpus synth --entities N [--seed S] [--out PATH]
citelab corpus info PATH|NAME [--json]
citelab corpus index PATH|NAME [--max-chars N]
citelab corpus search PATH|NAME QUERY [--user U] [--role R]... [--lang L] [--max-results K]

NAME is a bundled corpus (``university``, ``helpcentre``, ``intranet``), as in agent files.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citelab.cli._common import add_reader_arguments, reader_from

if TYPE_CHECKING:
    from citelab.corpus import ChunkingParams

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "corpus", help="import, synthesize, describe, index and search corpora"
    )
    commands = parser.add_subparsers(dest="corpus_command", metavar="SUBCOMMAND", required=True)
    _register_import(commands)
    _register_synth(commands)
    _register_info(commands)
    _register_index(commands)
    _register_search(commands)


def _register_import(commands: Any) -> None:
    imp = commands.add_parser(
        "import",
        help="turn a folder of Markdown, text, HTML and PDF files into a JSONL corpus",
        description=(
            "Read every .md, .txt, .html and .pdf file under DIR (hidden ones left out) into "
            "one document each: the title from front matter, the first heading or <title>, "
            "else the file name; the relative path as URL and entity id; the language when "
            "the file declares it. Other files are skipped and listed. Files that cannot be "
            "read stop the import (nothing is written) unless --skip-bad."
        ),
    )
    imp.add_argument("folder", metavar="DIR", help="the folder to import")
    imp.add_argument("-o", "--out", required=True, metavar="PATH", help="the JSONL file to write")
    imp.add_argument("--entity-type", default="document", help="entity type (default: document)")
    imp.add_argument("--lang", default="en", help="language of files that declare none (en)")
    imp.add_argument("--base-url", metavar="URL", help="prefix the relative paths with this URL")
    imp.add_argument(
        "--skip-bad", action="store_true", help="skip unreadable files instead of stopping"
    )
    imp.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from citelab._errors import InvalidInput
    from citelab.corpus import import_folder, write_corpus

    started = time.perf_counter()
    try:
        result = import_folder(
            args.folder,
            entity_type=args.entity_type,
            default_langcode=args.lang,
            base_url=args.base_url,
            skip_bad=args.skip_bad,
        )
    except ValidationError as exc:  # an --entity-type or --lang the document model refuses
        reason = exc.errors()[0]
        where = ".".join(map(str, reason["loc"]))
        raise InvalidInput(f"corpus import: {where}: {reason['msg']}") from exc
    written = write_corpus(result.documents, args.out)
    elapsed = time.perf_counter() - started
    for item in result.skipped:
        print(f"skipped {item.path}: {item.reason}", file=sys.stderr)
    print(
        f"imported {written} documents from {result.files} files in {args.folder} to "
        f"{args.out} in {elapsed:.2f} s ({len(result.skipped)} skipped)",
        file=sys.stderr,
    )
    return 0


def _register_synth(commands: Any) -> None:
    synth = commands.add_parser("synth", help="write a deterministic synthetic JSONL corpus")
    synth.add_argument("--entities", type=_positive, required=True, help="number of entities")
    synth.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    synth.add_argument("--out", help="output file (default: standard output)")
    synth.set_defaults(func=run_synth)


def _register_info(commands: Any) -> None:
    info = commands.add_parser("info", help="counts, languages and access rules of a corpus")
    info.add_argument("path", help="a JSONL corpus, or a bundled corpus's name")
    info.add_argument("--max-chars", type=_positive, default=800, help="chunk size to count with")
    info.add_argument("--json", action="store_true", help="print the summary as JSON")
    info.set_defaults(func=run_info)


def _register_index(commands: Any) -> None:
    index = commands.add_parser("index", help="build (or check) the BM25 index of a corpus")
    index.add_argument(
        "path", help="a JSONL corpus (or a bundled one's name); the index goes to PATH.index/"
    )
    index.add_argument("--max-chars", type=_positive, default=800, help="chunk size")
    index.set_defaults(func=run_index)


def _register_search(commands: Any) -> None:
    search = commands.add_parser("search", help="run rag_search as a given reader")
    search.add_argument("path", help="a JSONL corpus, or a bundled corpus's name")
    search.add_argument("query", help="what to search for")
    add_reader_arguments(search)
    search.add_argument(
        "--only-lang", action="store_true", help="search only the reader's language"
    )
    search.add_argument("--max-results", type=_positive, default=5, help="results (default 5)")
    search.add_argument("--max-chars", type=_positive, default=800, help="chunk size")
    search.set_defaults(func=run_search)


def run_synth(args: argparse.Namespace) -> int:
    from citelab.corpus import write_synthetic_corpus

    started = time.perf_counter()
    target = args.out if args.out else sys.stdout
    paragraphs = write_synthetic_corpus(target, args.entities, seed=args.seed)
    if args.out:
        elapsed = time.perf_counter() - started
        print(
            f"wrote {args.entities} entities, {paragraphs} chunks to {args.out} in {elapsed:.1f} s",
            file=sys.stderr,
        )
    return 0


def run_info(args: argparse.Namespace) -> int:
    from citelab.corpus import load_corpus, summarize_corpus

    params = _chunking(args)
    summary = summarize_corpus(load_corpus(_corpus_path(args.path)), params)
    if args.json:
        print(summary.model_dump_json(indent=2))
        return 0
    access = summary.access
    lines = [
        f"corpus       {summary.name}",
        f"entities     {summary.entities}  ({_counts(summary.entity_types)})",
        f"translations {summary.translations}  ({_counts(summary.languages)})",
        f"languages    {_language_gaps(summary)}",
        f"empty        {summary.empty_content} translations have no content",
        f"chunks       {summary.chunks} at max_chars={summary.max_chars}",
        f"fields       {_counts(summary.fields) or '-'}",
        f"access       {access.public} public, {access.restricted} restricted",
        f"users        {_names(access.users)}",
        f"roles        {_names(access.roles)}",
    ]
    print("\n".join(lines))
    return 0


def _language_gaps(summary: Any) -> str:
    """Which languages entities lack, and what that means for a reader, in plain words."""
    languages = ", ".join(summary.languages) or "no language"
    if summary.missing_translations == 0:
        if len(summary.languages) <= 1:
            return f"every entity is in {languages}"
        return f"every entity is in every language of the corpus ({languages})"
    lacking = [
        f"{summary.entities - count} no {code}"
        for code, count in summary.languages.items()
        if count < summary.entities
    ]
    lacking[0] = lacking[0].replace(" no ", " have no ", 1) + " version"
    return (
        f"{summary.missing_translations} of {summary.entities} entities are not in every "
        f"language ({', '.join(lacking)});\n             a reader asking in a language an "
        "entity lacks is answered from its text in another language"
    )


def run_index(args: argparse.Namespace) -> int:
    from citelab.corpus import load_corpus
    from citelab.retrieval import SearchIndex

    params = _chunking(args)
    corpus = load_corpus(_corpus_path(args.path))
    started = time.perf_counter()
    index = SearchIndex.open(corpus, params)
    elapsed = time.perf_counter() - started
    where = index.directory or "memory only (could not write next to the corpus)"
    if index.origin == "loaded":
        print(f"index up to date: {where} ({len(index)} chunks, loaded in {elapsed:.2f} s)")
    else:
        print(
            f"index built ({index.rebuild_reason}): {where}\n"
            f"{len(index)} chunks, {index.vocabulary_size} terms, "
            f"languages {', '.join(index.languages)}, {elapsed:.2f} s"
        )
    return 0


def run_search(args: argparse.Namespace) -> int:
    import json

    from citelab.corpus import load_corpus
    from citelab.retrieval import RagSearch, SearchIndex

    params = _chunking(args)
    index = SearchIndex.open(load_corpus(_corpus_path(args.path)), params)
    reader = reader_from(args)
    tool = RagSearch(index, reader_language_only=args.only_lang)
    output = tool.run({"query": args.query, "max_results": args.max_results}, reader)
    print(json.dumps(output, ensure_ascii=False, indent=2))
    return 0


def _corpus_path(given: str) -> Path:
    """A file, or a bundled corpus by name (agent files' rule: a folder is a clear error)."""
    from citelab.agent import resolve_corpus_path

    path = Path(given).expanduser()
    return path if path.is_file() else resolve_corpus_path(given)


def _chunking(args: argparse.Namespace) -> ChunkingParams:
    from pydantic import ValidationError

    from citelab._errors import InvalidInput
    from citelab.corpus import ChunkingParams

    try:
        return ChunkingParams(max_chars=args.max_chars)
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"]
        raise InvalidInput(f"--max-chars {args.max_chars}: {reason}") from exc


def _names(names: list[str], shown: int = 12) -> str:
    if len(names) > shown:
        return f"{', '.join(names[:shown])}, … ({len(names)} in all)"
    return ", ".join(names) or "-"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{key}: {value}" for key, value in counts.items())


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value
