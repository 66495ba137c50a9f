"""A folder of documents as a corpus: Markdown, plain text, HTML and PDF files.

:func:`import_folder` walks a folder (sorted, hidden files and folders left out) and makes one
:class:`Document` per file:

* **title** — Markdown: ``title:`` in YAML front matter, else the first ``#`` heading (the
  highest level found first); HTML: ``<title>``, else the first ``<h1>``; PDF: the document
  information's title; otherwise the file name (``fees-2024.md`` → "fees 2024");
* **content** — Markdown and text as written (front matter removed); HTML as text, block by
  block (``script``/``style`` dropped); PDF: the text layer of every page (``pypdf``, the
  ``pdf`` extra);
* **url** — the path relative to the folder (``base_url`` + that path when given);
* **entity id** — the relative path with every character outside ``[A-Za-z0-9_.-]`` turned
  into ``-`` and folders joined by ``:`` (``notes/Fees 2024.md`` → ``notes:Fees-2024.md``):
  stable across runs and machines; two paths that would share an id get a short hash of
  the path appended;
* **language** — ``lang:``/``language:`` in front matter, ``<html lang>``, or ``/Lang`` of a
  PDF, else ``default_langcode``.

Files of other types, and empty ones, are *skipped* with the reason. Files of a supported type
that cannot be read (a broken or encrypted PDF, bytes that are not UTF-8 text, a binary file
named ``.txt``) are *bad*: one :class:`~citelab.InvalidInput` names every such file and why, unless
``skip_bad`` makes them skipped too. A folder with nothing to import is an
error. :func:`write_corpus` writes JSONL atomically (a temporary file renamed into place), so
a failed import never leaves a partial file. :func:`imported_corpus` imports a folder once
per content: the JSONL goes to the cache folder under the folder's fingerprint, and a second
call with unchanged files reads it back.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml

from citelab._errors import InvalidInput, MissingDependency
from citelab.corpus._model import Document, Translation

__all__ = [
    "IMPORT_SUFFIXES",
    "FolderImport",
    "SkippedFile",
    "folder_fingerprint",
    "import_folder",
    "imported_corpus",
    "write_corpus",
]

IMPORT_SUFFIXES: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}
"""File suffixes :func:`import_folder` reads, and the format each is read as."""


@dataclass(frozen=True)
class SkippedFile:
    """A file left out of the corpus, and why."""

    path: str
    """Relative to the imported folder."""
    reason: str


@dataclass
class FolderImport:
    """What an import made: the documents, and the files it left out."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    files: int = 0
    """Files looked at (skipped ones included)."""


class _BadFile(Exception):
    """A supported file that cannot be read."""


def import_folder(
    folder: str | Path,
    *,
    entity_type: str = "document",
    default_langcode: str = "en",
    base_url: str | None = None,
    skip_bad: bool = False,
) -> FolderImport:
    """Read every supported file under ``folder``; see the module docs for the rules."""
    return _import_folder(
        folder,
        entity_type=entity_type,
        default_langcode=default_langcode,
        base_url=base_url,
        skip_bad=skip_bad,
        remedy="remove them or pass --skip-bad",
    )


