"""The result of one turn, as the answer service returns it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from citelab.agent import RoundRecord, ToolCallRecord
from citelab.contract import Anchor, AnswerMessage, SuggestedReply
from citelab.events import CitedSpan, DoneEvent, Reference, SuggestedReplyPayload
from citelab.sources import DanglingCitation, Source

__all__ = ["Answer", "DanglingMarker"]


class DanglingMarker(BaseModel):
    """A number the model wrote that named no source; it was removed from the text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    number: int
    """The number that named no source."""
    start: int
    """Start of its marker in ``raw_text`` (code points)."""
    end: int
    """End of its marker in ``raw_text`` (code points, exclusive)."""
    raw: str
    """The marker as written, e.g. ``[7]`` or ``[2, 7]``."""

    @classmethod
    def of(cls, dangling: DanglingCitation) -> DanglingMarker:
        return cls(number=dangling.number, start=dangling.start, end=dangling.end, raw=dangling.raw)


class Answer(BaseModel):
    """A finished turn: the final text and sources, the contract message, and how it was made."""

    model_config = ConfigDict(extra="forbid")

    text: str
    """The finalized answer text (markers renumbered, dangling ones removed), or the
    no-answer message."""
    sources: list[Source]
    """The cited sources in first-citation order, under the numbers the text uses: the
    conversation's (a source an earlier turn cited keeps its number, new ones continue the
    count) or, under ``numbering = "turn"``, 1..k."""
    anchors: list[Anchor] = Field(default_factory=list)
    """Inline citation anchors into ``text`` (code points)."""
    suggested_replies: list[SuggestedReply] = Field(default_factory=list)
    """Follow-up chips the model proposed."""
    message: AnswerMessage
    """The answer as MCP content blocks with ``_meta`` (the citation contract)."""
    agent: str
    """The agent that answered (a follow-up's is the conversation's)."""
    conversation_id: str
    """The conversation to continue with a follow-up."""
    turn: int = Field(ge=1)
    """1-based turn number within the conversation."""
    runner_id: str
    """This turn's runner id (a fresh uuid4)."""
    log_id: str | None = None
    """The turn's log entry, for feedback."""
    trace_id: str | None = None
    """The turn's trace id."""
    no_answer: bool = False
    """True when the no-answer message was substituted."""
    rounds: list[RoundRecord] = Field(default_factory=list)
    """Every model round: messages shown, tools called, numbering visible, text written."""
    forced: list[ToolCallRecord] = Field(default_factory=list)
    """The search the service forced before the model (first turns only)."""
    raw_text: str = ""
    """The model's text before finalizing (what ``on_token`` received)."""
    dropped: list[Source] = Field(default_factory=list)
    """Held sources no marker cited, with their numbers before finalizing."""
    dangling: list[DanglingMarker] = Field(default_factory=list)
    """Markers that named no source."""
    mapping: dict[int, int] = Field(default_factory=dict)
    """Number the model wrote → final number, for every cited source."""
    keep: int = Field(default=0, ge=0)
    """Numbers ``1..keep`` were the conversation's before this turn and kept their meaning
    (conversation-wide numbering); ``0`` in a first turn or under ``numbering = "turn"``."""

    @property
    def references(self) -> list[Reference]:
        """The final sources as client cards, each with the spans of it the answer's claims
        rest on (from the message's source quotes)."""
        spans: dict[str, dict[tuple[str, int | None, int | None], CitedSpan]] = {}
        for quote in self.message.source_quotes:
            key = (quote.text, quote.start_index, quote.end_index)
            spans.setdefault(quote.source_uri, {}).setdefault(
                key, CitedSpan(text=quote.text, start=quote.start_index, end=quote.end_index)
            )
        return [
            source.to_reference().model_copy(
                update={"cited_spans": list(spans.get(source.uri, {}).values())}
            )
            for source in self.sources
        ]

    def to_done_event(self) -> DoneEvent:
        """The ``done`` event every transport sends at the end of a turn."""
        return DoneEvent(
            text=self.text,
            references=self.references,
            suggested_replies=[
                SuggestedReplyPayload(label=reply.label, message=reply.message)
                for reply in self.suggested_replies
            ],
            message=self.message.to_wire(),
            conversation_id=self.conversation_id,
            turn=self.turn,
            log_id=self.log_id,
            trace_id=self.trace_id,
            no_answer=self.no_answer,
        )

    def _repr_html_(self) -> str:
        return self.message._repr_html_()
