"""Evaluation datasets: JSONL cases with gold claims, expected outcomes and the reader.

One line is one :class:`Case`: a conversation of one or more turns asked by one reader of one
agent. Each turn says what a good answer looks like: the claims it should make and the
entities that support each, whether it should answer at all, which entities it must or must
not cite, and how many searches it should take. A case may bring its own documents (an ALCE
item does): its agent then searches those alone, not the corpus it names. Loading validates
every line and reports every problem with its line number and field path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from citelab._errors import InvalidInput
from citelab._jsonl import JsonlRows, load_jsonl
from citelab.corpus import Corpus, Document, Reader

__all__ = [
    "Case",
    "Dataset",
    "GoldClaim",
    "GoldTurn",
    "ReaderSpec",
    "check_dataset",
    "load_dataset",
]

_ENTITY_URI = r"^entity:[A-Za-z0-9_.-]+/[A-Za-z0-9_.:-]+$"


class ReaderSpec(BaseModel):
    """Who asks: a user id (None for anonymous), roles and the reader's language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str | None = None
    """The user's id; None for an anonymous reader."""
    roles: list[str] = []
    """Roles that grant access to restricted documents."""
    langcode: str = Field(default="en", pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]+)?$")
    """The reader's current content language."""

    def to_reader(self) -> Reader:
        return Reader(user_id=self.user_id, roles=frozenset(self.roles), langcode=self.langcode)


class GoldClaim(BaseModel):
    """A claim a good answer makes, and the entities any of which supports it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1)
    """The claim in plain words."""
    supported_by: list[str] = Field(min_length=1)
    """``entity:<type>/<id>`` URIs; citing any one of them attributes the claim correctly."""

    @field_validator("supported_by")
    @classmethod
    def _uris(cls, value: list[str]) -> list[str]:
        _check_uris(value)
        return value


class GoldTurn(BaseModel):
    """One question of a conversation and what a good answer to it looks like."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str = Field(min_length=1)
    """What the reader asks."""
    expect_answer: bool = True
    """False when the right outcome is the no-answer message (nothing in reach answers it)."""
    claims: list[GoldClaim] = []
    """Claims a good answer makes (empty when no answer is expected)."""
    must_cite: list[str] = []
    """Entities the final sources must include."""
    must_not_cite: list[str] = []
    """Entities the final sources must not include (a same-label twin, a restricted doc)."""
    min_searches: int = Field(default=0, ge=0)
    """How many retrieval calls the turn needs at least, the service's forced first search
    included (a follow-up that must search says 1, a first turn that must search again 2)."""
    source_langcode: str | None = Field(default=None, pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]+)?$")
    """The language the cited sources must be shown in: the reader's when the entity has that
    translation, else the language it was retrieved in."""

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question must not be blank")
        return value

    @field_validator("must_cite", "must_not_cite")
    @classmethod
    def _entity_uris(cls, value: list[str]) -> list[str]:
        _check_uris(value)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> GoldTurn:
        if not self.expect_answer and (self.claims or self.must_cite):
            raise ValueError("a turn that expects no answer cannot list claims or must_cite")
        overlap = set(self.must_cite) & set(self.must_not_cite)
        if overlap:
            raise ValueError(f"entities both required and forbidden: {sorted(overlap)}")
        return self


class Case(BaseModel):
    """One conversation: a reader asks an agent one or more questions in a row."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=120, pattern=r"^[A-Za-z0-9_.:-]+$")
    """Unique within its dataset."""
    agent: str = Field(default="default", min_length=1)
    """The agent that answers (it names the corpus)."""
    reader: ReaderSpec = ReaderSpec()
    """Who asks."""
    turns: list[GoldTurn] = Field(min_length=1)
    """The questions, in order; later turns are follow-ups in the same conversation."""
    tags: list[str] = []
    """Free labels used to slice reports, e.g. ``same_label``, ``restricted``, ``multi_round``."""
    description: str = ""
    """Why the case exists: the hazard it probes."""
    canaries: list[str] = []
    """Words of documents this reader may not read: any of them in an answer is a leak."""
    documents: list[Document] = []
    """The case's own corpus: when given, the agent's retrieval searches these documents
    only, instead of the corpus the agent names (no other case sees them)."""

    @field_validator("tags")
    @classmethod
    def _tag_names(cls, value: list[str]) -> list[str]:
        bad = [tag for tag in value if not tag or not tag.replace("_", "").isalnum()]
        if bad:
            raise ValueError(f"tags must be words in snake_case, got {bad}")
        return value

    @field_validator("documents")
    @classmethod
    def _unique_documents(cls, value: list[Document]) -> list[Document]:
        keys = [doc.key for doc in value]
        repeated = sorted({f"{t}/{i}" for t, i in keys if keys.count((t, i)) > 1})
        if repeated:
            raise ValueError(f"documents must be unique by entity, repeated: {repeated}")
        return value

    def own_corpus(self) -> Corpus | None:
        """:attr:`documents` as a corpus (None when the case has none)."""
        if not self.documents:
            return None
        return Corpus(self.documents, name=f"case-{self.id}")


class Dataset:
    """The cases of one JSONL file, unique by id, in file order."""

    def __init__(self, name: str, cases: Sequence[Case], path: Path | None = None) -> None:
        self.name = name
        self.path = path
        self.cases = list(cases)
        seen: set[str] = set()
        for case in self.cases:
            if case.id in seen:
                raise InvalidInput(f"dataset {name}: duplicate case id {case.id!r}")
            seen.add(case.id)

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    @property
    def agents(self) -> list[str]:
        return sorted({case.agent for case in self.cases})


def load_dataset(path: str | Path, name: str | None = None) -> Dataset:
    """Load a JSONL dataset; every bad line is reported with its number and field path."""
    path = Path(path)
    cases = load_jsonl(path, _CASES)
    if not cases:
        raise InvalidInput(f"dataset {path} has no cases")
    return Dataset(name or path.stem, cases, path)


def check_dataset(dataset: Dataset, corpora: dict[str, Corpus]) -> list[str]:
    """Problems between a dataset and its corpora: unknown agents, entities not in the corpus.

    ``corpora`` maps an agent name to the corpus it answers from.
    """
    problems: list[str] = []
    for case in dataset:
        corpus = case.own_corpus() or corpora.get(case.agent)
        if corpus is None:
            problems.append(f"case {case.id}: no corpus for agent {case.agent!r}")
            continue
        for index, turn in enumerate(case.turns):
            for uri in _turn_uris(turn):
                if _key(uri) not in corpus:
                    problems.append(f"case {case.id} turn {index}: {uri} is not in {corpus.name}")
    return problems


def _turn_uris(turn: GoldTurn) -> list[str]:
    uris = [uri for claim in turn.claims for uri in claim.supported_by]
    return uris + turn.must_cite + turn.must_not_cite


def _key(uri: str) -> tuple[str, str]:
    entity_type, _, entity_id = uri.removeprefix("entity:").partition("/")
    return entity_type, entity_id


def _check_uris(uris: list[str]) -> None:
    bad = [uri for uri in uris if not re.match(_ENTITY_URI, uri)]
    if bad:
        raise ValueError(f"expected entity:<type>/<id> URIs, got {bad}")


def _repeated(case: Case, first: int) -> str:
    return f"field id: duplicate {case.id!r} (first on line {first})"


_CASES = JsonlRows(Case, what="dataset", whole="(case)", key=lambda c: c.id, repeated=_repeated)
