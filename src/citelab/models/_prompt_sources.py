"""Numbered sources in the shapes people write them, read back from a message's text.

citelab's own prompts show sources as ``<source number=..>`` blocks; hand-written prompts,
other frameworks' templates and tools show them in other shapes. :func:`read_sources` finds,
in this order (the first shape that yields a source wins for the message):

1. citelab's block: ``<source number="1" uri=".." title="..">text</source>``;
2. Anthropic's long-context style: ``<document index="1"><source>Title</source>
   <document_content>text</document_content></document>`` (``<title>`` is read too);
3. JSON: the whole text, a fenced ```` ```json ```` block, or an array embedded in prose, as an
   array of objects ``{number|index|id, title|name, text|content|snippet, url|uri}``
   (``id`` counts as a number only when it is an integer; otherwise rows are numbered by
   position); ``{"sources"|"documents": [...]}`` is read the same way;
4. header lines: ``[1] Title`` or ``Source 1: Title`` (also ``Document 1``, ``- [1]``,
   ``## Source 1``), the text on the lines below up to the next header; a header without text
   below reads ``Title: text`` (or ``Title — text``) on its one line; ``URL:``/``Title:``/
   ``Text:`` lines inside an entry are read as such;
5. Markdown lists under a heading that names them (``Sources:``, ``## Documents``,
   ``Context``, ``References``, ``Search results``): ``1. **Title**: text`` or
   ``1. [Title](url) - text`` or ``1. Title: text``.

A source's own ``[n]`` markers stay in its text (the model drops them when it quotes).
:func:`read_sources` also returns the text left when the sources are cut out (and the
heading that introduced them), so a user message holding sources and a question yields the
question alone.

What this cannot follow: sources without any number or list structure (free prose), tables,
numbers written as words, and instructions about the answer's wording or marker style (the
extractive model always cites as ``[n]`` after the sentence it quotes). After the last
header-line entry, text runs on into that entry until a ``Question:``-style label, a Markdown
heading, or a last paragraph ending in ``?``: an instruction written below the sources
without one of those is read as part of the last source.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from html import unescape
from typing import Any

from citelab.sources import parse_sources_block

__all__ = ["FoundSource", "question_of", "read_sources"]


@dataclass(frozen=True)
class FoundSource:
    """A numbered source found in a text."""

    number: int
    title: str
    content: str
    uri: str


def read_sources(text: str, *, strict: bool = False) -> tuple[list[FoundSource], str]:
    """The numbered sources ``text`` shows, and the text with them cut out.

    ``strict`` (for user messages) ignores header-line and list entries whose text is only
    their title, so a question that starts with ``[1]`` is not read as a source.
    """
    block = parse_sources_block(text)
    if block:
        found = [FoundSource(s.number, s.title, s.content, s.uri) for s in block]
        return found, _SOURCE_ELEMENT.sub("", text)
    for reader in (_documents, _json_sources):
        sources, rest = reader(text)
        if sources:
            return sources, rest
    for lines_reader in (_header_sources, _list_sources):
        sources, rest = lines_reader(text, strict)
        if sources:
            return sources, rest
    return [], text


# --- 1 and 2: XML-ish elements ----------------------------------------------------------------

_SOURCE_ELEMENT = re.compile(r"<sources>|</sources>|<source number=.*?</source>", re.DOTALL)
_DOCUMENT = re.compile(r'<document\s+index\s*=\s*"?(\d+)"?[^>]*>(.*?)</document>', re.DOTALL)
_DOCUMENTS_WRAPPER = re.compile(r"</?documents>")
_CHILD = re.compile(r"<(source|title|document_content|url|uri)>(.*?)</\1>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def _documents(text: str) -> tuple[list[FoundSource], str]:
    found: list[FoundSource] = []
    for match in _DOCUMENT.finditer(text):
        number = int(match[1])
        children = {name: unescape(value.strip()) for name, value in _CHILD.findall(match[2])}
        content = children.get("document_content")
        if content is None:
            content = unescape(_TAG.sub(" ", _CHILD.sub(" ", match[2]))).strip()
        title = children.get("title") or children.get("source") or f"Document {number}"
        uri = children.get("url") or children.get("uri") or _uri_of(children.get("source"))
        found.append(FoundSource(number, title, content, uri or f"source:{number}"))
    rest = _DOCUMENTS_WRAPPER.sub("", _DOCUMENT.sub("", text)) if found else text
    return found, rest


def _uri_of(value: str | None) -> str | None:
    """A ``<source>`` child that is a URL or a file path doubles as the source's URI."""
    if value and (re.match(r"^[a-z][a-z0-9+.-]*:", value) or "/" in value or "." in value):
        return value if " " not in value else None
    return None


