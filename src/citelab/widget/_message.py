"""``citelab.MessageView``: any answer message, drawn by the front end.

It takes an :class:`~citelab.contract.AnswerMessage` (ours, one read from JSON, one converted
from another system's shape) or its wire dict or JSON text. The input is validated first;
violations are kept in the ``violations`` trait and shown in the static HTML, never raised,
so a broken message from elsewhere can still be looked at.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping
from typing import Any

import traitlets
from pydantic import ValidationError

from citelab._errors import InvalidInput
from citelab.answers import Answer
from citelab.contract import (
    AnswerMessage,
    MetaRegistry,
    Violation,
    render_message_html,
    sanitize_html,
    validate_message,
)
from citelab.widget._display import StaticFallbackWidget
from citelab.widget._protocol import parse_reply
from citelab.widget._static import bundle

__all__ = ["MessageInput", "MessageView"]

MessageInput = AnswerMessage | Answer | Mapping[str, Any] | str | bytes
"""What a message view accepts."""


class MessageView(StaticFallbackWidget):
    """Renders one answer message; ``on_reply(text)`` runs when a suggested reply is clicked."""

    _esm = bundle("widget_message.js")
    _css = bundle("citelab.css")

    message = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    """The message's wire dict (``None`` when the input was not a JSON object)."""
    violations = traitlets.List(traitlets.Dict()).tag(sync=True)
    """Every contract violation: ``{path, code, message}``."""

    def __init__(
        self,
        message: MessageInput,
        *,
        on_reply: Callable[[str], object] | None = None,
        registry: MetaRegistry | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.registry = registry
        self.on_reply = on_reply
        self.replies: list[str] = []
        """Every suggested reply clicked, in order."""
        self.on_msg(_route_reply)
        self.show(message)

    def show(self, message: MessageInput) -> None:
        """Replace the message (validated again)."""
        wire, found = _wire(message)
        self.set_trait("message", wire)
        if wire is not None:
            found = validate_message(wire, self.registry)
        self.violations = _dumped(found)
        self.refresh_static()

    @traitlets.observe("message")
    def _revalidate(self, change: dict[str, Any]) -> None:
        if change["new"] is not None:
            self.violations = _dumped(validate_message(change["new"], self.registry))
        self.refresh_static()

    @property
    def valid(self) -> bool:
        """True when the message keeps the contract."""
        return not self.violations

    def handle_reply(self, content: object) -> None:
        """Act on a front-end ``reply`` message (a chip clicked)."""
        try:
            reply = parse_reply(content)
        except InvalidInput:
            return  # nothing to answer: a reply has no request id
        self.replies.append(reply.text)
        if self.on_reply is not None:
            self.on_reply(reply.text)

    def static_html(self) -> str:
        parts = [_message_html(self.message)]
        if self.violations:
            items = "".join(
                f"<li><code>{html.escape(str(v.get('path')))}</code> "
                f"{html.escape(str(v.get('message')))} [{html.escape(str(v.get('code')))}]</li>"
                for v in self.violations
            )
            count = len(self.violations)
            parts.append(f"<p><strong>{count} contract violation(s)</strong></p><ul>{items}</ul>")
        return sanitize_html("".join(parts))


def _route_reply(widget: MessageView, content: object, buffers: object) -> None:
    widget.handle_reply(content)


def _wire(message: MessageInput) -> tuple[dict[str, Any] | None, list[Violation]]:
    """The wire dict of ``message`` and the violations found reading it (not validating)."""
    if isinstance(message, Answer):
        message = message.message
    if isinstance(message, AnswerMessage):
        return message.to_wire(), []
    if isinstance(message, str | bytes):
        try:
            data = json.loads(message)
        except (ValueError, RecursionError):
            return None, validate_message(message)
        return (data, []) if isinstance(data, dict) else (None, validate_message(data))
    if isinstance(message, Mapping):
        return _json_copy(message)
    return None, validate_message(message)


def _json_copy(message: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[Violation]]:
    # The trait crosses the comm as JSON: a value that is not JSON cannot be shown.
    try:
        return json.loads(json.dumps(message, allow_nan=False)), []
    except (TypeError, ValueError) as exc:
        problem = Violation(path="$", code="wrong_type", message=f"not JSON data: {exc}")
        return None, [problem]


def _dumped(violations: list[Violation]) -> list[dict[str, Any]]:
    return [violation.model_dump() for violation in violations]


def _message_html(wire: dict[str, Any] | None) -> str:
    if wire is None:
        return "<p><em>No message to show.</em></p>"
    try:
        message = AnswerMessage.model_validate(wire)
    except ValidationError:
        return "<p><em>This message cannot be rendered: see the violations below.</em></p>"
    return render_message_html(message)
