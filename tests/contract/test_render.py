"""Rendering: answer HTML with linked markers, the source list, Markdown, notebooks."""

from __future__ import annotations

import re

import pytest
from mcp_types import Annotations, ResourceLink, TextContent

from citelab import InvalidInput
from citelab.contract import (
    AnswerMessage,
    build_message,
    citation_id_prefix,
    render_answer_html,
    render_sources_html,
    render_sources_markdown,
)


def test_markers_link_to_the_source_list(example_message: AnswerMessage) -> None:
    prefix = citation_id_prefix(example_message)
    answer = render_answer_html(example_message)
    sources = render_sources_html(example_message)
    targets = re.findall(r'href="#(cite-[0-9a-f]+-\d)"', answer)
    ids = re.findall(r'<li id="(cite-[0-9a-f]+-\d)"', sources)
    assert ids == [f"cite-{prefix}-{n}" for n in (1, 2, 3)]
    assert set(targets) == set(ids)
    assert len(targets) == 6  # [1] [2] [1][3] [2] [3]


def test_marker_grammar_and_what_stays_text() -> None:
    html = render_answer_html(
        "A [1][2], B [1, 3], C [4], D [0], `[1]` and [x [1]](https://a.example) [2](https://b.example)",
        id_prefix="t",
        source_count=3,
    )
    assert html.count('href="#cite-t-1"') == 2
    assert html.count('href="#cite-t-2"') == 1
    assert html.count('href="#cite-t-3"') == 1
    assert "[4]" in html
    assert "[0]" in html
    assert "<code>[1]</code>" in html
    assert '<a href="https://a.example" rel="noopener noreferrer">x [1]</a>' in html
    # a link whose text could pass for a marker says where it goes
    assert '<a href="https://b.example" rel="noopener noreferrer">2 (b.example)</a>' in html


def test_marker_link_shape() -> None:
    html = render_answer_html("Fees [2].", id_prefix="turn-7", source_count=2)
    assert html == (
        '<p>Fees [<a href="#cite-turn-7-2" class="citation" data-ref-index="2" '
        'rel="noopener noreferrer">2</a>].</p>\n'
    )


def test_markers_inside_code_blocks_stay_text() -> None:
    html = render_answer_html("```\nsee [1]\n```\n\n    indented [1]", id_prefix="p")
    assert "#cite" not in html
    assert html.count("[1]") == 2


def test_lists_are_always_tight() -> None:
    html = render_answer_html("- a\n\n- b\n\n  more b\n\n1. c\n\n2. d")
    assert "<p>" not in html
    assert "<li>b<br>\nmore b</li>" in html
    assert "<li>a</li>" in html


def test_table_alignment_becomes_data_align() -> None:
    html = render_answer_html("| a | b |\n|:-|-:|\n| x | y |")
    assert '<th data-align="left">a</th>' in html
    assert '<td data-align="right">y</td>' in html
    assert "style" not in html


def test_raw_html_is_escaped_and_unsafe_links_stay_text() -> None:
    html = render_answer_html("<b>x</b> [a](javascript:alert(1)) <https://ok.example>")
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert "[a](javascript:alert(1))" in html
    assert '<a href="https://ok.example" rel="noopener noreferrer">https://ok.example</a>' in html


def test_id_prefix_must_be_safe() -> None:
    with pytest.raises(InvalidInput, match="id_prefix"):
        render_answer_html("x", id_prefix='a" onclick="x')
    with pytest.raises(InvalidInput, match="answer must be an AnswerMessage or a string"):
        render_answer_html(5)  # type: ignore[arg-type]


def _link(uri: str, name: str, priority: float | None) -> ResourceLink:
    return ResourceLink(uri=uri, name=name, annotations=Annotations(priority=priority))


def test_source_list_orders_by_priority_stable_on_ties() -> None:
    message = AnswerMessage(
        content=[
            TextContent(text="t"),
            _link("https://c.example", "C", 0.1),
            _link("https://b1.example", "B1", 0.5),
            _link("https://a.example", "A", 0.9),
            _link("https://b2.example", "B2", 0.5),
        ]
    )
    html = render_sources_html(message, id_prefix="p")
    assert re.findall(r">([AB12C]+)</a>", html) == ["A", "B1", "B2", "C"]
    markdown = render_sources_markdown(message)
    assert [line.split("[")[1].split("]")[0] for line in markdown.splitlines()] == [
        "A",
        "B1",
        "B2",
        "C",
    ]


def test_source_items_are_tight_and_open_in_a_new_tab() -> None:
    message = build_message(
        "t",
        [
            {"url": "https://x.example/a?b=1&c=2", "title": "X", "description": "About X"},
            {"entity_type": "node", "entity_id": "5", "title": "Fees"},
        ],
    )
    html = render_sources_html(message, id_prefix="p")
    assert html == (
        '<ol class="citelab-sources">'
        '<li id="cite-p-1" class="citelab-source" data-ref-index="1">'
        '<a href="https://x.example/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">X</a>'
        " — About X</li>"
        '<li id="cite-p-2" class="citelab-source" data-ref-index="2">'
        "Fees <code>entity:node/5</code></li></ol>"
    )
    assert 'target="_blank"' not in render_sources_html(message, id_prefix="p", new_tab=False)


