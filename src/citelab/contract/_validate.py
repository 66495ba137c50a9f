"""Validation of answer messages against the citation contract.

:func:`validate_message` reads a dict, JSON text or :class:`AnswerMessage` and returns every
violation it finds (never only the first), each with a JSON path, a code and a plain message;
it never raises on malformed input. :func:`check_message` raises
:class:`~citelab.ContractViolation` carrying them all, or returns the parsed message.

What is checked: the message shape (``role``, ``content``); every block's MCP shape (with the
``mcp-types`` models, strictly); one text block; no duplicate source URIs; every ``_meta``
key's name (MCP rules, reserved prefixes) and, for registered keys, the block kind it sits on,
its payload schema and the key's own check (anchor spans, sibling sources). Unregistered keys
are reported only by a strict registry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import mcp_types
from pydantic import TypeAdapter, ValidationError

from citelab.contract._message import AnswerMessage
from citelab.contract._meta_keys import is_reserved_meta_key, meta_key_problem
from citelab.contract._registry import MetaRegistry, PayloadContext, shared_default_registry
from citelab.contract._violations import (
    Violation,
    json_path,
    raise_for_violations,
    violations_from_errors,
)

__all__ = ["check_message", "validate_message"]

_BLOCK_MODELS: dict[str, type[Any]] = {
    "text": mcp_types.TextContent,
    "image": mcp_types.ImageContent,
    "audio": mcp_types.AudioContent,
    "resource_link": mcp_types.ResourceLink,
    "resource": mcp_types.EmbeddedResource,
}
_BLOCK_ADAPTERS = {kind: TypeAdapter(model) for kind, model in _BLOCK_MODELS.items()}
_MESSAGE_FIELDS = frozenset({"role", "content", "_meta"})


def validate_message(
    data: object, registry: MetaRegistry | None = None, *, strict: bool | None = None
) -> list[Violation]:
    """Every violation of the contract in ``data`` (empty when it is valid).

    ``registry`` defaults to the contract's keys; ``strict`` overrides the registry's own
    setting (strict reports unregistered ``_meta`` keys and unknown message fields).
    """
    registry = registry if registry is not None else shared_default_registry()
    message, found = _as_object(data)
    if message is None:
        return found
    run = _Run(registry, registry.strict if strict is None else strict)
    run.check(message)
    return found + run.found


def check_message(
    data: object, registry: MetaRegistry | None = None, *, strict: bool | None = None
) -> AnswerMessage:
    """The parsed message, or :class:`~citelab.ContractViolation` with every violation."""
    raise_for_violations(validate_message(data, registry, strict=strict))
    if isinstance(data, AnswerMessage):
        return data
    message, _ = _as_object(data)
    assert message is not None
    # Unknown top-level fields are tolerated (unless strict), so leave them out of the model.
    return AnswerMessage.model_validate({k: v for k, v in message.items() if k in _MESSAGE_FIELDS})


def _as_object(data: object) -> tuple[Mapping[str, Any] | None, list[Violation]]:
    if isinstance(data, AnswerMessage):
        return data.to_wire(), []
    if isinstance(data, str | bytes | bytearray):
        try:
            data = json.loads(data)
        except (ValueError, RecursionError) as exc:
            return None, [Violation(path="$", code="json_syntax", message=f"not JSON: {exc}")]
    if not isinstance(data, Mapping):
        message = f"an answer message is a JSON object, not {_json_type(data)}"
        return None, [Violation(path="$", code="not_an_object", message=message)]
    return cast(Mapping[str, Any], data), []


def _json_type(value: object) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, int | float) else f"a Python {type(value).__name__}"


@dataclass
class _Run:
    """One validation pass; collects violations instead of raising."""

    registry: MetaRegistry
    strict: bool
    found: list[Violation] = field(default_factory=list)

    def add(self, path: str, code: str, message: str) -> None:
        self.found.append(Violation(path=path, code=code, message=message))

    def check(self, message: Mapping[str, Any]) -> None:
        self._check_role(message)
        if self.strict:
            for key in message:
                if key not in _MESSAGE_FIELDS:
                    self.add(json_path("$", str(key)), "unknown_field", "not a message field")
        blocks = self._content(message)
        context = self._context(blocks)
        for index, block in enumerate(blocks):
            self._check_block(block, index, context)
        self._check_meta(message.get("_meta"), "_meta", context)

    def _check_role(self, message: Mapping[str, Any]) -> None:
        if "role" not in message:
            self.add("role", "missing_field", "required field is missing")
        elif message["role"] != "assistant":
            self.add("role", "wrong_value", f"role must be 'assistant', not {message['role']!r}")

    def _content(self, message: Mapping[str, Any]) -> list[Any]:
        if "content" not in message:
            self.add("content", "missing_field", "required field is missing")
            return []
        content = message["content"]
        if not isinstance(content, list):
            self.add(
                "content", "wrong_type", f"content must be an array, not {_json_type(content)}"
            )
            return []
        return content

    def _context(self, blocks: list[Any]) -> PayloadContext:
        texts = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"]
        if len(texts) != 1:
            self.add("content", "text_block_count", f"expected 1 text block, found {len(texts)}")
        text = texts[0].get("text") if texts else None
        uris: set[str] = set()
        for index, block in enumerate(blocks):
            uri = block.get("uri") if isinstance(block, Mapping) else None
            if not isinstance(uri, str) or block.get("type") != "resource_link":
                continue
            if uri in uris:
                message = f"another resource_link already has uri {uri!r}"
                self.add(json_path("content", index, "uri"), "duplicate_source", message)
            uris.add(uri)
        answer = text if isinstance(text, str) else None
        return PayloadContext("message", None, answer, frozenset(uris))

    def _check_block(self, block: object, index: int, context: PayloadContext) -> None:
        path = json_path("content", index)
        if not isinstance(block, Mapping):
            self.add(
                path, "not_an_object", f"a content block is an object, not {_json_type(block)}"
            )
            return
        kind = block.get("type")
        if kind not in _BLOCK_ADAPTERS:
            known = ", ".join(sorted(_BLOCK_ADAPTERS))
            code = "missing_field" if kind is None else "wrong_value"
            self.add(json_path(path, "type"), code, f"type must be one of {known}; got {kind!r}")
            return
        try:
            _BLOCK_ADAPTERS[kind].validate_python(block, strict=True)
        except ValidationError as exc:
            errors = [e for e in exc.errors(include_url=False) if e["loc"][:1] != ("_meta",)]
            self.found += violations_from_errors(path, errors)
        text = block.get("text") if kind == "text" else None
        meta = block.get("_meta")
        block_context = PayloadContext(
            kind,
            text if isinstance(text, str) else None,
            context.answer_text,
            context.source_uris,
            meta if isinstance(meta, Mapping) else None,
        )
        self._check_meta(block.get("_meta"), json_path(path, "_meta"), block_context)

    def _check_meta(self, meta: object, path: str, context: PayloadContext) -> None:
        if meta is None:
            return
        if not isinstance(meta, Mapping):
            self.add(path, "wrong_type", f"_meta must be an object, not {_json_type(meta)}")
            return
        for key, value in meta.items():
            self._check_meta_entry(key, value, json_path(path, str(key)), context)

    def _check_meta_entry(
        self, key: object, value: object, path: str, context: PayloadContext
    ) -> None:
        problem = meta_key_problem(key)
        if problem is not None:
            self.add(path, "meta_key_name", problem)
            return
        assert isinstance(key, str)
        if is_reserved_meta_key(key):
            message = "this prefix is reserved for MCP itself; use your own reverse-DNS prefix"
            self.add(path, "meta_key_reserved", message)
            return
        spec = self.registry.get(key)
        if spec is None:
            if self.strict:
                self.add(path, "meta_key_unknown", "this _meta key is not registered")
            return
        if context.kind not in spec.kinds:
            allowed = ", ".join(sorted(spec.kinds))
            message = f"{key!r} belongs on {allowed}, not on {context.kind}"
            self.add(path, "meta_key_placement", message)
            return
        self.found += spec.validate(value, path, context)
