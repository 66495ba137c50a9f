"""Rendering: the answer as sanitized HTML, and the sources as one ordered list.

Two independent layers stand between untrusted text (model output, source titles,
descriptions and URIs) and a page: markdown-it with HTML off escapes raw HTML and refuses
dangerous link targets, and nh3 then removes every tag, attribute and URL scheme outside
:mod:`~citelab.contract._allowlists`. A source links to its ``_meta["citelab/url"]`` when that
is a safe link target (http(s) or relative), else to its URI when that is http(s) or mailto;
a source whose link is not its URI (an ``entity:`` URI) shows the URI as code after the link
(or alone, with no link). nh3 checks every link again.

Inline markers of the citation grammar (:mod:`~citelab.contract._markers`: ``[n]``,
``[1, 3]``, ranges ``[2-4]``; outside code and links) have each number written linked to the
``n``-th list entry, ``#cite-<id>-n``; the id is derived from the message so that two answers
on one page do not collide, or given as ``id_prefix`` (a front end passes its turn id).
"""

from __future__ import annotations

import hashlib
import html
import re
from functools import cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mcp_types import ResourceLink

from citelab._errors import InvalidInput
from citelab.contract._allowlists import (
    ALLOWED_ATTRIBUTE_PATTERNS,
    ALLOWED_ATTRIBUTE_VALUES,
    ALLOWED_ATTRIBUTES,
    ALLOWED_TAGS,
    ALLOWED_URL_SCHEMES,
    DROP_CONTENT_TAGS,
    LINK_REL,
    URL_IGNORED,
)
from citelab.contract._code import is_escaped
from citelab.contract._markers import MARKER_GROUP, group_numbers
from citelab.contract._message import AnswerMessage
from citelab.contract._payloads import SOURCE_URL_KEY, link_url_problem

__all__ = [
    "citation_id_prefix",
    "render_answer_html",
    "render_message_html",
    "render_sources_html",
    "render_sources_markdown",
    "sanitize_html",
]

_MARKER_SEPARATOR = re.compile(r"( *, *|[-–])")
_ID_PREFIX = re.compile(r"[A-Za-z0-9_-]{1,64}")
# A scheme must be written plainly: browsers drop tabs/newlines and leading control
# characters before reading one, so any of those make a URI not-a-link here.
_SAFE_URL = re.compile(r"(?:https?://|mailto:)[^\x00-\x20\x7f-\x9f]+", re.IGNORECASE)