def _import_folder(
    folder: str | Path,
    *,
    entity_type: str = "document",
    default_langcode: str = "en",
    base_url: str | None = None,
    skip_bad: bool = False,
    remedy: str,
) -> FolderImport:
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise InvalidInput(f"corpus import: {root} is not a folder")
    result = FolderImport()
    bad: list[SkippedFile] = []
    ids: dict[str, str] = {}
    for path in _files(root):
        result.files += 1
        relative = path.relative_to(root).as_posix()
        kind = IMPORT_SUFFIXES.get(path.suffix.lower())
        if kind is None:
            result.skipped.append(
                SkippedFile(relative, f"unsupported file type {path.suffix or '(none)'!r}")
            )
            continue
        try:
            parsed = _read(path, kind)
        except _BadFile as exc:
            (result.skipped if skip_bad else bad).append(SkippedFile(relative, str(exc)))
            continue
        if not parsed.content.strip():
            result.skipped.append(SkippedFile(relative, "no text"))
            continue
        entity_id = _entity_id(relative, ids)
        url = f"{base_url.rstrip('/')}/{relative}" if base_url else relative
        result.documents.append(
            _document(
                parsed,
                entity_type=entity_type,
                entity_id=entity_id,
                url=url,
                relative=relative,
                kind=kind,
                default_langcode=default_langcode,
            )
        )
    if bad:
        lines = "\n".join(f"  {item.path}: {item.reason}" for item in bad)
        raise InvalidInput(
            f"corpus import: {len(bad)} file(s) in {root} cannot be read (nothing written; "
            f"{remedy}):\n{lines}"
        )
    if not result.documents:
        why = (
            f" ({len(result.skipped)} skipped: {_reasons(result.skipped)})"
            if result.skipped
            else ""
        )
        suffixes = ", ".join(sorted(IMPORT_SUFFIXES))
        raise InvalidInput(
            f"corpus import: {root} holds no document to import{why}; supported: {suffixes}"
        )
    return result


def write_corpus(documents: Iterable[Document], out: str | Path) -> int:
    """Write ``documents`` as JSONL to ``out`` atomically; returns how many were written."""
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            for document in documents:
                handle.write(document.model_dump_json(exclude_defaults=True) + "\n")
                count += 1
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return count


def imported_corpus(folder: str | Path, *, cache: Path | None = None) -> Path:
    """The JSONL corpus of ``folder``, imported now or earlier (cached by content hash)."""
    from citelab._paths import cache_dir

    root = Path(folder).expanduser().resolve()
    if not root.is_dir():
        raise InvalidInput(f"corpus folder {root} does not exist")
    fingerprint = folder_fingerprint(root)
    name = _ID_UNSAFE.sub("-", root.name).strip("-") or "folder"
    target = (cache or cache_dir() / "imports") / f"{name}-{fingerprint[:16]}.jsonl"
    if not target.is_file():
        write_corpus(_import_folder(root, remedy=_on_the_fly_remedy(root)).documents, target)
    return target


def _on_the_fly_remedy(root: Path) -> str:
    """What to do when a folder given as a corpus (``--corpus DIR``) has bad files: the
    commands that take it have no --skip-bad, so the import command that has one."""
    out = shlex.quote(f"{root.name or 'corpus'}.jsonl")
    return (
        f"remove them, or import the others once with `citelab corpus import "
        f"{shlex.quote(str(root))} -o {out} --skip-bad` and give that file as the corpus "
        f"(--corpus {out})"
    )


