"""The ``_meta`` key registry: which keys exist, what their payload looks like, where they sit.

A key is registered with a payload schema (anything pydantic can validate: a model, or
``list[Model]``), the block kinds it may sit on, and optionally a *check* for what a schema
cannot say (an anchor's span must match the answer text). :func:`default_registry` holds the
three keys of the citation contract; a prompt engineer trying a variant contract takes a copy,
registers their own key, and passes it to ``validate_message(data, registry=...)``::

    registry = default_registry()
    registry.register("org.example/footnotes", list[Footnote], on="text")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

from pydantic import PydanticSchemaGenerationError, TypeAdapter, ValidationError

from citelab._errors import InvalidInput
from citelab.contract._meta_keys import is_reserved_meta_key, meta_key_problem
from citelab.contract._payloads import (
    CITATIONS_KEY,
    SOURCE_NUMBER_KEY,
    SOURCE_QUOTES_KEY,
    SOURCE_URL_KEY,
    SUGGESTED_REPLIES_KEY,
    Anchor,
    SourceNumber,
    SourceQuote,
    SourceUrl,
    SuggestedReply,
)
from citelab.contract._violations import Violation, json_path, violations_from_errors

__all__ = [
    "BLOCK_KINDS",
    "BlockKind",
    "MetaKeySpec",
    "MetaRegistry",
    "PayloadCheck",
    "PayloadContext",
    "check_citation_anchors",
    "check_source_quotes",
    "default_registry",
    "shared_default_registry",
]

BlockKind = Literal["message", "text", "image", "audio", "resource_link", "resource"]
"""Where a ``_meta`` key sits: the message itself, or a content block of that ``type``."""
BLOCK_KINDS: frozenset[str] = frozenset(get_args(BlockKind))


@dataclass(frozen=True)
class PayloadContext:
    """What a payload check may look at besides the payload itself."""

    kind: BlockKind
    """The kind of block (or ``"message"``) the payload sits on."""
    text: str | None
    """The text of the block the payload sits on, for ``text`` blocks."""
    answer_text: str | None
    """The answer's text (its text block), whatever the payload sits on; ``None`` when the
    message has no readable text block."""
    source_uris: frozenset[str]
    """The ``uri`` of every ``resource_link`` block of the message."""
    block_meta: Mapping[str, Any] | None = None
    """The whole ``_meta`` of the block the payload sits on (its sibling keys)."""


PayloadCheck = Callable[[Any, str, PayloadContext], Iterable[Violation]]
"""``check(payload, path, context)`` yields violations beyond the schema.