def sanitize_html(fragment: str) -> str:
    """Remove every tag, attribute and URL scheme outside the allowlists."""
    return nh3.clean(
        fragment,
        tags=set(ALLOWED_TAGS),
        # "*": no attribute on every tag (nh3 would keep title and lang everywhere).
        attributes={"*": set()} | {tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        attribute_filter=_attribute_filter,
        tag_attribute_values={
            tag: {name: set(values) for name, values in allowed.items()}
            for tag, allowed in ALLOWED_ATTRIBUTE_VALUES.items()
        },
        url_schemes=set(ALLOWED_URL_SCHEMES),
        clean_content_tags=set(DROP_CONTENT_TAGS),
        link_rel=LINK_REL,
        strip_comments=True,
    )


_URL_IGNORED = re.compile(URL_IGNORED)
_URL_SCHEME = re.compile(r"([a-z][a-z0-9+.-]*):", re.IGNORECASE)


def allowed_url(url: str) -> bool:
    """Whether ``url`` may be a link: an allowed scheme, or relative (the front end's rule,
    ``urls.js``): the scheme is read with every ignorable character dropped first."""
    scheme = _URL_SCHEME.match(_URL_IGNORED.sub("", url))
    return scheme is None or scheme.group(1).lower() in ALLOWED_URL_SCHEMES


@cache
def _patterns() -> dict[tuple[str, str], re.Pattern[str]]:
    return {
        (tag, name): re.compile(pattern)
        for tag, by_name in ALLOWED_ATTRIBUTE_PATTERNS.items()
        for name, pattern in by_name.items()
    }


def _attribute_filter(tag: str, name: str, value: str) -> str | None:
    """Keep a patterned attribute only when its whole value matches (see the allowlists), and
    a link only when :func:`allowed_url` says so."""
    if name == "href":
        return value if allowed_url(value) else None
    pattern = _patterns().get((tag, name))
    if pattern is None or pattern.fullmatch(value):
        return value
    return None


def citation_id_prefix(message: AnswerMessage) -> str:
    """A short id for this message's anchors, stable for the same text and sources."""
    digest = hashlib.blake2b(digest_size=4)
    digest.update(message.text.encode("utf-8", "surrogatepass"))
    for source in message.sources:
        digest.update(b"\x00" + source.uri.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _resolve_prefix(message: AnswerMessage | None, id_prefix: str | None) -> str:
    if id_prefix is None:
        return citation_id_prefix(message) if message is not None else "answer"
    if not _ID_PREFIX.fullmatch(id_prefix):
        raise InvalidInput(
            f"id_prefix {id_prefix!r} must be 1–64 letters, digits, '-' or '_' (it becomes an id)"
        )
    return id_prefix


def render_answer_html(
    answer: AnswerMessage | str, *, id_prefix: str | None = None, source_count: int | None = None
) -> str:
    """The answer Markdown as sanitized HTML, with ``[n]`` markers linked to the source list.

    For a message, markers naming one of its sources (``1..len(sources)``, or the numbers in
    ``_meta["citelab/number"]``) are linked; for plain text, ``1..source_count`` (every
    marker when ``source_count`` is None). Other markers stay as text.
    """
    message = answer if isinstance(answer, AnswerMessage) else None
    text = message.text if message is not None else answer
    if not isinstance(text, str):
        raise InvalidInput(
            f"answer must be an AnswerMessage or a string, not {type(text).__name__}"
        )
    known: frozenset[int] | None = None
    if message is not None and source_count is None:
        known = frozenset(number for number, _ in message.numbered_sources)
    elif source_count is not None:
        known = frozenset(range(1, source_count + 1))
    prefix = _resolve_prefix(message, id_prefix)
    parser = _answer_parser()
    env = {"cite_prefix": prefix, "cite_known": known}
    return sanitize_html(parser.render(text, env))


@cache
def _answer_parser() -> MarkdownIt:
    # Built once: per-render state (id prefix, source count) travels in ``env``.
    parser = MarkdownIt("js-default")
    parser.inline.ruler.before("link", "citation_marker", _citation_marker)
    parser.core.ruler.push("tight_lists", _tight_lists)
    parser.core.ruler.push("table_align", _table_align)
    parser.core.ruler.push("numeric_links", _numeric_links)
    return parser


# Link text that could pass for a citation marker: only digits, brackets, commas, dashes.
_NUMERIC_TEXT = re.compile(r"[\s\[\]0-9,\-\u2013]*[0-9][\s\[\]0-9,\-\u2013]*")
_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]*)")


def _numeric_links(state: StateCore) -> None:
    # "[1](https://evil.example)" or "[[1]](…)" would look like a citation marker: such a link
    # shows where it goes, "1 (evil.example)", so a reader can tell it from one (as the front
    # end does).
    for token in state.tokens:
        if token.type != "inline" or not token.children:
            continue
        children = token.children
        index = 0
        while index < len(children):
            child = children[index]
            if child.type == "link_open" and child.markup != "citation":
                index = _mark_numeric_link(children, index)
            index += 1


def _mark_numeric_link(children: list[Token], start: int) -> int:
    """Give the link opening at ``start`` its destination when its text is numeric; returns
    the position of its ``link_close``."""
    end = start + 1
    while end < len(children) and children[end].type != "link_close":
        end += 1
    inner = children[start + 1 : end]
    if end == len(children) or any(t.type not in ("text", "code_inline") for t in inner):
        return end
    if not _NUMERIC_TEXT.fullmatch("".join(t.content for t in inner)):
        return end
    href = str(children[start].attrs.get("href", ""))
    found = _AUTHORITY.match(href)
    where = Token("text", "", 0)
    where.content = f" ({found.group(1) if found else href})"
    children.insert(end, where)
    return end + 1


