"""What a run records per turn: everything the scorers read, and nothing else.

A :class:`TurnRecord` is built from an answer (the runner does this from
``citelab.answers.Answer``) or directly from texts (the meta-evaluation builds them from a
perturbed model's output). It is plain data, written as one JSON line per case, so a run can
be resumed and re-scored without running any model again.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citelab.contract import CITATIONS_KEY, Anchor

__all__ = ["CaseRecord", "RestrictedEntity", "RoundRecord", "SourceRecord", "TurnRecord"]


class SourceRecord(BaseModel):
    """A numbered source as the turn held it."""

    model_config = ConfigDict(frozen=True)

    number: int
    """Its citation number (final numbers for final sources, held numbers for candidates)."""
    uri: str
    """``entity:<type>/<id>`` for corpus entities."""
    title: str = ""
    """The label shown for it."""
    content: str = ""
    """The text the model was given for it (what support is judged against)."""
    langcode: str | None = None
    """The language of the version used."""

    @property
    def has_passage(self) -> bool:
        """Whether a judge has text of the source to read (``content`` is not blank): a
        citation of a source without one cannot be judged (a vendor's url_citation, an
        AnswerMessage's resource_link without source quotes)."""
        return bool(self.content.strip())

    @property
    def evidence(self) -> str:
        """The passage a judge reads: title and content, as ALCE formats a document."""
        return f"Title: {self.title}\n{self.content}"


class RoundRecord(BaseModel):
    """One model call of a turn."""

    model_config = ConfigDict(frozen=True)

    index: int
    """0 for the first round."""
    text: str = ""
    """The text the model wrote in this round (markers as written)."""
    visible: dict[int, str] = {}
    """Number → URI: the numbering the model could see when it wrote this round."""
    searches: int = 0
    """Retrieval or source-tool calls the model made in this round."""
    added: dict[int, str] = {}
    """Number → URI of the sources this round's calls added to the turn."""
    input_tokens: int | None = None
    """The call's prompt tokens (its model's ``usage``); None in records written before
    citelab counted tokens."""
    output_tokens: int | None = None
    """The call's completion tokens."""
    tokens_estimated: bool = False
    """True when citelab counted the tokens (the model reported none)."""


class RestrictedEntity(BaseModel):
    """An entity of the agent's corpus the case's reader may not read."""

    model_config = ConfigDict(frozen=True)

    uri: str
    titles: list[str] = []
    """Its labels in every language: seeing one in an answer is a leak."""
    phrases: list[str] = []
    """Distinctive phrases of its content (from the dataset) whose appearance is a leak."""


class TurnRecord(BaseModel):
    """One answered turn: what the model wrote, what finalize made of it, and the contract."""

    model_config = ConfigDict(frozen=True)

    turn: int = 0
    """Position in the conversation, from 0."""
    question: str = ""
    text: str = ""
    """The finalized answer text (markers renumbered, dangling ones removed)."""
    raw_text: str = ""
    """What the model wrote, before finalize."""
    sources: list[SourceRecord] = []
    """The final sources in first-citation order, under their final numbers."""
    candidates: list[SourceRecord] = []
    """Every source the turn held before finalize, under its held number."""
    seen: list[SourceRecord] = []
    """Every source the model was shown in any round, once per URI (numbers as first seen)."""
    message: dict[str, Any] = {}
    """The AnswerMessage in its wire shape (MCP blocks and ``_meta``)."""
    no_answer: bool = False
    """True when the no-answer message was substituted."""
    rounds: list[RoundRecord] = []
    forced_searches: int = 0
    """Searches the service ran before the model (a conversation's first turn)."""
    mapping: dict[int, int] = {}
    """Held number → final number, for every held source that survived."""
    keep: int = 0
    """Numbers ``1..keep`` were the conversation's before this turn (conversation-wide
    numbering: finalize kept them); ``0`` in a first turn or under per-turn numbering."""
    earlier: dict[int, str] = {}
    """Number → URI as the conversation's earlier turns used them in their final texts (the
    first use of a number wins): what a shared source list shows."""
    dangling: int = 0
    """Markers finalize removed because they pointed at no source (as the service counted)."""
    restricted: list[RestrictedEntity] = []
    """Entities of the corpus this reader may not read (for the leakage check)."""
    canaries: list[str] = []
    """Words only restricted documents contain: any of them in the text is a leak."""
    error: str | None = None
    """Set when the turn failed; the scorers then score nothing for it."""
    injections: list[dict[str, Any]] = []
    """What a perturbing model injected, when one was used (ground truth for meta-evaluation):
    each a :class:`citelab.models.Injection` of the turn's model calls, in call order."""
    perturbed: bool = False
    """True when a perturbing model answered the turn: :attr:`injections` is then every fault
    it put in (an empty list: every citation is as the inner model wrote it)."""
    seconds: float = 0.0
    """Wall time of the turn."""

    @property
    def anchors(self) -> list[Anchor]:
        """The ``_meta`` citation anchors of the message's text block."""
        block = self.text_block
        if block is None:
            return []
        meta = block.get("_meta") or {}
        return [Anchor.model_validate(a) for a in meta.get(CITATIONS_KEY, [])]

    @property
    def text_block(self) -> dict[str, Any] | None:
        for block in self.message.get("content", []):
            if isinstance(block, dict) and block.get("type") == "text":
                return block
        return None

    @property
    def link_uris(self) -> list[str]:
        """The ``uri`` of every ``resource_link`` block, in message order."""
        return [
            str(block.get("uri"))
            for block in self.message.get("content", [])
            if isinstance(block, dict) and block.get("type") == "resource_link"
        ]

    @property
    def input_tokens(self) -> int:
        """Prompt tokens of every round of the turn."""
        return sum(r.input_tokens or 0 for r in self.rounds)

    @property
    def output_tokens(self) -> int:
        """Completion tokens of every round of the turn."""
        return sum(r.output_tokens or 0 for r in self.rounds)

    @property
    def tokens_estimated(self) -> bool:
        """Whether any round's tokens were counted by citelab, not reported by the model."""
        return any(r.tokens_estimated for r in self.rounds)

    @property
    def searches(self) -> int:
        """Retrieval calls of the turn: the service's forced search and the model's own."""
        return self.forced_searches + sum(r.searches for r in self.rounds)


class CaseRecord(BaseModel):
    """Every turn of one case under one variant and model."""

    model_config = ConfigDict(frozen=True)

    key: str
    """Identifies the unit of work: variant, model, dataset and case (used to resume)."""
    variant: str
    model: str
    dataset: str
    case_id: str
    tags: list[str] = []
    turns: list[TurnRecord] = Field(default_factory=list)