# --- 3: JSON --------------------------------------------------------------------------------

_FENCED_JSON = re.compile(r"```(?:json)?\s*\n(.*?)\n```", re.DOTALL)
_ARRAY_START = re.compile(r"\[\s*\{")
_NUMBER_KEYS = ("number", "index", "source_number", "id")
_TITLE_KEYS = ("title", "name", "label", "source")
_TEXT_KEYS = ("text", "content", "snippet", "body", "chunk", "passage")
_URI_KEYS = ("url", "uri", "link", "href")


def _json_sources(text: str) -> tuple[list[FoundSource], str]:
    stripped = text.strip()
    whole = _loads(stripped)
    if whole is not None:
        rows = _json_rows(whole)
        return (rows, "") if rows else ([], text)
    for fenced in _FENCED_JSON.finditer(text):
        rows = _json_rows(_loads(fenced[1]))
        if rows:
            return rows, text[: fenced.start()] + text[fenced.end() :]
    for start in _ARRAY_START.finditer(text):
        try:
            value, end = json.JSONDecoder().raw_decode(text, start.start())
        except ValueError:
            continue
        rows = _json_rows(value)
        if rows:
            return rows, text[: start.start()] + text[end:]
    return [], text


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _json_rows(value: Any) -> list[FoundSource]:
    if isinstance(value, dict):
        value = value.get("sources", value.get("documents"))
    if not isinstance(value, list):
        return []
    rows = [row for row in value if isinstance(row, dict) and _first(row, _TEXT_KEYS)]
    found: list[FoundSource] = []
    for position, row in enumerate(rows, start=1):
        number = _row_number(row) or position
        content = _first(row, _TEXT_KEYS) or ""
        title = _first(row, _TITLE_KEYS) or f"Source {number}"
        uri = _first(row, _URI_KEYS) or f"source:{number}"
        found.append(FoundSource(number, title, content, uri))
    return found


def _row_number(row: dict[str, Any]) -> int | None:
    for key in _NUMBER_KEYS:
        value = row.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return None