def test_sources_markdown_escapes_and_links_only_safe_uris() -> None:
    message = build_message(
        "t",
        [
            {"url": "https://x.example/a(b)<c>", "title": "X *bold* [1]"},
            {"url": "https://x.example/a b", "title": "Spaced"},
            {"uri": "javascript:alert(1)", "title": "Evil"},
            {"uri": "entity:node/`5`", "title": "Fees", "description": "Due _soon_"},
        ],
    )
    assert render_sources_markdown(message).splitlines() == [
        r"1. [X \*bold\* \[1\]](<https://x.example/a(b)%3Cc%3E>)",
        "2. Spaced (` https://x.example/a b `)",  # whitespace in a URI: shown, not linked
        "3. Evil (` javascript:alert(1) `)",
        r"4. Fees (`` entity:node/`5` ``) — Due \_soon\_",
    ]
    rendered = render_answer_html(render_sources_markdown(message))
    assert (
        '<a href="https://x.example/a(b)%3Cc%3E" rel="noopener noreferrer">X *bold* [1]</a>'
        in rendered
    )


def test_a_message_without_sources_renders_no_list() -> None:
    message = build_message("Nothing found.", [])
    assert render_sources_html(message) == ""
    assert render_sources_markdown(message) == ""
    assert message._repr_html_() == "<p>Nothing found.</p>\n"


def test_repr_html_shows_answer_and_sources(example_message: AnswerMessage) -> None:
    html = example_message._repr_html_()
    assert html.startswith("<p>Evening study rooms")
    assert "<p><strong>Sources</strong></p>" in html
    assert html.endswith("</ol>")
    assert "Harbour Library opening hours" in html


def test_same_message_same_prefix_different_message_different_prefix(
    example_message: AnswerMessage,
) -> None:
    copy = AnswerMessage.model_validate_json(example_message.to_json())
    other = build_message("Other", [{"uri": "u"}])
    assert citation_id_prefix(copy) == citation_id_prefix(example_message)
    assert citation_id_prefix(other) != citation_id_prefix(example_message)


@pytest.mark.parametrize(
    ("fragment", "sanitized"),
    [
        # nh3 kept title and lang on every tag (its default generic attributes)
        ('<p title="t" lang="en">x</p>', "<p>x</p>"),
        (
            '<a href="http://x.example" title="t">x</a>',
            '<a href="http://x.example" rel="noopener noreferrer">x</a>',
        ),
        # id and class: only the values the renderers write
        ('<li id="clobber" class="x">x</li>', "<li>x</li>"),
        (
            '<li id="cite-ab-3" class="citelab-source">x</li>',
            '<li id="cite-ab-3" class="citelab-source">x</li>',
        ),
        (
            '<ol class="citelab-sources"><li>x</li></ol>',
            '<ol class="citelab-sources"><li>x</li></ol>',
        ),
        ('<code class="language-py evil">x</code>', "<code>x</code>"),
        # a scheme hidden behind characters the front end drops is no link there, nor here
        ('<a href="\u2028javascript:alert(1)">x</a>', '<a rel="noopener noreferrer">x</a>'),
        ('<a href="\x01java\x03script:alert(1)">x</a>', '<a rel="noopener noreferrer">x</a>'),
        ("x<noscript><p>inside</p></noscript>ok", "xok"),
    ],
)
def test_sanitize_html_keeps_exactly_what_the_allowlists_name(
    fragment: str, sanitized: str
) -> None:
    from citelab.contract import sanitize_html

    assert sanitize_html(fragment) == sanitized


def test_a_markdown_title_is_not_kept() -> None:
    html = render_answer_html('[t](http://x.example " [@a](/a) ")')
    assert "title" not in html
    assert '<a href="http://x.example" rel="noopener noreferrer">t</a>' in html


@pytest.mark.parametrize(
    ("markdown", "link"),
    [
        (
            "[1](https://evil.example/x)",
            '<a href="https://evil.example/x" rel="noopener noreferrer">1 (evil.example)</a>',
        ),
        (
            "[[1]](https://evil.example)",
            '<a href="https://evil.example" rel="noopener noreferrer">[1] (evil.example)</a>',
        ),
        ("[2, 3](/local)", '<a href="/local" rel="noopener noreferrer">2, 3 (/local)</a>'),
        (
            "[`1`](https://u:p@evil.example:8080/)",
            '<a href="https://u:p@evil.example:8080/" rel="noopener noreferrer">'
            "<code>1</code> (evil.example:8080)</a>",
        ),
    ],
)
def test_a_link_that_looks_like_a_citation_shows_where_it_goes(markdown: str, link: str) -> None:
    assert render_answer_html(markdown) == f"<p>{link}</p>\n"


def test_ordinary_links_and_real_markers_are_left_alone() -> None:
    html = render_answer_html("See [the fees](https://a.example) [1].", id_prefix="t")
    assert '<a href="https://a.example" rel="noopener noreferrer">the fees</a>' in html
    assert '[<a href="#cite-t-1" class="citation"' in html
    assert "(a.example)" not in html


def test_a_relative_source_uri_is_shown_as_text_not_linked() -> None:
    message = build_message("Claim [1].", [{"uri": "/logout", "title": "Sign out"}])
    html = render_sources_html(message)
    assert "<a " not in html
    assert "<code>/logout</code>" in html
