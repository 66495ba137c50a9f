"""The OpenAPI 3.1 description of the HTTP API, generated from the pydantic models.

OpenAPI 3.1 schemas are JSON Schema 2020-12, which is what pydantic writes, so the models'
own schemas go into ``components.schemas`` unchanged. The SSE events have no standard place
in 3.1; they are listed under ``x-events`` of the ``text/event-stream`` response. A test runs
schemathesis against a live server, so the document says what the server does.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from citelab.answers import ConversationList, DocumentPayload, History
from citelab.events import DoneEvent, ErrorEvent, Question, ReferencesEvent, TokenEvent
from citelab.server._access import CSRF_HEADER
from citelab.server._api import MAX_LISTED, DocumentRequest, FeedbackRequest, FeedbackResult
from citelab.server._problems import ErrorBody

__all__ = ["openapi_document"]

_REF = "#/components/schemas/{model}"
_MODELS: list[tuple[type[BaseModel], JsonSchemaMode]] = [
    (Question, "validation"),
    (FeedbackRequest, "validation"),
    (DoneEvent, "serialization"),
    (ReferencesEvent, "serialization"),
    (TokenEvent, "serialization"),
    (ErrorEvent, "serialization"),
    (FeedbackResult, "serialization"),
    (DocumentRequest, "validation"),
    (DocumentPayload, "serialization"),
    (ConversationList, "serialization"),
    (History, "serialization"),
    (ErrorBody, "serialization"),
]
_ERRORS = {
    "400": "The body is not JSON, or a field is wrong (the message says which).",
    "401": "No valid credentials (a bearer token, or the page's session cookie), or the "
    "session has ended (code `session_expired`).",
    "403": "A session request without its CSRF header, or from another origin or host.",
    "404": "Unknown agent, or a conversation that does not exist or is not yours.",
    "405": "The path does not take this method; `Allow` lists the ones it takes.",
    "408": "The request body did not arrive in time.",
    "409": "The agent cannot answer now (disabled, no retrieval, or no feedback), or the "
    "conversation is already answering another question.",
    "413": "The body is larger than the server's limit.",
    "415": "The body is not application/json.",
    "500": "The server failed; the message gives an error id to look up in its log.",
    "502": "The model failed to answer (code `model_error`).",
    "503": "The model, or the database, cannot take the request now; `Retry-After` may say "
    "when to ask again (codes `model_unavailable`, `unavailable`).",
    "504": "The model sent nothing in time, or the answer was not done by its deadline "
    "(code `model_timeout`).",
}
_READ_ERRORS = frozenset({"400", "401", "403", "404", "405", "409", "500", "503"})
"""The errors a read of conversations can give (no body, no model)."""
_HEADERS = {
    "405": {"Allow": {"description": "The methods the path takes.", "schema": {"type": "string"}}},
    "503": {
        "Retry-After": {
            "description": "Seconds after which asking again may succeed.",
            "schema": {"type": "string", "pattern": "^[0-9]+$"},
        }
    },
}


def openapi_document(
    *, version: str, cookie_name: str, anonymous: bool, max_body_bytes: int
) -> dict[str, Any]:
    """The OpenAPI document of a server configured with these settings."""
    refs, definitions = models_json_schema(_MODELS, ref_template=_REF)
    ref = {model: refs[(model, mode)] for model, mode in _MODELS}
    security: list[dict[str, list[str]]] = [{"bearer": []}, {"session": [], "csrf": []}]
    if anonymous:
        security.append({})
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "citelab",
            "version": version,
            "description": (
                "Answers with citations. Ask with POST /api/question; send "
                "`Accept: text/event-stream` for Server-Sent Events. Request bodies are "
                f"limited to {max_body_bytes} bytes."
            ),
        },
        "paths": {
            "/api/question": {"post": _question(ref)},
            "/api/feedback": {"post": _feedback(ref)},
            "/api/document": {"post": _document(ref)},
            "/api/conversations": {"get": _conversations(ref, anonymous)},
            "/api/conversations/{conversation_id}": {"get": _conversation(ref, anonymous)},
            "/api/openapi.json": {"get": _openapi_get()},
            "/": {"get": _page_get()},
        },
        "components": {
            "schemas": definitions.get("$defs", {}),
            "securitySchemes": _security_schemes(cookie_name),
        },
        "security": security,
    }


def _question(ref: dict[type[BaseModel], Any]) -> dict[str, Any]:
    return {
        "operationId": "askQuestion",
        "summary": "Answer a question with citations (one JSON answer, or an SSE stream).",
        "requestBody": _json_body(ref[Question]),
        "responses": {
            "200": {
                "description": "The answer: the `done` payload, or the stream of events.",
                "content": {
                    "application/json": {"schema": ref[DoneEvent]},
                    "text/event-stream": {
                        "schema": {
                            "type": "string",
                            "description": (
                                "Server-Sent Events: `event: <name>` and `data: <JSON>` per "
                                "event, named and shaped as in `x-events`; the last is `done` "
                                "or `error` (whose `code` is the one a JSON answer's error "
                                "would carry). Comment lines keep an idle stream alive."
                            ),
                        },
                        "x-events": {
                            "references": ref[ReferencesEvent],
                            "token": ref[TokenEvent],
                            "done": ref[DoneEvent],
                            "error": ref[ErrorEvent],
                        },
                    },
                },
            },
            **_error_responses(ref[ErrorBody]),
        },
    }


def _feedback(ref: dict[type[BaseModel], Any]) -> dict[str, Any]:
    return {
        "operationId": "rateAnswer",
        "summary": "Rate one answered turn (a new rating replaces the old one).",
        "requestBody": _json_body(ref[FeedbackRequest]),
        "responses": {
            "200": {
                "description": "The rating was recorded.",
                "content": {"application/json": {"schema": ref[FeedbackResult]}},
            },
            **_error_responses(ref[ErrorBody]),
        },
    }


def _document(ref: dict[type[BaseModel], Any]) -> dict[str, Any]:
    return {
        "operationId": "readDocument",
        "summary": "One `entity:` source's document as the asker may read it (the page's "
        "local document view); one the asker may not read is not found.",
        "requestBody": _json_body(ref[DocumentRequest]),
        "responses": {
            "200": {
                "description": "The document.",
                "content": {"application/json": {"schema": ref[DocumentPayload]}},
            },
            **_error_responses(ref[ErrorBody]),
        },
    }


def _read_security(anonymous: bool) -> list[dict[str, list[str]]]:
    """A read needs a token or the page's session (no CSRF header: it changes nothing)."""
    security: list[dict[str, list[str]]] = [{"bearer": []}, {"session": []}]
    return [*security, {}] if anonymous else security


