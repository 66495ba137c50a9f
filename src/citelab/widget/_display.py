"""The static fallback: sanitized HTML of the widget, for where the widget cannot run.

A notebook exported without its kernel (nbconvert, GitHub), or opened again before its kernel
runs, cannot show the widget; it shows ``text/html`` instead. Displaying a widget therefore
makes two outputs: the live view, then a *static copy* of what it shows. The copy is rewritten
(IPython ``update_display``) whenever the widget's content settles, so the saved notebook holds
the conversation, not the empty chat it started as.

Two outputs, not one bundle with both: rewriting an output's data makes JupyterLab render that
output again, and an output holding the widget view would get a new view each time (the page's
view torn down and rebuilt at every turn end: focus, selection and scroll lost, every block
animated in again). Rewriting a separate ``text/html`` output leaves the live view alone. A
live view hides the static copies of its own model (``js/kernel/static_copy.js``), so the
conversation shows once; where no view runs, the copy is all there is.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

__all__ = ["MATH_IGNORE_CLASS", "STATIC_COPY_CLASS", "StaticFallbackWidget"]

MimeBundle = tuple[dict[str, Any], dict[str, Any]]

STATIC_COPY_CLASS = "citelab-static"
"""The class of a static copy's wrapper; ``citelab-static-<_model_key>`` names its widget."""

MATH_IGNORE_CLASS = "mathjax_ignore"
"""JupyterLab typesets ``$…$`` in HTML outputs as math (MathJax 3, whose default
``ignoreHtmlClass`` this is): text under an element of this class is left as written. Prompts,
answers and titles are no formulas ("$guidance", "costs $5 or $7")."""


class StaticFallbackWidget(anywidget.AnyWidget):
    """An anywidget displayed as its live view plus a static copy (:meth:`static_html`)."""

    _model_key = traitlets.Unicode().tag(sync=True)
    """A unique id of this widget model. anywidget hands ``initialize()`` and each
    ``render()`` a different proxy of one model, so the front end keys the state it keeps
    per model (the streamed turns every view draws) by this id; a live view also finds the
    static copies of its model by it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(_model_key=uuid.uuid4().hex, **kwargs)
        self._display_ids: list[str] = []

    def static_html(self) -> str:
        """Sanitized HTML of what the widget shows (subclasses say what)."""
        raise NotImplementedError

    def static_copy_html(self) -> str:
        """The static copy's output: :meth:`static_html` in a wrapper naming this widget."""
        classes = f"{STATIC_COPY_CLASS} {STATIC_COPY_CLASS}-{self._model_key} {MATH_IGNORE_CLASS}"
        return f'<div class="{classes}">{self.static_html()}</div>'

    def _repr_mimebundle_(self, **kwargs: Any) -> MimeBundle | None:
        """One bundle: the widget view, and its HTML for a reader that cannot run it."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        # anywidget's own entries (widget view, text/plain) stay as they are.
        return {**data, "text/html": self.static_html()}, metadata

    def _ipython_display_(self) -> None:
        bundle = super()._repr_mimebundle_()
        if bundle is None:
            return
        data, metadata = bundle
        # The live view. Its empty text/html keeps an export from printing the text/plain
        # repr above the static copy.
        _publish({**data, "text/html": ""}, metadata)
        # The static copy, under an id of our own so refresh_static() can rewrite it.
        display_id = uuid.uuid4().hex
        self._display_ids.append(display_id)
        _publish({"text/html": self.static_copy_html()}, {}, display_id)

    def refresh_static(self) -> None:
        """Rewrite the static copy of every output this widget was displayed in."""
        if not self._display_ids:
            return
        data = {"text/html": self.static_copy_html()}
        for display_id in self._display_ids:
            _publish(data, {}, display_id, update=True)


def _publish(
    data: dict[str, Any],
    metadata: dict[str, Any],
    display_id: str | None = None,
    *,
    update: bool = False,
) -> None:
    from IPython.display import display

    show: Callable[..., object] = display  # IPython's display is not typed
    show(data, metadata=metadata, raw=True, display_id=display_id, update=update)
