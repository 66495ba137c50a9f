"""Hostile strings in answers, titles, descriptions and URIs never escape the allowlists."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from mcp_types import ResourceLink, TextContent

from citelab.contract import (
    ALLOWLISTS,
    SOURCE_URL_KEY,
    AnswerMessage,
    build_message,
    render_answer_html,
    render_sources_html,
    render_sources_markdown,
    validate_message,
)

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
# What a browser ignores when it reads a URL: leading/trailing C0 controls and spaces, and
# tabs/newlines anywhere.
_IGNORED_BY_BROWSERS = re.compile(r"[\t\n\r]")


class AllowlistAudit(HTMLParser):
    """Collects everything in an HTML fragment that is outside the allowlists."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWLISTS["tags"]:
            self.problems.append(f"tag <{tag}>")
        free = set(ALLOWLISTS["attributes"].get(tag, []))
        restricted = ALLOWLISTS["attribute_values"].get(tag, {})
        for name, value in attrs:
            if name == "rel" and tag == "a":
                if value != ALLOWLISTS["link_rel"]:
                    self.problems.append(f"rel={value!r}")
            elif name in restricted:
                if value not in restricted[name]:
                    self.problems.append(f"{name}={value!r} on <{tag}>")
            elif name not in free:
                self.problems.append(f"attribute {name} on <{tag}>")
            if name == "href" and value is not None:
                self._check_url(value)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag not in ALLOWLISTS["tags"]:
            self.problems.append(f"end tag </{tag}>")

    def handle_comment(self, data: str) -> None:
        self.problems.append(f"comment {data!r}")

    def handle_decl(self, decl: str) -> None:
        self.problems.append(f"declaration {decl!r}")

    def handle_pi(self, data: str) -> None:
        self.problems.append(f"processing instruction {data!r}")

    def unknown_decl(self, data: str) -> None:
        self.problems.append(f"declaration {data!r}")

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def _check_url(self, url: str) -> None:
        seen = _IGNORED_BY_BROWSERS.sub("", url).strip("\x00- ")
        scheme = _SCHEME.match(seen)
        if scheme and scheme.group(1).lower() not in ALLOWLISTS["url_schemes"]:
            self.problems.append(f"scheme in href={url!r}")
        if "script:" in seen.lower() or seen.lower().startswith("data:"):
            self.problems.append(f"script or data URL in href={url!r}")


def audit(html: str) -> list[str]:
    parser = AllowlistAudit()
    parser.feed(html)
    parser.close()
    return parser.problems


def _messages(vector: str) -> list[AnswerMessage]:
    safe = {"uri": "https://ok.example/page", "title": "Safe"}
    entity = {"entity_type": "node", "entity_id": "1", "title": "By url"}
    return [
        build_message(f"{vector}\n\nClaim [1] and [2].", [safe]),
        build_message("Claim [1].", [{"uri": "https://ok.example/t", "title": vector}]),
        build_message("Claim [1].", [{**safe, "description": vector}]),
        build_message("Claim [1].", [{"uri": vector, "title": "By uri"}]),
        build_message("Claim [1].", [{"uri": vector, "title": vector, "description": vector}]),
        build_message("Claim [1].", [{**entity, "url": vector}]),
        _with_url("entity:node/1", vector),
        _with_url(vector, vector),
    ]


def _with_url(uri: str, url: str) -> AnswerMessage:
    """``url`` in ``_meta["citelab/url"]`` as a hostile producer writes it (unchecked)."""
    link = ResourceLink(uri=uri, name="By meta", meta={SOURCE_URL_KEY: url})
    return AnswerMessage(content=[TextContent(text="Claim [1]."), link])


def test_there_are_enough_vectors(xss_vectors: list[str]) -> None:
    assert len(xss_vectors) >= 30
    assert len(set(xss_vectors)) == len(xss_vectors)


def test_the_audit_itself_catches_hostile_html() -> None:
    assert audit('<a href="javascript:alert(1)">x</a>') == [
        "scheme in href='javascript:alert(1)'",
        "script or data URL in href='javascript:alert(1)'",
    ]
    assert audit('<img src=x onerror="a()">') == [
        "tag <img>",
        "attribute src on <img>",
        "attribute onerror on <img>",
    ]
    assert audit('<p onclick="a()">x</p>') == ["attribute onclick on <p>"]
    assert audit('<a href="java&#x09;script:x">x</a>') != []


def test_no_vector_escapes_any_renderer(xss_vectors: list[str]) -> None:
    problems = []
    for vector in xss_vectors:
        for message in _messages(vector):
            outputs = {
                "answer": render_answer_html(message),
                "sources": render_sources_html(message),
                "notebook": message._repr_html_(),
                "markdown sources": render_answer_html(render_sources_markdown(message)),
            }
            for where, html in outputs.items():
                problems += [f"{vector!r} in {where}: {p}" for p in audit(html)]
    assert problems == []


@pytest.mark.parametrize(
    "uri",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "\x01javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "https://ok.example/\njavascript:x",
    ],
)
def test_an_unsafe_uri_never_becomes_a_link(uri: str) -> None:
    message = build_message("Claim [1].", [{"uri": uri, "title": "T"}])
    html = render_sources_html(message, id_prefix="p")
    assert "<a " not in html
    assert "<code>" in html


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\nscript:alert(1)",
        "\x01javascript:alert(1)",
        "javascript&colon;alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "https://ok.example/\njavascript:x",
        "[click](javascript:alert(1))",
        '/x"onclick="alert(1)',
        "/x'onclick='alert(1)",
        "/x><script>alert(1)</script>",
    ],
)
def test_a_hostile_url_in_meta_never_becomes_a_link(url: str) -> None:
    built = build_message("Claim [1].", [{"entity_type": "node", "entity_id": "1", "url": url}])
    for message in (built, _with_url("entity:node/1", url)):
        html = render_sources_html(message, id_prefix="p")
        markdown = render_answer_html(render_sources_markdown(message))
        for rendered in (html, markdown, message._repr_html_()):
            assert audit(rendered) == []
            assert "<a " not in rendered.replace('<a href="#cite-', "")
    codes = {v.code for v in validate_message(_with_url("entity:node/1", url))}
    assert codes == {"unsafe_url"}


def test_a_script_title_is_inert_text() -> None:
    title = "<script>alert(1)</script>"
    message = build_message("Claim [1].", [{"uri": "https://ok.example", "title": title}])
    html = render_sources_html(message, id_prefix="p")
    parser = AllowlistAudit()
    parser.feed(html)
    assert parser.problems == []
    assert title in "".join(parser.text)
    assert "&lt;script&gt;" in html