def _first(row: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = row.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


# --- 4: header lines ------------------------------------------------------------------------

_HEADER = re.compile(
    r"^[ \t]*(?:[-*][ \t]+|#{1,6}[ \t]+)?"
    r"(?:\[(?P<bracket>\d+)\]|(?:source|document|doc|reference)[ \t]*#?[ \t]*(?P<word>\d+)\b)"
    r"[ \t]*[:.)\]\-–—]?[ \t]*(?P<rest>.*)$",
    re.IGNORECASE,
)
_STOP = re.compile(r"^[ \t]*(?:#{1,6}[ \t]|(?:question|query|q|user|task)[ \t]*:)", re.IGNORECASE)
_INTRO = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?\**(?:numbered[ \t]+)?(?:sources?|documents?|context|references|"
    r"search[ \t]+results|retrieved[ \t]+(?:sources|documents|passages))\**[ \t]*:?[ \t]*\**$",
    re.IGNORECASE,
)
_FIELD = re.compile(r"^[ \t]*(title|url|uri|link|text|content)[ \t]*:[ \t]*(.*)$", re.IGNORECASE)
_SPLIT = re.compile(
    r"\*\*(?P<bold>.+?)\*\*[ \t]*[:\-–—]?[ \t]*|(?P<plain>.+?)(?::[ \t]+|[ \t]+[–—-][ \t]+)"
)
_LINK = re.compile(r"^\[(?P<title>[^\]]+)\]\((?P<url>[^)\s]+)\)[ \t]*[:\-–—]?[ \t]*")
_TRAILING_URL = re.compile(r"[ \t]*[(<](?P<url>[a-z][a-z0-9+.-]*://[^)>\s]+)[)>][ \t]*$")


@dataclass
class _Entry:
    number: int
    head: str
    lines: list[str]
    start: int
    end: int


def _header_sources(text: str, strict: bool) -> tuple[list[FoundSource], str]:
    lines = text.split("\n")
    entries: list[_Entry] = []
    current: _Entry | None = None
    for index, line in enumerate(lines):
        match = _HEADER.match(line)
        if match:
            number = int(match["bracket"] or match["word"])
            current = _Entry(number, match["rest"].strip(), [], index, index + 1)
            entries.append(current)
        elif current is not None and not _STOP.match(line) and not _INTRO.match(line):
            current.lines.append(line)
            current.end = index + 1
        else:
            current = None
    if entries:
        _drop_trailing_question(entries[-1], lines)
    return _finish(entries, lines, strict)


def _drop_trailing_question(entry: _Entry, lines: list[str]) -> None:
    """A last paragraph that ends in ``?`` after a blank line is the question, not the source."""
    end = _trimmed_end(entry, lines)
    start = end
    while start > entry.start + 1 and lines[start - 1].strip():
        start -= 1
    if start > entry.start + 1 and lines[end - 1].rstrip().endswith("?"):
        entry.lines = entry.lines[: start - entry.start - 1]
        entry.end = start


def _finish(entries: list[_Entry], lines: list[str], strict: bool) -> tuple[list[FoundSource], str]:
    found: list[FoundSource] = []
    cut: set[int] = set()
    for entry in entries:
        source = _entry_source(entry)
        if source is None or (strict and source.content == source.title):
            continue
        found.append(source)
        cut.update(range(entry.start, _trimmed_end(entry, lines)))
    if not found:
        return [], "\n".join(lines)
    first = min(cut)
    if first > 0 and _INTRO.match(lines[first - 1]):
        cut.add(first - 1)
    return found, "\n".join(line for i, line in enumerate(lines) if i not in cut)


def _trimmed_end(entry: _Entry, lines: list[str]) -> int:
    end = entry.end
    while end > entry.start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _entry_source(entry: _Entry) -> FoundSource | None:
    head, uri = _without_url(entry.head)
    fields: dict[str, str] = {}
    body: list[str] = []
    for line in entry.lines:
        field = _FIELD.match(line)
        if field and field[1].lower() not in fields:
            fields[field[1].lower()] = field[2].strip()
        else:
            body.append(line.strip())
    text = "\n".join(body).strip() or fields.get("text") or fields.get("content") or ""
    title = fields.get("title") or head
    uri = fields.get("url") or fields.get("uri") or fields.get("link") or uri
    if not text:
        title, text, link = _split_head(head)
        uri = uri or link
    if not title and not text:
        return None
    title = title or f"Source {entry.number}"
    return FoundSource(
        entry.number, title.strip(" :*"), text or title, uri or f"source:{entry.number}"
    )


def _without_url(head: str) -> tuple[str, str | None]:
    link = _LINK.match(head)
    if link and not head[link.end() :].strip():
        return link["title"], link["url"]
    match = _TRAILING_URL.search(head)
    if match:
        return head[: match.start()], match["url"]
    return head, None


def _split_head(head: str) -> tuple[str, str, str | None]:
    """``Title: text`` / ``**Title** text`` / ``[Title](url) text`` / ``Title — text`` on one
    line (title, text, link); else the line is both title and text."""
    link = _LINK.match(head)
    if link:
        return link["title"], head[link.end() :].strip() or link["title"], link["url"]
    match = _SPLIT.match(head)
    if match and head[match.end() :].strip():
        return (match["bold"] or match["plain"]).strip(), head[match.end() :].strip(), None
    return head.strip(), head.strip(), None


# --- 5: Markdown lists under a heading --------------------------------------------------------

_ITEM = re.compile(r"^[ \t]{0,3}(?P<number>\d+)[.)][ \t]+(?P<rest>.+)$")


def _list_sources(text: str, strict: bool) -> tuple[list[FoundSource], str]:
    lines = text.split("\n")
    entries: list[_Entry] = []
    in_list = False
    current: _Entry | None = None
    for index, line in enumerate(lines):
        item = _ITEM.match(line)
        if _INTRO.match(line):
            in_list, current = True, None
        elif in_list and item:
            current = _Entry(int(item["number"]), item["rest"].strip(), [], index, index + 1)
            entries.append(current)
        elif in_list and current is not None and (line.startswith((" ", "\t")) or not line.strip()):
            if line.strip():
                current.lines.append(line)
                current.end = index + 1
        elif line.strip():
            in_list, current = False, None
    return _finish(entries, lines, strict)


# --- the question ---------------------------------------------------------------------------

_QUESTION_LABEL = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?\**(?:question|query|q)\**[ \t]*:[ \t]*", re.I | re.M
)


def question_of(text: str) -> str:
    """The question in a user message: its text without the sources it shows, and after a
    ``Question:`` label when there is one."""
    _, rest = read_sources(text, strict=True)
    labels = list(_QUESTION_LABEL.finditer(rest))
    if labels:
        rest = rest[labels[-1].end() :]
    return rest.strip()
