"""``_meta["citelab/url"]`` on resource_link blocks: an entity source's web address.

Validated (http(s) or relative, nothing else), written by build_message when a source's url
differs from its uri, and used by the Python renderers as the link of the source.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import Annotations, ResourceLink, TextContent

from citelab.contract import (
    SOURCE_URL_KEY,
    AnswerMessage,
    build_message,
    is_reserved_meta_key,
    meta_key_problem,
    render_sources_html,
    render_sources_markdown,
    validate_message,
)

Wire = dict[str, Any]
FEES = {"entity_type": "node", "entity_id": "5", "title": "Fees"}
SECOND_LINK = f'content[2]._meta["{SOURCE_URL_KEY}"]'


def found(data: object) -> list[tuple[str, str]]:
    return [(v.path, v.code) for v in validate_message(data)]


def two_sources() -> Wire:
    return build_message("Fees [1] and rooms [2].", [FEES, {"uri": "entity:node/6"}]).to_wire()


def test_the_key_follows_mcp_naming_rules() -> None:
    assert meta_key_problem(SOURCE_URL_KEY) is None
    assert not is_reserved_meta_key(SOURCE_URL_KEY)


def test_the_example_carries_the_key_where_url_and_uri_differ(example_wire: Wire) -> None:
    links = example_wire["content"][1:]
    assert [link.get("_meta") for link in links] == [
        {SOURCE_URL_KEY: "https://harbour-library.example/opening-hours"},
        {SOURCE_URL_KEY: "/library/study-rooms"},
        None,  # its url is its uri
    ]
    assert found(example_wire) == []


@pytest.mark.parametrize(
    "url",
    [
        "https://uni.example/fees",
        "HTTP://uni.example",
        "/fees",
        "fees.html",
        "../fees?term=1&lang=en",
        "?term=1",
        "#fees",
        "/fees/2025:spring?at=09:00",
        "//cdn.uni.example/fees",
    ],
)
def test_valid_payloads(url: str) -> None:
    wire = two_sources()
    wire["content"][2]["_meta"] = {SOURCE_URL_KEY: url}
    assert found(wire) == []


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ("javascript:alert(1)", "unsafe_url"),
        ("JaVaScRiPt:alert(1)", "unsafe_url"),
        ("data:text/html,<script>alert(1)</script>", "unsafe_url"),
        ("vbscript:msgbox(1)", "unsafe_url"),
        ("mailto:fees@uni.example", "unsafe_url"),
        ("entity:node/6", "unsafe_url"),
        ("java\tscript:alert(1)", "unsafe_url"),
        (" javascript:alert(1)", "unsafe_url"),
        ("\x01javascript:alert(1)", "unsafe_url"),
        ("https://uni.example/a b", "unsafe_url"),
        ("https:", "unsafe_url"),
        ("http:/fees", "unsafe_url"),
        ("javascript&colon;alert(1)", "unsafe_url"),
        ("[x](javascript:alert(1))", "unsafe_url"),
        ('/fees"onmouseover="alert(1)', "unsafe_url"),
        ("/fees><script>", "unsafe_url"),
        ("", "empty_value"),
        (5, "wrong_type"),
        (None, "wrong_type"),
        (["https://uni.example"], "wrong_type"),
        ({"href": "https://uni.example"}, "wrong_type"),
    ],
)
def test_invalid_payloads_name_the_block_and_the_key(payload: object, code: str) -> None:
    wire = two_sources()
    wire["content"][2]["_meta"] = {SOURCE_URL_KEY: payload}
    assert found(wire) == [(SECOND_LINK, code)]


def test_an_unsafe_url_says_which_scheme_is_refused() -> None:
    wire = two_sources()
    wire["content"][2]["_meta"] = {SOURCE_URL_KEY: "javascript:alert(1)"}
    (violation,) = validate_message(wire)
    assert violation.message == "a link URL must be http(s) or relative, not javascript:"


@pytest.mark.parametrize(
    ("kind", "path"),
    [("text", f'content[0]._meta["{SOURCE_URL_KEY}"]'), ("message", f'_meta["{SOURCE_URL_KEY}"]')],
)
def test_the_key_belongs_on_resource_links_only(kind: str, path: str) -> None:
    wire = two_sources()
    holder = wire["content"][0] if kind == "text" else wire
    holder["_meta"] = {SOURCE_URL_KEY: "https://uni.example"}
    violations = validate_message(wire)
    assert [(v.path, v.code) for v in violations] == [(path, "meta_key_placement")]
    assert violations[0].message == f"'{SOURCE_URL_KEY}' belongs on resource_link, not on {kind}"


@pytest.mark.parametrize(
    ("source", "meta"),
    [
        ({**FEES, "url": "https://uni.example/fees"}, {SOURCE_URL_KEY: "https://uni.example/fees"}),
        ({**FEES, "url": "/fees"}, {SOURCE_URL_KEY: "/fees"}),
        ({"uri": "https://uni.example/fees", "url": "https://uni.example/fees"}, None),
        ({"url": "https://uni.example/fees"}, None),  # the url became the uri
        ({**FEES, "url": ""}, None),
        ({**FEES, "url": None}, None),
        ({**FEES, "url": 5}, None),
        ({**FEES, "url": "javascript:alert(1)"}, None),  # untrusted: left out, never fatal
        ({**FEES, "url": "https://uni.example/a b"}, None),
    ],
)
def test_build_message_writes_a_safe_url_that_differs_from_the_uri(
    source: dict[str, Any], meta: dict[str, str] | None
) -> None:
    message = build_message("Fees [1].", [source])
    assert message.sources[0].meta == meta
    assert validate_message(message) == []


def test_a_ready_resource_link_keeps_its_own_meta() -> None:
    link = ResourceLink(uri="entity:node/5", name="Fees", meta={SOURCE_URL_KEY: "/fees"})
    assert build_message("Fees [1].", [link]).sources[0].meta == {SOURCE_URL_KEY: "/fees"}


def test_rendering_links_an_entity_source_to_its_url_and_shows_its_uri() -> None:
    message = build_message(
        "Fees [1], rooms [2], news [3].",
        [
            {**FEES, "url": "https://uni.example/fees?term=1&lang=en"},
            {"entity_type": "node", "entity_id": "6", "title": "Rooms", "url": "/rooms"},
            {"url": "https://news.example/", "title": "News"},
        ],
    )
    assert render_sources_html(message, id_prefix="p") == (
        '<ol class="citelab-sources">'
        '<li id="cite-p-1" class="citelab-source" data-ref-index="1">'
        '<a href="https://uni.example/fees?term=1&amp;lang=en" target="_blank" '
        'rel="noopener noreferrer">Fees</a> <code>entity:node/5</code></li>'
        '<li id="cite-p-2" class="citelab-source" data-ref-index="2">'
        '<a href="/rooms" target="_blank" rel="noopener noreferrer">Rooms</a> '
        "<code>entity:node/6</code></li>"
        '<li id="cite-p-3" class="citelab-source" data-ref-index="3">'
        '<a href="https://news.example/" target="_blank" rel="noopener noreferrer">News</a>'
        "</li></ol>"
    )
    assert render_sources_markdown(message).splitlines() == [
        r"1. [Fees](<https://uni.example/fees?term=1\&lang=en>) (` entity:node/5 `)",
        "2. [Rooms](</rooms>) (` entity:node/6 `)",
        "3. [News](<https://news.example/>)",
    ]
    notebook = message._repr_html_()
    assert '<a href="/rooms" target="_blank" rel="noopener noreferrer">Rooms</a>' in notebook


def test_the_example_renders_its_entity_sources_as_links(example_message: AnswerMessage) -> None:
    html = render_sources_html(example_message, id_prefix="p")
    assert (
        '<a href="https://harbour-library.example/opening-hours" target="_blank" '
        'rel="noopener noreferrer">Harbour Library opening hours</a> '
        "<code>entity:node/101</code>"
    ) in html
    assert "<code>https://example.org/exam-weeks</code>" not in html


def _linked(uri: str, url: object) -> AnswerMessage:
    """A message whose link carries ``url`` as built by hand (no build_message check)."""
    link = ResourceLink(
        uri=uri, name="Fees", annotations=Annotations(priority=1.0), meta={SOURCE_URL_KEY: url}
    )
    return AnswerMessage(content=[TextContent(text="Fees [1]."), link])


@pytest.mark.parametrize(
    ("uri", "href"),
    [
        ("entity:node/5", None),  # no link at all: the entity uri is shown as code
        ("https://uni.example/fees", "https://uni.example/fees"),  # the uri's own link
    ],
)
@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x", 7, ""])
def test_an_invalid_payload_falls_back_to_the_uri(uri: str, href: str | None, url: object) -> None:
    message = _linked(uri, url)
    html = render_sources_html(message, id_prefix="p")
    markdown = render_sources_markdown(message)
    if href is None:
        assert "<a " not in html
        assert f"<code>{uri}</code>" in html
        assert markdown == f"1. Fees (` {uri} `)"
    else:
        assert f'<a href="{href}" target="_blank"' in html
        assert "<code>" not in html
        assert markdown == f"1. [Fees](<{href}>)"
