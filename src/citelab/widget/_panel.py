"""``citelab.SourcesPanel``: the references of a chat, in a cell of their own.

The chat forwards every event it sends to each of its panels (the same custom messages) and
mirrors its ``turns`` trait into theirs, so a panel placed anywhere, opened early or late,
shows the same sources as the chat. A chat may have no panel, one, or several.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import traitlets

from citelab._errors import InvalidInput
from citelab.contract import render_sources_html, sanitize_html
from citelab.widget._display import StaticFallbackWidget
from citelab.widget._static import bundle

if TYPE_CHECKING:
    from citelab.widget._chat import Chat

__all__ = ["SourcesPanel"]


class SourcesPanel(StaticFallbackWidget):
    """The Sources list of ``chat`` as its own widget (``heading`` titles it)."""

    _esm = bundle("widget_sources.js")
    _css = bundle("citelab.css")

    turns = traitlets.List(traitlets.Dict()).tag(sync=True)
    """Mirrored from the chat's ``turns``."""
    heading = traitlets.Unicode("Sources").tag(sync=True)
    """The panel's title."""

    def __init__(self, chat: Chat, *, heading: str = "Sources", **kwargs: Any) -> None:
        from citelab.widget._chat import Chat

        if not isinstance(chat, Chat):
            raise InvalidInput(f"chat: expected a citelab.Chat, not {type(chat).__name__}")
        super().__init__(heading=heading, **kwargs)
        self.chat = chat
        chat.attach_panel(self)

    def close(self) -> None:
        """Stop following the chat and close the widget."""
        chat = getattr(self, "chat", None)
        if chat is not None:
            chat.detach_panel(self)
        super().close()

    def static_html(self) -> str:
        shown = {str(turn.get("turn_id")) for turn in self.turns}
        parts = []
        for turn in self.chat.history:
            if turn.turn_id not in shown or turn.message is None:
                continue
            sources = render_sources_html(turn.message, id_prefix=f"p{turn.turn_id}")
            if sources:
                question = html.escape(turn.question)
                parts.append(f"<p><strong>{html.escape(self.heading)}</strong> — {question}</p>")
                parts.append(sources)
        if not parts:
            parts.append(f"<p><em>{html.escape(self.heading)}: none yet.</em></p>")
        return sanitize_html("".join(parts))
