"""What the converters share: loss declarations, a source book, span grouping, input parsing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from citelab._errors import InvalidInput
from citelab.contract._message import AnswerMessage, _source_uri
from citelab.contract._payloads import Anchor

__all__ = [
    "Losses",
    "SourceBook",
    "anchor_for",
    "group_by_span",
    "mapping_items",
    "parse_foreign",
    "plain_data",
    "source_index",
]

_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True)
class Losses:
    """What a converter cannot carry, in each direction."""

    to_target: tuple[str, ...]
    """Contract information dropped when writing the other system's shape."""
    from_target: tuple[str, ...]
    """The other system's information dropped when reading it into the contract."""


def plain_data(data: object) -> object:
    """SDK objects (pydantic models with ``model_dump``) become plain dicts; others pass."""
    dump = getattr(data, "model_dump", None)
    return dump(mode="json") if callable(dump) else data


def parse_foreign(model: type[_M], data: object, what: str) -> _M:
    """Read another system's payload, with an ``InvalidInput`` that says where it is wrong."""
    try:
        return model.model_validate(plain_data(data))
    except ValidationError as exc:
        raise InvalidInput(f"not a valid {what}: {exc}") from exc


class SourceBook:
    """The sources of a message being read: given ones first, then each new one as cited."""

    def __init__(self, sources: Sequence[object] | None) -> None:
        self.items: list[object] = list(sources or [])
        self._given = len(self.items)
        self._uris = {_source_uri(item, index) for index, item in enumerate(self.items)}

    def cite(self, uri: str, title: str | None = None, description: str | None = None) -> str:
        """Record ``uri`` (with ``title`` and ``description``) if new; returns the uri."""
        if uri not in self._uris:
            self._uris.add(uri)
            item = {"uri": uri, "title": title}
            if description:
                item["description"] = description
            self.items.append(item)
        return uri

    def uri_at(self, index: int, fallback: str, title: str | None) -> str:
        """The uri of given source ``index``, or ``fallback`` (recorded) when there is none."""
        if 0 <= index < self._given:
            return _source_uri(self.items[index], index)
        return self.cite(fallback, title)


def source_index(message: AnswerMessage) -> dict[str, int]:
    """Position of each source uri in the message's source list (priority order)."""
    return {source.uri: index for index, source in enumerate(message.sources)}


def group_by_span(message: AnswerMessage) -> list[tuple[int, int, list[str]]]:
    """Anchors grouped by identical span, ordered by span; each with its source uris in order.

    An anchor citing a uri the message has no source for is an ``InvalidInput``.
    """
    known = source_index(message)
    groups: dict[tuple[int, int], list[str]] = {}
    for anchor in sorted(message.anchors, key=_span):
        if anchor.source_uri not in known:
            raise InvalidInput(f"anchor cites {anchor.source_uri!r}, which is not a source")
        uris = groups.setdefault(_span(anchor), [])
        if anchor.source_uri not in uris:
            uris.append(anchor.source_uri)
    return [(start, end, uris) for (start, end), uris in groups.items()]


def _span(anchor: Anchor) -> tuple[int, int]:
    return anchor.start_index, anchor.end_index


def anchor_for(text: str, uri: str, start: int, end: int, where: str) -> Anchor:
    """An anchor over ``text[start:end]``; a span outside the text is an ``InvalidInput``."""
    if not 0 <= start <= end <= len(text):
        raise InvalidInput(f"{where}: span {start}–{end} is outside the text (0–{len(text)})")
    return Anchor(source_uri=uri, cited_text=text[start:end], start_index=start, end_index=end)


def mapping_items(value: object) -> Mapping[str, Any]:
    """``value`` as a mapping, for payloads that may come wrapped in an envelope."""
    data = plain_data(value)
    if not isinstance(data, Mapping):
        raise InvalidInput(f"expected a JSON object, got {type(data).__name__}")
    return data
