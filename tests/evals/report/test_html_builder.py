"""The report's table builder: every text escaped by default, Safe markup left alone."""

from __future__ import annotations

from citelab.evals.report._html import Cell, Row, Safe, escape, table

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


def test_header_cells_take_a_title_rows_a_class_and_cells_a_colspan() -> None:
    out = table(
        ["metric", Cell(Safe("<b>a</b>"), title=HOSTILE)],
        [Row([HOSTILE, Cell("note", cls="note", colspan=2)], cls=HOSTILE), ["x", "y"]],
    )
    assert out == (
        "<table><tr><th>metric</th>"
        '<th title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#x27;"><b>a</b></th>'
        '</tr><tr class="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#x27;">'
        "<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#x27;</td>"
        '<td colspan="2" class="note">note</td></tr><tr><td>x</td><td>y</td></tr></table>'
    )
