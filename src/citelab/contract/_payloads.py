"""The registered ``_meta`` payloads: citation anchors, suggested replies, source web URLs."""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

__all__ = [
    "CITATIONS_KEY",
    "SOURCE_NUMBER_KEY",
    "SOURCE_QUOTES_KEY",
    "SOURCE_URL_KEY",
    "SUGGESTED_REPLIES_KEY",
    "Anchor",
    "SourceNumber",
    "SourceQuote",
    "SourceUrl",
    "SuggestedReply",
    "link_url_problem",
]

CITATIONS_KEY = "drupal.org/ai.citations"
"""``_meta`` key on the text block: a list of :class:`Anchor`."""
SUGGESTED_REPLIES_KEY = "drupal.org/ai.suggested_replies"
"""Message-level ``_meta`` key: a list of :class:`SuggestedReply`."""
SOURCE_URL_KEY = "citelab/url"
"""``_meta`` key on a ``resource_link`` block: where a reader opens the source (a
:data:`SourceUrl`), when that differs from its ``uri`` (an ``entity:`` URI names a source but
opens nothing)."""
SOURCE_NUMBER_KEY = "citelab/number"
"""``_meta`` key on a ``resource_link`` block: the ``[n]`` the text uses for this source (a
:data:`SourceNumber`), written on every link when the message's numbers are not 1..k in
priority order (a follow-up under conversation-wide numbering)."""
SOURCE_QUOTES_KEY = "citelab/source_quotes"
"""``_meta`` key on the text block: the source-side passage of citation anchors, a list of
:class:`SourceQuote` (what Anthropic calls ``cited_text`` and its character location)."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
# Browsers drop tabs and newlines anywhere in a URL, and controls and spaces at its ends,
# before they read the scheme ("java\tscript:" is javascript:). Quotes, angle brackets,
# backticks and backslashes are not URL characters (RFC 3986) but end attributes and Markdown
# links; a character reference ("&colon;") becomes a scheme in a reader that decodes HTML.
_REFUSED = (
    (re.compile(r"[\x00-\x20\x7f-\x9f]"), "must not contain spaces or control characters"),
    (re.compile(r"[\"'<>`\\]"), "must not contain quotes, angle brackets, backticks or '\\'"),
    (re.compile(r"&(?:#|[A-Za-z][A-Za-z0-9]*;)"), "must not contain character references (&...;)"),
)


def link_url_problem(url: str) -> str | None:
    """Why ``url`` may not be a link target, or ``None``: it must be an absolute http(s) URL
    with a host, or a relative URL (no scheme, no ':' before its first '/'), and hold nothing
    that HTML or Markdown would read differently."""
    if not url:
        return "a link URL must not be empty"
    for pattern, problem in _REFUSED:
        if pattern.search(url):
            return f"a link URL {problem}"
    scheme = _SCHEME.match(url)
    if scheme is None:
        if ":" in re.split(r"[/?#]", url, maxsplit=1)[0]:
            return "a relative link URL must not have ':' before its first '/', '?' or '#'"
        return None  # relative: it resolves against the page's own http(s) address
    if scheme.group(1).lower() not in ("http", "https"):
        return f"a link URL must be http(s) or relative, not {scheme.group(1)}:"
    if not urlsplit(url).netloc:
        return "an absolute link URL needs a host (http://host/...)"
    return None


def _link_url(value: str) -> str:
    problem = link_url_problem(value)
    if problem is not None:
        raise PydanticCustomError("empty_value" if not value else "unsafe_url", problem)
    return value


SourceUrl = Annotated[str, AfterValidator(_link_url)]
"""The payload of :data:`SOURCE_URL_KEY`: an absolute http(s) URL, or a relative one."""


class Anchor(BaseModel):
    """An inline citation: a span of the answer text and the source it cites.

    Offsets are Unicode code points into the text block's ``text``, end exclusive.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    source_uri: str = Field(min_length=1)
    """The ``uri`` of a sibling ``resource_link`` block."""
    cited_text: str
    """Exactly ``text[start_index:end_index]``."""
    start_index: int = Field(ge=0)
    """First code point of the span."""
    end_index: int = Field(ge=0)
    """One past the last code point of the span."""


SourceNumber = Annotated[int, Field(strict=True, ge=1)]
"""The payload of :data:`SOURCE_NUMBER_KEY`: a citation number, an integer >= 1."""


class SourceQuote(BaseModel):
    """The passage of a source that supports one citation anchor, and where it sits.

    Offsets are Unicode code points into the source document's text, end exclusive; both are
    absent when the location is not known (the quote alone still says what supports it).
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    anchor_index: int = Field(ge=0)
    """Which anchor (index into the text block's ``drupal.org/ai.citations`` list)."""
    source_uri: str = Field(min_length=1)
    """The ``uri`` of the source the passage is from (that anchor's ``sourceUri``)."""
    text: str
    """The source passage (untrusted)."""
    start_index: int | None = Field(default=None, ge=0)
    """First code point of the passage in the source's text."""
    end_index: int | None = Field(default=None, ge=0)
    """One past the passage's last code point in the source's text."""


class SuggestedReply(BaseModel):
    """A one-tap follow-up chip: ``label`` is shown, ``message`` is sent (defaults to label)."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1)
    """What the chip displays."""
    message: str | None = None
    """What is sent when tapped; ``None`` means the label itself."""

    @field_validator("label", "message")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        # A blank chip would show nothing, and a blank message would send nothing.
        if value is not None and not value.strip():
            raise PydanticCustomError("empty_value", "must not be empty or blank")
        return value

    @property
    def text_to_send(self) -> str:
        """What is sent when the chip is tapped."""
        return self.message if self.message is not None else self.label
