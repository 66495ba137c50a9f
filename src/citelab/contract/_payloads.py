"""The two registered ``_meta`` payloads: inline citation anchors and suggested replies."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

__all__ = ["CITATIONS_KEY", "SUGGESTED_REPLIES_KEY", "Anchor", "SuggestedReply"]

CITATIONS_KEY = "drupal.org/ai.citations"
"""``_meta`` key on the text block: a list of :class:`Anchor`."""
SUGGESTED_REPLIES_KEY = "drupal.org/ai.suggested_replies"
"""Message-level ``_meta`` key: a list of :class:`SuggestedReply`."""


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