def _citation_marker(state: StateInline, silent: bool) -> bool:
    # Silent runs measure link labels: claiming the "[" there would make "[x [1]](url)" look
    # like a nested link and break the outer link, so leave it to the link rule as text.
    src, pos, end_of_inline = state.src, state.pos, state.posMax
    if silent or src[pos] != "[" or state.linkLevel > 0 or _label_or_in_brackets(state):
        return False
    match = MARKER_GROUP.match(src, pos, end_of_inline)
    if match is None or group_numbers(match.group(1)) is None:
        return False
    end = match.end()
    after = src[end] if end < end_of_inline else ""
    if after == "(" or (after == "[" and not MARKER_GROUP.match(src, end, end_of_inline)):
        return False  # the text of a link: [1](url), [1][ref], [1][]
    _push_marker(state, match.group(1))
    state.pos = end
    state.env["cite_after"] = (id(src), end)
    return True


_MARKER_CHARS = frozenset("0123456789 ,-–")


def _label_or_in_brackets(state: StateInline) -> bool:
    """The grammar's context rules before a chain (``_markers``): directly after an unescaped
    ``]`` that closes no marker of this chain, a reference link's label (``[text][1]``); with
    only marker characters between it and brackets around it, inside brackets (``[[1]]``)."""
    src, pos, end = state.src, state.pos, state.posMax
    if not state.pending and state.env.get("cite_after") == (id(src), pos):
        return False  # a later group of a chain: the rules looked at its first one
    if pos > 0 and src[pos - 1] == "]" and not is_escaped(src, pos - 1):
        return True
    before = pos - 1
    while before >= 0 and src[before] in _MARKER_CHARS:
        before -= 1
    if before < 0 or src[before] != "[" or is_escaped(src, before):
        return False
    after = pos
    while (match := MARKER_GROUP.match(src, after, end)) is not None:
        after = match.end()
    while after < end and src[after] in _MARKER_CHARS:
        after += 1
    return after > pos and after < end and src[after] == "]"


def _push_marker(state: StateInline, items: str) -> None:
    prefix, known = state.env["cite_prefix"], state.env["cite_known"]
    state.push("text", "", 0).content = "["
    for position, part in enumerate(_MARKER_SEPARATOR.split(items)):
        if position % 2:
            state.push("text", "", 0).content = part
            continue
        number = int(part)
        if number < 1 or (known is not None and number not in known):
            state.push("text", "", 0).content = part
            continue
        link = state.push("link_open", "a", 1)
        link.attrs = {
            "href": f"#cite-{prefix}-{number}",
            "class": "citation",
            "data-ref-index": str(number),
        }
        link.markup = "citation"
        state.push("text", "", 0).content = str(number)
        state.push("link_close", "a", -1).markup = "citation"
    state.push("text", "", 0).content = "]"


def _tight_lists(state: StateCore) -> None:
    # Always tight: a loose list would wrap each item in <p> and inherit paragraph margins.
    depth = 0
    previous_close: int | None = None
    for index, token in enumerate(state.tokens):
        if token.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif token.type == "list_item_open":
            previous_close = None
        elif depth and token.type in ("paragraph_open", "paragraph_close"):
            _hide_paragraph(state.tokens, index, previous_close)
            if token.type == "paragraph_close":
                previous_close = index


def _hide_paragraph(tokens: list[Token], index: int, previous_close: int | None) -> None:
    token = tokens[index]
    if token.type == "paragraph_open" and previous_close == index - 1:
        # Two paragraphs in one item: keep them apart with a line break.
        inline = tokens[previous_close - 1]
        if inline.type == "inline" and inline.children is not None:
            inline.children.append(Token("hardbreak", "br", 0))
    token.hidden = True