def folder_fingerprint(folder: str | Path, **options: Any) -> str:
    """A hash of every file's relative path and bytes (and the import options): it changes
    iff an import of the folder could change."""
    root = Path(folder).expanduser()
    digest = hashlib.sha256(json.dumps(options, sort_keys=True, default=str).encode())
    for path in _files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError as exc:
            digest.update(f"unreadable {exc.errno}".encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _files(root: Path) -> Iterator[Path]:
    for directory, folders, names in os.walk(root):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(names):
            if not name.startswith("."):
                yield Path(directory) / name


def _reasons(skipped: list[SkippedFile]) -> str:
    counts: dict[str, int] = {}
    for item in skipped:
        counts[item.reason] = counts.get(item.reason, 0) + 1
    return "; ".join(f"{reason} ×{n}" for reason, n in counts.items())


# --- one file --------------------------------------------------------------------------------


@dataclass
class _Parsed:
    title: str | None
    content: str
    langcode: str | None = None


def _read(path: Path, kind: str) -> _Parsed:
    if kind == "pdf":
        return _pdf(path)
    text = _text(path)
    if kind == "markdown":
        return _markdown(text)
    if kind == "html":
        return _html(text)
    return _Parsed(None, text)


def _text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _BadFile(f"cannot read: {exc.strerror or exc}") from exc
    if b"\0" in data[:8192]:
        raise _BadFile("binary file (NUL bytes), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _BadFile(f"not UTF-8 text (byte {exc.start}: {exc.reason})") from exc


_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def _markdown(text: str) -> _Parsed:
    meta: dict[str, Any] = {}
    match = _FRONT_MATTER.match(text)
    if match:
        try:
            loaded = yaml.safe_load(match[1])
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, dict):
            meta = loaded
            text = text[match.end() :]
    title = meta.get("title")
    if not isinstance(title, str) or not title.strip():
        headings = _HEADING.findall(text)
        title = min(headings, key=lambda h: len(h[0]))[1] if headings else None
    lang = meta.get("lang") or meta.get("language")
    return _Parsed(title, text.strip(), str(lang) if isinstance(lang, str) else None)


class _HtmlText(HTMLParser):
    _BLOCKS = frozenset({
        "p", "div", "section", "article", "header", "footer", "li", "ul", "ol", "h1", "h2",
        "h3", "h4", "h5", "h6", "tr", "table", "br", "pre", "blockquote", "dd", "dt", "main",
        "aside", "nav",
    })  # fmt: skip
    _HIDDEN = frozenset({"script", "style", "template", "noscript", "head"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.h1: list[str] = []
        self.lang: str | None = None
        self._stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "html":
            self.lang = dict(attrs).get("lang") or None
        if tag in self._BLOCKS:
            self.parts.append("\n")
        if tag not in ("br", "meta", "link", "img", "hr", "input"):
            self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._stack:
            while self._stack and self._stack.pop() != tag:
                pass
        if tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if "title" in self._stack:
            self.title.append(data)
        elif any(t in self._HIDDEN for t in self._stack):
            return
        else:
            if "h1" in self._stack:
                self.h1.append(data)
            self.parts.append(data)


def _html(text: str) -> _Parsed:
    parser = _HtmlText()
    parser.feed(text)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    content = "\n\n".join(line for line in lines if line)
    title = " ".join("".join(parser.title).split()) or " ".join("".join(parser.h1).split())
    return _Parsed(title or None, content, parser.lang)


def _pdf(path: Path) -> _Parsed:
    try:
        import pypdf
    except ImportError as exc:
        raise MissingDependency("pypdf", "Importing PDF files", extra="pdf") from exc
    try:
        reader = pypdf.PdfReader(path)
        if reader.is_encrypted:
            raise _BadFile("encrypted PDF")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
        title = info.title if info is not None else None
        lang = reader.root_object.get("/Lang")
    except _BadFile:
        raise
    except Exception as exc:  # pypdf raises many kinds on a broken file
        raise _BadFile(f"unreadable PDF: {exc}") from exc
    content = "\n\n".join(page.strip() for page in pages if page.strip())
    if not content:
        raise _BadFile("no text layer (a scanned PDF?)")
    return _Parsed(str(title) if title else None, content, str(lang) if lang else None)


# --- the document ----------------------------------------------------------------------------

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_LANGCODE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")


def _entity_id(relative: str, taken: dict[str, str]) -> str:
    parts = [_ID_UNSAFE.sub("-", part).strip("-") or "-" for part in relative.split("/")]
    entity_id = ":".join(parts)
    if entity_id in taken and taken[entity_id] != relative:
        entity_id = f"{entity_id}-{hashlib.sha1(relative.encode()).hexdigest()[:8]}"
    taken[entity_id] = relative
    return entity_id


def _document(
    parsed: _Parsed,
    *,
    entity_type: str,
    entity_id: str,
    url: str,
    relative: str,
    kind: str,
    default_langcode: str,
) -> Document:
    langcode = parsed.langcode if parsed.langcode and _LANGCODE.match(parsed.langcode) else None
    langcode = (langcode or default_langcode).replace("_", "-").lower()
    title = (parsed.title or "").strip() or _title_from_name(relative)
    translation = Translation(title=title, content=parsed.content, url=url)
    return Document(
        entity_type=entity_type,
        entity_id=entity_id,
        default_langcode=langcode,
        translations={langcode: translation},
        fields={"path": relative, "format": kind},
    )


def _title_from_name(relative: str) -> str:
    stem = Path(relative).stem
    return " ".join(re.split(r"[-_\s]+", stem)).strip() or stem