For a ``list[...]`` schema the payload is a list whose items that failed the schema are
``None`` (so indices still match the input); otherwise it is the validated value.
"""


@dataclass(frozen=True)
class MetaKeySpec:
    """One registered ``_meta`` key."""

    key: str
    """The ``_meta`` key."""
    schema: Any
    """The payload schema as registered (a model, ``list[Model]``...)."""
    kinds: frozenset[str]
    """Block kinds the key may sit on (see :data:`BlockKind`)."""
    adapter: TypeAdapter[Any] = field(repr=False, compare=False)
    item_adapter: TypeAdapter[Any] | None = field(repr=False, compare=False)
    description: str = ""
    """What the payload means, for people."""
    check: PayloadCheck | None = None
    """Checks beyond the schema, if any."""

    def validate(self, value: object, path: str, context: PayloadContext) -> list[Violation]:
        """Every violation in ``value`` (the payload found under this key at ``path``)."""
        payload, found = self._validated(value, path)
        if payload is not None and self.check is not None:
            found += _run_check(self.check, payload, path, context)
        return found

    def _validated(self, value: object, path: str) -> tuple[Any, list[Violation]]:
        try:
            return self.adapter.validate_python(value, strict=True), []
        except ValidationError as exc:
            found = violations_from_errors(path, exc.errors(include_url=False))
        if self.item_adapter is None or not isinstance(value, list):
            return None, found
        return [self._item_or_none(item) for item in value], found

    def _item_or_none(self, item: object) -> Any:
        assert self.item_adapter is not None
        try:
            return self.item_adapter.validate_python(item, strict=True)
        except ValidationError:
            return None


def _run_check(
    check: PayloadCheck, payload: Any, path: str, context: PayloadContext
) -> list[Violation]:
    try:
        return list(check(payload, path, context))
    except Exception as exc:  # a third-party check must not turn validation into a crash
        message = f"the check registered for this key failed: {type(exc).__name__}: {exc}"
        return [Violation(path=path, code="check_error", message=message)]


class MetaRegistry:
    """Registered ``_meta`` keys; ``strict`` registries also report unregistered keys."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self._specs: dict[str, MetaKeySpec] = {}

    def register(
        self,
        key: str,
        schema: Any,
        *,
        on: BlockKind | Iterable[BlockKind],
        description: str = "",
        check: PayloadCheck | None = None,
        replace: bool = False,
    ) -> MetaKeySpec:
        """Register ``key`` with its payload ``schema`` and the block kinds it may sit ``on``."""
        _require_usable_key(key)
        if key in self._specs and not replace:
            raise InvalidInput(f"_meta key {key!r} is already registered; pass replace=True")
        kinds = _block_kinds(key, on)
        adapter, item_adapter = _adapters(key, schema)
        spec = MetaKeySpec(key, schema, kinds, adapter, item_adapter, description, check)
        self._specs[key] = spec
        return spec

    def unregister(self, key: str) -> None:
        """Forget ``key``; an unknown key is an ``InvalidInput``."""
        if self._specs.pop(key, None) is None:
            raise InvalidInput(f"_meta key {key!r} is not registered")

    def get(self, key: str) -> MetaKeySpec | None:
        """The spec registered for ``key``, if any."""
        return self._specs.get(key)

    def copy(self, *, strict: bool | None = None) -> MetaRegistry:
        """An independent copy (registering on it leaves this registry alone)."""
        clone = MetaRegistry(strict=self.strict if strict is None else strict)
        clone._specs = dict(self._specs)
        return clone

    def keys(self) -> list[str]:
        """The registered keys, sorted."""
        return sorted(self._specs)

    def __contains__(self, key: object) -> bool:
        return key in self._specs

    def __iter__(self) -> Iterator[MetaKeySpec]:
        return iter([self._specs[key] for key in self.keys()])

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"MetaRegistry(keys={self.keys()!r}, strict={self.strict})"


def _require_usable_key(key: object) -> None:
    problem = meta_key_problem(key)
    if problem is not None:
        raise InvalidInput(f"cannot register _meta key {key!r}: {problem}")
    assert isinstance(key, str)
    if is_reserved_meta_key(key):
        raise InvalidInput(
            f"cannot register _meta key {key!r}: its prefix is reserved for MCP "
            "(second label 'modelcontextprotocol' or 'mcp')"
        )


def _block_kinds(key: str, on: str | Iterable[str]) -> frozenset[str]:
    kinds = frozenset([on] if isinstance(on, str) else on)
    unknown = sorted(kinds - BLOCK_KINDS)
    if not kinds or unknown:
        raise InvalidInput(
            f"cannot register _meta key {key!r}: 'on' must name block kinds among "
            f"{sorted(BLOCK_KINDS)}, got {sorted(kinds)}"
        )
    return kinds


def _adapters(key: str, schema: Any) -> tuple[TypeAdapter[Any], TypeAdapter[Any] | None]:
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(schema)
        is_list = get_origin(schema) is list and len(get_args(schema)) == 1
        item_adapter: TypeAdapter[Any] | None = (
            TypeAdapter(get_args(schema)[0]) if is_list else None
        )
    except (PydanticSchemaGenerationError, TypeError) as exc:
        raise InvalidInput(f"cannot register _meta key {key!r}: unusable schema: {exc}") from exc
    return adapter, item_adapter


def check_citation_anchors(
    anchors: list[Anchor | None], path: str, context: PayloadContext
) -> Iterator[Violation]:
    """Each anchor names a sibling source and its span is exactly its ``citedText``.

    Reusable by variant contracts whose payload is ``list[Anchor]``.
    """
    text = context.text if context.kind == "text" else context.answer_text
    for index, anchor in enumerate(anchors):
        if anchor is None:
            continue
        if anchor.source_uri not in context.source_uris:
            yield Violation(
                path=json_path(path, index, "sourceUri"),
                code="unknown_source",
                message=f"sourceUri {anchor.source_uri!r} names no resource_link of this message",
            )
        # An unreadable text is reported once, where it is, not once per anchor.
        problem = _span_problem(anchor, text) if text is not None else None
        if problem is not None:
            field_name, code, message = problem
            yield Violation(path=json_path(path, index, field_name), code=code, message=message)


