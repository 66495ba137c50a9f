"""The answer message: MCP content blocks plus the contract's ``_meta`` payloads.

Wire shape (``to_json()``; ``_meta`` and camelCase, no nulls)::

    {"role": "assistant",
     "content": [
       {"type": "text", "text": "Fees are due in May [1].",
        "_meta": {"drupal.org/ai.citations": [
          {"sourceUri": "entity:node/5", "citedText": "Fees are due in May",
           "startIndex": 0, "endIndex": 19}]}},
       {"type": "resource_link", "uri": "entity:node/5", "name": "Fees",
        "annotations": {"audience": ["user"], "priority": 1.0},
        "_meta": {"citelab/url": "https://uni.example/fees"}}],
     "_meta": {"drupal.org/ai.suggested_replies": [{"label": "Show deadlines"}]}}

The contract's ``_meta`` keys:

- ``drupal.org/ai.citations`` on the text block: the inline anchors, each a span of the text
  (code points, end exclusive) and the ``uri`` of the sibling ``resource_link`` it cites.
- ``drupal.org/ai.suggested_replies`` on the message: one-tap follow-ups ``{label, message?}``.
- ``citelab/url`` on a ``resource_link``: where a reader opens the source, a string holding an
  absolute http(s) URL or a relative one, written when it differs from the ``uri`` (a corpus
  entity's ``entity:<type>/<id>`` names it but opens nothing). Renderers link the source to
  it and still show the ``uri``, the source's identity; any other scheme is a violation.

A consumer that ignores ``_meta`` still has the answer text and a plain MCP source list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypeVar

import mcp_types
from mcp_types import Annotations, ResourceLink, TextContent
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from citelab._errors import InvalidInput
from citelab.contract._payloads import (
    CITATIONS_KEY,
    SOURCE_NUMBER_KEY,
    SOURCE_QUOTES_KEY,
    SOURCE_URL_KEY,
    SUGGESTED_REPLIES_KEY,
    Anchor,
    SourceQuote,
    SuggestedReply,
    link_url_problem,
)

__all__ = ["AnswerMessage", "ContentBlock", "build_message", "source_priority"]

ContentBlock = Annotated[mcp_types.ContentBlock, Field(discriminator="type")]
"""One MCP content block, told apart by its ``type``."""

_ANCHORS: TypeAdapter[list[Anchor]] = TypeAdapter(list[Anchor])
_REPLIES: TypeAdapter[list[SuggestedReply]] = TypeAdapter(list[SuggestedReply])
_QUOTES: TypeAdapter[list[SourceQuote]] = TypeAdapter(list[SourceQuote])


class AnswerMessage(BaseModel):
    """An assistant answer as MCP content blocks; see the module docstring for the wire shape."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    role: Literal["assistant"] = "assistant"
    """Always ``assistant``."""
    content: list[ContentBlock]
    """One ``text`` block (the answer, raw Markdown) and one ``resource_link`` per source."""
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    """Message-level ``_meta`` (suggested replies live here)."""

    @property
    def text_block(self) -> TextContent | None:
        """The answer's text block (the first one)."""
        return next((b for b in self.content if isinstance(b, TextContent)), None)

    @property
    def text(self) -> str:
        """The answer text (raw Markdown); empty if the message has no text block."""
        block = self.text_block
        return block.text if block is not None else ""

    @property
    def sources(self) -> list[ResourceLink]:
        """The ``resource_link`` blocks by descending priority, stable on ties.

        A source without a priority sorts after every source that has one.
        """
        links = [b for b in self.content if isinstance(b, ResourceLink)]
        return sorted(links, key=_priority_key)

    @property
    def anchors(self) -> list[Anchor]:
        """The inline citation anchors of the text block (empty if there are none)."""
        block = self.text_block
        payload = (block.meta or {}).get(CITATIONS_KEY) if block is not None else None
        return _parse(_ANCHORS, payload, CITATIONS_KEY)

    @property
    def source_quotes(self) -> list[SourceQuote]:
        """The source-side passages of the anchors (empty if there are none)."""
        block = self.text_block
        payload = (block.meta or {}).get(SOURCE_QUOTES_KEY) if block is not None else None
        return _parse(_QUOTES, payload, SOURCE_QUOTES_KEY)

    @property
    def numbered_sources(self) -> list[tuple[int, ResourceLink]]:
        """Each source with the ``[n]`` the text uses for it, in :attr:`sources` order.

        That is ``_meta["citelab/number"]`` when every source carries a distinct positive one
        (a follow-up under conversation-wide numbering), else the position 1..k.
        """
        sources = self.sources
        numbers = [(link.meta or {}).get(SOURCE_NUMBER_KEY) for link in sources]
        valid = all(type(n) is int and n >= 1 for n in numbers)
        if sources and valid and len(set(numbers)) == len(numbers):
            return list(zip(numbers, sources, strict=True))  # type: ignore[arg-type]
        return list(enumerate(sources, 1))

    @property
    def suggested_replies(self) -> list[SuggestedReply]:
        """The message-level suggested replies (empty if there are none)."""
        return _parse(_REPLIES, (self.meta or {}).get(SUGGESTED_REPLIES_KEY), SUGGESTED_REPLIES_KEY)

    def to_wire(self) -> dict[str, Any]:
        """The wire shape as a JSON-ready dict."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_json(self, *, indent: int | None = None) -> str:
        """The wire shape as JSON text."""
        return self.model_dump_json(by_alias=True, exclude_none=True, indent=indent)

    def to_call_tool_result(self) -> mcp_types.CallToolResult:
        """The message as an MCP tool result (message ``_meta`` becomes the result's ``_meta``)."""
        return mcp_types.CallToolResult(content=list(self.content), meta=self.meta)

    def _repr_html_(self) -> str:
        from citelab.contract._render import render_message_html

        return render_message_html(self)


def _priority_key(link: ResourceLink) -> tuple[int, float]:
    priority = link.annotations.priority if link.annotations else None
    return (1, 0.0) if priority is None else (0, -priority)


def _parse(adapter: TypeAdapter[list[Any]], payload: object, key: str) -> list[Any]:
    if payload is None:
        return []
    try:
        return adapter.validate_python(payload)
    except ValidationError as exc:
        raise InvalidInput(f"_meta[{key!r}] does not match its schema: {exc}") from exc


def source_priority(index: int, count: int) -> float:
    """Priority of the source cited as ``[index + 1]`` among ``count``: 1.0 down to 1/count."""
    return (count - index) / count


def build_message(
    text: str,
    sources: Sequence[object],
    anchors: Sequence[Anchor | Mapping[str, Any]] | None = None,
    suggested_replies: Sequence[SuggestedReply | Mapping[str, Any] | str] | None = None,
    *,
    source_quotes: Sequence[SourceQuote | Mapping[str, Any]] | None = None,
) -> AnswerMessage:
    """Build an answer message; validate it with ``validate_message`` / ``check_message``.

    ``sources`` are in citation order (item 0 is ``[1]``): Mappings or objects with
    attributes, or ready ``mcp_types.ResourceLink`` blocks. The uri is ``uri`` if present and
    non-empty, else ``entity:<entity_type>/<entity_id>``, else ``url``; the name is ``title``
    (or ``label``), else the uri; ``description`` is optional. Each becomes a
    ``resource_link`` with ``audience ["user"]`` and a priority falling from 1.0 with the
    citation number. A ``url`` other than the uri goes to ``_meta["citelab/url"]`` when it is
    a safe link target (http(s) or relative; any other is left out, the uri still names the
    source). Unusable input is an ``InvalidInput`` that says which item.

    Sources with a ``number`` (a field or attribute) that is not their position (item ``i``
    cited as ``[i + 1]``) make every link carry ``_meta["citelab/number"]``: the ``[n]`` the
    text uses for it (conversation-wide numbering). ``source_quotes`` go to the text block's
    ``_meta["citelab/source_quotes"]``.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a string, not {type(text).__name__}")
    links = _numbered(
        [_resource_link(item, index, len(sources)) for index, item in enumerate(sources)],
        sources,
    )
    text_meta: dict[str, Any] = {CITATIONS_KEY: _anchor_payload(anchors)} if anchors else {}
    if source_quotes:
        text_meta[SOURCE_QUOTES_KEY] = _quote_payload(source_quotes)
    message_meta = (
        {SUGGESTED_REPLIES_KEY: _reply_payload(suggested_replies)} if suggested_replies else None
    )
    blocks: list[ContentBlock] = [TextContent(text=text, meta=text_meta or None), *links]
    return AnswerMessage(content=blocks, meta=message_meta)


def _resource_link(item: object, index: int, count: int) -> ResourceLink:
    annotations = Annotations(audience=["user"], priority=source_priority(index, count))
    if isinstance(item, ResourceLink):
        kept = item.annotations.last_modified if item.annotations else None
        return item.model_copy(
            update={"annotations": annotations.model_copy(update={"last_modified": kept})}
        )
    uri = _source_uri(item, index)
    name = _text_field(item, "title") or _text_field(item, "label") or uri
    description = _text_field(item, "description")
    return ResourceLink(
        uri=uri,
        name=name,
        description=description,
        annotations=annotations,
        meta=_link_meta(_field(item, "url"), uri),
    )


def _numbered(links: list[ResourceLink], sources: Sequence[object]) -> list[ResourceLink]:
    """``links`` with ``_meta["citelab/number"]`` on each, when the sources' numbers are not
    their positions; unchanged otherwise."""
    numbers = [_field(item, "number") for item in sources]
    if all(n is None or n == index for index, n in enumerate(numbers, 1)):
        return links
    for index, number in enumerate(numbers):
        if type(number) is not int or number < 1:
            raise InvalidInput(f"sources[{index}].number must be an integer >= 1, not {number!r}")
    if len(set(numbers)) != len(numbers):
        raise InvalidInput(f"source numbers must be distinct, got {numbers}")
    return [
        link.model_copy(update={"meta": {**(link.meta or {}), SOURCE_NUMBER_KEY: number}})
        for link, number in zip(links, numbers, strict=True)
    ]


def _link_meta(url: object, uri: str) -> dict[str, Any] | None:
    # Untrusted (a corpus field): a url that could not be a safe link is dropped, not fatal.
    if not isinstance(url, str) or url == uri or link_url_problem(url) is not None:
        return None
    return {SOURCE_URL_KEY: url}


def _field(item: object, name: str) -> object:
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def _text_field(item: object, name: str) -> str | None:
    value = _field(item, name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"source {name} must be a string, not {type(value).__name__}")
    return value


def _source_uri(item: object, index: int) -> str:
    uri = _field(item, "uri")
    if isinstance(uri, str) and uri:
        return uri
    entity_type, entity_id = _field(item, "entity_type"), _field(item, "entity_id")
    if entity_type not in (None, "") and entity_id not in (None, ""):
        return f"entity:{entity_type}/{entity_id}"
    url = _field(item, "url")
    if isinstance(url, str) and url:
        return url
    raise InvalidInput(
        f"sources[{index}] (cited as [{index + 1}]) has no usable uri: give it a non-empty "
        "'uri', an 'entity_type' and 'entity_id', or a 'url'"
    )


def _anchor_payload(anchors: Sequence[Anchor | Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        _model(Anchor, a, f"anchors[{i}]").model_dump(by_alias=True) for i, a in enumerate(anchors)
    ]


def _quote_payload(quotes: Sequence[SourceQuote | Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        _model(SourceQuote, q, f"source_quotes[{i}]").model_dump(by_alias=True, exclude_none=True)
        for i, q in enumerate(quotes)
    ]


def _reply_payload(
    replies: Sequence[SuggestedReply | Mapping[str, Any] | str],
) -> list[dict[str, Any]]:
    payload = []
    for index, reply in enumerate(replies):
        value = {"label": reply} if isinstance(reply, str) else reply
        model = _model(SuggestedReply, value, f"suggested_replies[{index}]")
        payload.append(model.model_dump(exclude_none=True))
    return payload


_M = TypeVar("_M", bound=BaseModel)


def _model(model: type[_M], value: object, where: str) -> _M:
    if isinstance(value, model):
        return value
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise InvalidInput(f"{where} is not a valid {model.__name__}: {exc}") from exc
