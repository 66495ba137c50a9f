"""The widget subpackage: each widget loads its own bundle (names: tests/test_public_api.py)."""

from __future__ import annotations

import citelab.widget


def test_each_widget_loads_its_own_bundle() -> None:
    chat, panel, view = citelab.widget.Chat, citelab.widget.SourcesPanel, citelab.widget.MessageView
    labeller = citelab.widget.Labeller
    assert "initialize" in str(chat._esm)
    assert len({str(chat._esm), str(panel._esm), str(view._esm), str(labeller._esm)}) == 4
    assert str(chat._css) == str(panel._css) == str(view._css) == str(labeller._css)
    assert ".citelab" in str(chat._css)