def _span_problem(anchor: Anchor, text: str) -> tuple[str, str, str] | None:
    start, end, cited = anchor.start_index, anchor.end_index, anchor.cited_text
    if start > end:
        return "startIndex", "start_after_end", f"startIndex {start} is greater than endIndex {end}"
    if end > len(text):
        message = f"endIndex {end} is past the end of the text ({len(text)} code points)"
        return "endIndex", "end_past_text", message
    # startswith compares in place: no slice is copied per anchor.
    if len(cited) != end - start or not text.startswith(cited, start):
        message = (
            f"citedText {_clip(cited)} is not the text at {start}–{end}, "
            f"which reads {_clip(text[start:end])}"
        )
        return "citedText", "cited_text_mismatch", message
    return None


def _clip(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def check_source_quotes(
    quotes: list[SourceQuote | None], path: str, context: PayloadContext
) -> Iterator[Violation]:
    """Each quote names an anchor of the text block and that anchor's source, and its
    offsets (when given) are both present and in order."""
    anchors = _anchors_of(context)
    for index, quote in enumerate(quotes):
        if quote is None:
            continue
        where = f"{path}[{index}]"
        if anchors is not None and quote.anchor_index >= len(anchors):
            yield Violation(
                path=f"{where}.anchorIndex",
                code="unknown_anchor",
                message=f"anchor {quote.anchor_index} does not exist ({len(anchors)} anchors)",
            )
        elif anchors is not None and anchors[quote.anchor_index] != quote.source_uri:
            yield Violation(
                path=f"{where}.sourceUri",
                code="source_mismatch",
                message=f"anchor {quote.anchor_index} cites {anchors[quote.anchor_index]!r}, "
                f"not {quote.source_uri!r}",
            )
        if (quote.start_index is None) != (quote.end_index is None) or (
            quote.start_index is not None
            and quote.end_index is not None
            and quote.start_index > quote.end_index
        ):
            yield Violation(
                path=where,
                code="bad_span",
                message="startIndex and endIndex must be given together, start <= end",
            )


def _anchors_of(context: PayloadContext) -> list[str] | None:
    """The sourceUri of each anchor of the text block, or ``None`` when they are unreadable."""
    raw = (context.block_meta or {}).get(CITATIONS_KEY)
    if not isinstance(raw, list):
        return None
    uris = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("sourceUri"), str):
            return None
        uris.append(item["sourceUri"])
    return uris


def _build_default() -> MetaRegistry:
    registry = MetaRegistry()
    registry.register(
        CITATIONS_KEY,
        list[Anchor],
        on="text",
        description="Inline citation anchors: spans of the answer text and the source each cites.",
        check=check_citation_anchors,
    )
    registry.register(
        SUGGESTED_REPLIES_KEY,
        list[SuggestedReply],
        on="message",
        description="One-tap follow-up chips: label shown, message sent (defaults to label).",
    )
    registry.register(
        SOURCE_URL_KEY,
        SourceUrl,
        on="resource_link",
        description="Where a reader opens the source (http(s) or relative), when not its uri.",
    )
    registry.register(
        SOURCE_NUMBER_KEY,
        SourceNumber,
        on="resource_link",
        description="The [n] the text uses for this source, when not its position 1..k.",
    )
    registry.register(
        SOURCE_QUOTES_KEY,
        list[SourceQuote],
        on="text",
        description="The source-side passage (and its offsets in the source) of anchors.",
        check=check_source_quotes,
    )
    return registry


_DEFAULT = _build_default()


def default_registry(*, strict: bool = False) -> MetaRegistry:
    """A fresh copy of the registry holding the contract's three keys."""
    return _DEFAULT.copy(strict=strict)


def shared_default_registry() -> MetaRegistry:
    """The module's own default registry; never mutate it (use :func:`default_registry`)."""
    return _DEFAULT
