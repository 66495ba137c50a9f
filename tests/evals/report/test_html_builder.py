"""The report's table builder: every text escaped by default, Safe markup left alone."""

from __future__ import annotations

from citelab.evals.report._html import Cell, Safe, escape, table

HOSTILE = '<script>alert("x")</script>&\''


def test_plain_cells_headers_classes_and_titles_are_escaped() -> None:
    out = table(
        [HOSTILE],
        [[HOSTILE, Cell(HOSTILE, cls='a" onclick="x', title=HOSTILE)]],
        cls="t",
    )
    assert "<script>" not in out
    assert 'onclick="x"' not in out
    assert out == (
        '<table class="t">'
        "<tr><th>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#x27;</th></tr>"
        "<tr><td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#x27;</td>"
        '<td class="a&quot; onclick=&quot;x" '
        'title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#x27;">'
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#x27;</td></tr></table>"
    )


def test_safe_markup_is_inserted_as_it_is_and_never_escaped_twice() -> None:
    link = Safe(f'<a href="#x">{escape(HOSTILE)}</a>')
    out = table([], [[link, Cell(link, header=True), 0.5]])
    assert out == f"<table><tr><td>{link}</td><th>{link}</th><td>0.5</td></tr></table>"
    assert escape(link) is link
