"""The static fallback: sanitized HTML next to the widget view in every output.

A notebook exported without its kernel (nbconvert, GitHub) cannot run the widget; it shows
the ``text/html`` of the output instead. The HTML is built when the widget is displayed and
rebuilt into the same outputs (IPython ``update_display``) whenever the widget's content
settles, so the saved notebook holds the conversation, not the empty chat it started as.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

__all__ = ["StaticFallbackWidget"]

MimeBundle = tuple[dict[str, Any], dict[str, Any]]


class StaticFallbackWidget(anywidget.AnyWidget):
    """An anywidget whose MIME bundle also carries :meth:`static_html`."""

    _model_key = traitlets.Unicode().tag(sync=True)
    """A unique id of this widget model. anywidget hands ``initialize()`` and each
    ``render()`` a different proxy of one model, so the front end keys the state it keeps
    per model (the streamed turns every view draws) by this id."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(_model_key=uuid.uuid4().hex, **kwargs)
        self._display_ids: list[str] = []

    def static_html(self) -> str:
        """Sanitized HTML of what the widget shows (subclasses say what)."""
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> MimeBundle | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        # anywidget's own entries (widget view, text/plain) stay as they are.
        return {**data, "text/html": self.static_html()}, metadata

    def _ipython_display_(self) -> None:
        # Displayed with an id of our own, so refresh_static() can update this very output.
        bundle = self._repr_mimebundle_()
        if bundle is None:
            return
        display_id = uuid.uuid4().hex
        self._display_ids.append(display_id)
        data, metadata = bundle
        _publish(data, metadata, display_id, update=False)

    def refresh_static(self) -> None:
        """Rewrite the fallback HTML of every output this widget was displayed in."""
        if not self._display_ids:
            return
        bundle = self._repr_mimebundle_()
        if bundle is None:
            return
        data, metadata = bundle
        for display_id in self._display_ids:
            _publish(data, metadata, display_id, update=True)


def _publish(
    data: dict[str, Any], metadata: dict[str, Any], display_id: str, *, update: bool
) -> None:
    from IPython.display import display

    show: Callable[..., object] = display  # IPython's display is not typed
    show(data, metadata=metadata, raw=True, display_id=display_id, update=update)
