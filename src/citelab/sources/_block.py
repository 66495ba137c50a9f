"""The numbered sources block: how sources are written into prompts and tool messages.

Format (one element per source, numbers are the citation numbers the model must use)::

    <sources>
    <source number="1" uri="entity:node/5" title="Admissions">
    chunk text…
    </source>
    </sources>

Attribute values are XML-escaped; a literal ``</source`` inside content is written as
``<\\/source`` so that content can never close an element early. ``parse_sources_block``
reads every ``<source>`` element found anywhere in a text (system prompt or tool message).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape, unescape
from typing import Protocol

__all__ = ["BlockSource", "NumberedSource", "parse_sources_block", "render_sources_block"]


class NumberedSource(Protocol):
    @property
    def number(self) -> int | None: ...
    @property
    def uri(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def content(self) -> str: ...


@dataclass(frozen=True)
class BlockSource:
    """One source as read back from a sources block."""

    number: int
    uri: str
    title: str
    content: str


_SOURCE = re.compile(
    r'<source number="(?P<number>\d+)" uri="(?P<uri>[^"]*)" title="(?P<title>[^"]*)">\n'
    r"(?P<content>.*?)\n?</source>",
    re.DOTALL,
)


def render_sources_block(sources: list[NumberedSource]) -> str:
    """Write sources as a block; sources without a number are skipped."""
    parts = ["<sources>"]
    for source in sources:
        if source.number is None:
            continue
        content = source.content.replace("</source", "<\\/source")
        parts.append(
            f'<source number="{source.number}" uri="{escape(source.uri)}" '
            f'title="{escape(source.title)}">\n{content}\n</source>'
        )
    parts.append("</sources>")
    return "\n".join(parts)


def parse_sources_block(text: str) -> list[BlockSource]:
    """Every ``<source>`` element in ``text``, in order of appearance."""
    return [
        BlockSource(
            number=int(m["number"]),
            uri=unescape(m["uri"]),
            title=unescape(m["title"]),
            content=m["content"].replace("<\\/source", "</source"),
        )
        for m in _SOURCE.finditer(text)
    ]
