"""The custom messages between the widgets' kernel side and their front end.

Front end → kernel (validated here, every problem named): ``ask``
``{request_id, question, followup}``, ``feedback`` ``{request_id, turn_id, value,
comment?}``, ``stop`` ``{request_id}``, ``new_conversation`` ``{request_id}`` and
``document`` ``{request_id, uri}`` to a chat; ``reply`` ``{text}`` from a message view's
suggested-reply chip.

Kernel → front end: ``turn_start``, ``references``, ``token``, ``done``, ``error`` (each
carries ``turn_id``; the bodies are the :mod:`citelab.events` models, a chat's ``done`` also
``rounds``), ``reset`` (New
conversation: every view clears) and ``ack`` ``{request_id, error?, document?}`` answering a
request. ``js/contract/model.js`` is the front end's copy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from citelab._errors import InvalidInput
from citelab.events import DoneEvent, ErrorEvent, Reference, ReferencesEvent, TokenEvent

__all__ = [
    "AskRequest",
    "ChatRequest",
    "DocumentRequest",
    "FeedbackRequest",
    "NewConversationRequest",
    "ReplyRequest",
    "StopRequest",
    "ack_message",
    "done_message",
    "error_message",
    "parse_chat_request",
    "parse_reply",
    "references_message",
    "request_id_of",
    "reset_message",
    "token_message",
    "turn_start_message",
]


class AskRequest(BaseModel):
    """A question typed into the chat, or a suggested-reply chip clicked."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["ask"]
    request_id: str | None = Field(default=None, max_length=200)
    """Echoed in the ``ack``."""
    question: str
    """The question as typed (validated by the chat before it is accepted)."""
    followup: bool = False
    """True continues the conversation; false starts a new one (the view clears)."""


class FeedbackRequest(BaseModel):
    """A thumbs up/down (and optional comment) on an answered turn."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["feedback"]
    request_id: str | None = Field(default=None, max_length=200)
    """Echoed in the ``ack``."""
    turn_id: str
    """The turn rated (kernel-assigned id)."""
    value: Literal["up", "down"]
    """The rating."""
    comment: str | None = None
    """Optional free text."""


class StopRequest(BaseModel):
    """The Stop button: cancel the answer streaming and the questions waiting."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["stop"]
    request_id: str | None = Field(default=None, max_length=200)
    """Echoed in the ``ack``."""


class NewConversationRequest(BaseModel):
    """The New conversation button: cancel what runs and forget the conversation."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["new_conversation"]
    request_id: str | None = Field(default=None, max_length=200)
    """Echoed in the ``ack``."""


class DocumentRequest(BaseModel):
    """A source card's Read button: the ``entity:`` document, for the local document view."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["document"]
    request_id: str | None = Field(default=None, max_length=200)
    """Echoed in the ``ack`` (which carries the document)."""
    uri: str = Field(min_length=1, max_length=1000)
    """The source's ``entity:<type>/<id>`` URI."""


class ReplyRequest(BaseModel):
    """A suggested-reply chip clicked in a message view."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["reply"]
    text: str = Field(min_length=1)
    """The reply's message (its label when it has none)."""


_AnyChatRequest = (
    AskRequest | FeedbackRequest | StopRequest | NewConversationRequest | DocumentRequest
)
ChatRequest = Annotated[_AnyChatRequest, Field(discriminator="type")]
"""What a chat's front end may send."""

_CHAT_REQUEST: TypeAdapter[_AnyChatRequest] = TypeAdapter(ChatRequest)


def parse_chat_request(content: object) -> _AnyChatRequest:
    """The request in ``content``, or :class:`InvalidInput` naming every wrong field."""
    try:
        return _CHAT_REQUEST.validate_python(content)
    except ValidationError as exc:
        raise InvalidInput(_describe(exc)) from exc


def parse_reply(content: object) -> ReplyRequest:
    """A message view's reply request, or :class:`InvalidInput` naming every wrong field."""
    try:
        return ReplyRequest.model_validate(content)
    except ValidationError as exc:
        raise InvalidInput(_describe(exc)) from exc


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "message"
        problems.append(f"{where}: {error['msg']}")
    return "bad front-end message: " + "; ".join(problems)


def request_id_of(content: object) -> str | None:
    """The ``request_id`` of a message that failed validation, when it has a usable one."""
    if isinstance(content, Mapping):
        value = content.get("request_id")
        if isinstance(value, str) and len(value) <= 200:
            return value
    return None


def ack_message(
    request_id: str | None, error: str | None = None, *, document: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The answer to a request: accepted (with the document a ``document`` request asked
    for), or refused with a message for the person."""
    message: dict[str, Any] = {"type": "ack", "request_id": request_id}
    if error is not None:
        message["error"] = error
    elif document is not None:
        message["document"] = document
    return message


def reset_message() -> dict[str, Any]:
    """New conversation: every view of the chat (and its panels) clears."""
    return {"type": "reset"}


def turn_start_message(turn_id: str, question: str, followup: bool) -> dict[str, Any]:
    return {"type": "turn_start", "turn_id": turn_id, "question": question, "followup": followup}


def references_message(turn_id: str, references: Sequence[Reference]) -> dict[str, Any]:
    event = ReferencesEvent(references=list(references))
    return {**event.model_dump(mode="json"), "turn_id": turn_id}


def token_message(turn_id: str, text: str) -> dict[str, Any]:
    return {**TokenEvent(text=text).model_dump(mode="json"), "turn_id": turn_id}


def done_message(
    turn_id: str, event: DoneEvent, *, rounds: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The ``done`` event, with the turn's "Prompt and rounds" data when given (the chat's:
    the view draws a turn from these messages before the ``turns`` trait, so what the trait
    holds of a done turn must be here too)."""
    message = {**event.model_dump(mode="json"), "turn_id": turn_id}
    if rounds is not None:
        message["rounds"] = rounds
    return message


def error_message(turn_id: str, event: ErrorEvent) -> dict[str, Any]:
    return {**event.model_dump(mode="json"), "turn_id": turn_id}
