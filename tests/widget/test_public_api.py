"""The widget subpackage's public names."""

from __future__ import annotations

import citelab.widget


def test_public_names() -> None:
    assert citelab.widget.__all__ == [
        "DEFAULT_INTERVAL",
        "DEFAULT_MAX_TOKENS",
        "RECORD_COLUMNS",
        "SHOW_VERDICTS",
        "Chat",
        "ChatTurn",
        "LabResult",
        "Labeller",
        "MessageInput",
        "MessageView",
        "ServiceSource",
        "ShowVerdicts",
        "SourcesPanel",
        "TemplateLab",
        "TokenBatcher",
    ]
    for name in citelab.widget.__all__:
        assert getattr(citelab.widget, name) is not None


def test_each_widget_loads_its_own_bundle() -> None:
    chat, panel, view = citelab.widget.Chat, citelab.widget.SourcesPanel, citelab.widget.MessageView
    labeller = citelab.widget.Labeller
    assert "initialize" in str(chat._esm)
    assert len({str(chat._esm), str(panel._esm), str(view._esm), str(labeller._esm)}) == 4
    assert str(chat._css) == str(panel._css) == str(view._css) == str(labeller._css)
    assert ".citelab" in str(chat._css)