def _conversations(ref: dict[type[BaseModel], Any], anonymous: bool) -> dict[str, Any]:
    return {
        "operationId": "listConversations",
        "summary": "The signed-in user's recent conversations, the most recently active "
        "first (an anonymous reader's list is empty: anonymous conversations belong to "
        "nobody).",
        "security": _read_security(anonymous),
        "parameters": [
            {
                "name": "agent",
                "in": "query",
                "required": False,
                "description": "Only this agent's conversations.",
                "schema": {"type": "string", "minLength": 1, "maxLength": 200},
            },
            {
                "name": "limit",
                "in": "query",
                "required": False,
                "description": "The most conversations to list.",
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LISTED, "default": 20},
            },
        ],
        "responses": {
            "200": {
                "description": "The conversations.",
                "content": {"application/json": {"schema": ref[ConversationList]}},
            },
            **_error_responses(ref[ErrorBody], _READ_ERRORS),
        },
    }


def _conversation(ref: dict[type[BaseModel], Any], anonymous: bool) -> dict[str, Any]:
    return {
        "operationId": "getConversation",
        "summary": "A conversation's turns with the done event each ended with, to show it "
        "again (the owner rules of answering; a turn that drew on a document the reader may "
        "no longer read is withheld).",
        "security": _read_security(anonymous),
        "parameters": [
            {
                "name": "conversation_id",
                "in": "path",
                "required": True,
                "schema": {"type": "string", "minLength": 1, "maxLength": 200},
            }
        ],
        "responses": {
            "200": {
                "description": "The conversation.",
                "content": {"application/json": {"schema": ref[History]}},
            },
            **_error_responses(ref[ErrorBody], _READ_ERRORS),
        },
    }


def _openapi_get() -> dict[str, Any]:
    return {
        "operationId": "getOpenApi",
        "summary": "This document.",
        "security": [{}],
        "responses": {
            "200": {
                "description": "The OpenAPI document.",
                "content": {"application/json": {"schema": {"type": "object"}}},
            }
        },
    }


def _page_get() -> dict[str, Any]:
    return {
        "operationId": "getPage",
        "summary": "The chat page; `?token=` opens a session and redirects here.",
        "security": [{}],
        "parameters": [
            {"name": "token", "in": "query", "required": False, "schema": {"type": "string"}},
            {"name": "agent", "in": "query", "required": False, "schema": {"type": "string"}},
        ],
        "responses": {
            "200": {"description": "The page.", "content": {"text/html": {}}},
            "303": {"description": "A session was opened; go to the page without the token."},
            "401": {"description": "No session and no valid token.", "content": {"text/html": {}}},
            "404": {"description": "Unknown agent.", "content": {"text/html": {}}},
        },
    }


def _json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _error_responses(
    schema: dict[str, Any], statuses: frozenset[str] | None = None
) -> dict[str, Any]:
    responses: dict[str, Any] = {}
    for status, text in _ERRORS.items():
        if statuses is not None and status not in statuses:
            continue
        response = {"description": text, "content": {"application/json": {"schema": schema}}}
        if status in _HEADERS:
            response["headers"] = _HEADERS[status]
        responses[status] = response
    return responses


def _security_schemes(cookie_name: str) -> dict[str, Any]:
    return {
        "bearer": {"type": "http", "scheme": "bearer", "description": "A user's token."},
        "session": {"type": "apiKey", "in": "cookie", "name": cookie_name},
        "csrf": {"type": "apiKey", "in": "header", "name": CSRF_HEADER},
    }