def _table_align(state: StateCore) -> None:
    for token in state.tokens:
        if token.type not in ("th_open", "td_open"):
            continue
        style = token.attrs.pop("style", None)
        if isinstance(style, str) and style.startswith("text-align:"):
            token.attrs["data-align"] = style.removeprefix("text-align:")


def _href(uri: str) -> str | None:
    return uri if _SAFE_URL.fullmatch(uri) else None


def render_sources_html(
    message: AnswerMessage, *, id_prefix: str | None = None, new_tab: bool = True
) -> str:
    """The sources as one ``<ol>``, by priority (stable on ties); ``""`` if there are none.

    Item ``n`` has id ``cite-<id>-n``, the target of marker ``[n]``. When the numbers are not
    1..k (``_meta["citelab/number"]``), the list is a ``<ul>`` whose items start with ``[n]``.
    """
    sources = message.sources
    if not sources:
        return ""
    prefix = _resolve_prefix(message, id_prefix)
    numbered = message.numbered_sources
    if all(n == position for position, (n, _) in enumerate(numbered, 1)):
        items = [_source_item(source, n, prefix, new_tab) for n, source in numbered]
        return sanitize_html('<ol class="citelab-sources">' + "".join(items) + "</ol>")
    # Conversation-wide numbers (a follow-up citing [1] and [3]): an <ol> would count 1, 2,
    # so each item says its number itself.
    items = [_source_item(source, n, prefix, new_tab, label=True) for n, source in numbered]
    return sanitize_html('<ul class="citelab-sources">' + "".join(items) + "</ul>")


def _source_href(source: ResourceLink) -> str | None:
    """Where the source's link points: its web URL (``_meta``), else its URI, if either is safe.

    The payload is re-checked: a message may reach a renderer without being validated.
    """
    url = (source.meta or {}).get(SOURCE_URL_KEY)
    if isinstance(url, str) and link_url_problem(url) is None:
        return url
    return _href(source.uri)


def _source_item(
    source: ResourceLink, number: int, prefix: str, new_tab: bool, *, label: bool = False
) -> str:
    title = html.escape(source.title or source.name)
    href = _source_href(source)
    if href is not None:
        target = ' target="_blank"' if new_tab else ""
        body = f'<a href="{html.escape(href)}"{target}>{title}</a>'
    else:
        body = title
    if label:
        body = f"[{number}] {body}"
    if href != source.uri:  # the link (if any) is not the URI: show the source's identity
        body += f" <code>{html.escape(source.uri)}</code>"
    if source.description:
        body += " — " + html.escape(source.description)
    return (
        f'<li id="cite-{prefix}-{number}" class="citelab-source" '
        f'data-ref-index="{number}">{body}</li>'
    )


def render_sources_markdown(message: AnswerMessage) -> str:
    """The sources as a numbered Markdown list, by priority; ``""`` if there are none."""
    lines = []
    for number, source in message.numbered_sources:
        label = _markdown_text(source.title or source.name)
        href = _source_href(source)
        line = f"[{label}](<{_markdown_url(href)}>)" if href else label
        if href != source.uri:
            line += f" ({_code(source.uri)})"
        if source.description:
            line += " — " + _markdown_text(source.description)
        lines.append(f"{number}. {line}")
    return "\n".join(lines)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&])")


def _markdown_text(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _markdown_url(url: str) -> str:
    # Backslash-escaped, "&" stays literal: no Markdown reader decodes "&colon;" into a scheme.
    escaped = url.replace("\\", "\\\\").replace("&", "\\&")
    return escaped.replace("<", "%3C").replace(">", "%3E").replace(" ", "%20")


def _code(text: str) -> str:
    flat = " ".join(text.split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    return f"{fence} {flat} {fence}"


def render_message_html(message: AnswerMessage, *, id_prefix: str | None = None) -> str:
    """Answer and sources together, as a notebook shows them."""
    answer = render_answer_html(message, id_prefix=id_prefix)
    sources = render_sources_html(message, id_prefix=id_prefix)
    return answer + "<p><strong>Sources</strong></p>" + sources if sources else answer
