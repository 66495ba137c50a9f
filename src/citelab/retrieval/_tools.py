"""Tools the model can call to get sources: ``rag_search`` and configured listing tools.

Both have the same interface (``SourceTool``): ``.name``, ``.spec`` (the OpenAI-style function
tool schema the model sees) and ``.run(arguments, reader) -> dict`` (structured output).
Arguments arrive as the model wrote them (a JSON string or a dict) and are validated here;
anything wrong raises ``InvalidInput`` saying which argument and why. What the asking reader
may not read is removed inside ``run``, so it never reaches the model, a log or a transport.

Output shapes (the rows source processing consumes):

- ``rag_search``: ``{"results": [RagResult...]}`` ordered by score, best first.
- a listing tool with ``shape="rag"``: ``{"results": [ListedResult...]}``: the same keys plus
  the entity's ``fields``; ``content`` is the first chunk of the entity (may be empty) and
  ``score`` is 1.0 (a listing is complete by design; it is not ranked).
- a listing tool with ``shape="tool_api"``: ``{"outputs": {"results": [{"_metadata": {"type",
  "id", "langcode"[, "url"]}, "label": ..., <field>: <value>...}]}, "summary": "..."}``; no
  content, so source processing shows each entity as its label beside its field values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from citelab._errors import ConfigError, InvalidInput
from citelab.corpus import (
    ChunkingParams,
    Corpus,
    Document,
    Reader,
    chunk_id,
    chunk_spans,
)
from citelab.retrieval._index import SearchHit, SearchIndex

__all__ = [
    "MAX_RESULTS_LIMIT",
    "ListedResult",
    "ListingTool",
    "RagResult",
    "RagSearch",
    "RagSearchArguments",
    "SourceTool",
]

#: The most results one call may ask for.
MAX_RESULTS_LIMIT = 50

_Arguments = TypeVar("_Arguments", bound=BaseModel)
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_RAG_DESCRIPTION = (
    "Search the knowledge base for passages relevant to a query. Returns the best matching "
    "passages with their source entity, title, URL and a relevance score in [0, 1]. Call it "
    "again with other words if the results do not answer the question."
)


@runtime_checkable
class SourceTool(Protocol):
    """A tool whose output holds sources: what the agent loop records and numbers."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> Literal["rag_search", "listing"]: ...
    @property
    def spec(self) -> dict[str, Any]: ...
    def run(self, arguments: Mapping[str, Any] | str, reader: Reader) -> dict[str, Any]: ...


class RagSearchArguments(BaseModel):
    """What the model passes to ``rag_search``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: str = Field(min_length=1, max_length=2000)
    """What to search for."""
    max_results: int | None = Field(default=None, ge=1, le=MAX_RESULTS_LIMIT)
    """How many passages to return; the tool's default when absent."""

    @field_validator("query")
    @classmethod
    def _has_words(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


class _NoArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RagResult(BaseModel):
    """One passage returned by ``rag_search``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    entity_type: str
    entity_id: str
    langcode: str
    """The language of this passage (the translation it was found in)."""
    chunk_id: str
    """Stable id of the passage: ``<entity_type>/<entity_id>:<langcode>:<ordinal>``."""
    content: str
    """The passage text (may be empty for an entity known only by its title and fields)."""
    score: float = Field(ge=0.0, le=1.0)
    """Normalized relevance in [0, 1] (see ``SearchHit.score``); 1.0 for listings."""
    title: str
    url: str | None
    bm25_score: float | None = None
    """The raw BM25 score; None for listings."""


class ListedResult(RagResult):
    """One entity returned by a listing tool in the ``rag`` shape."""

    fields: dict[str, Any]
    """The entity's fields, so that two entities sharing a label stay distinguishable."""


class RagSearch:
    """The ``rag_search`` tool over a ``SearchIndex``.

    Access filtering is exact rather than approximate: the index ranks only the chunks the
    reader may read (a mask applied before the top k are chosen), which is what over-fetching
    approximates; every hit is checked again before it is returned.
    """

    kind: Literal["rag_search"] = "rag_search"

    def __init__(
        self,
        index: SearchIndex,
        name: str = "rag_search",
        default_max_results: int = 5,
        *,
        description: str = _RAG_DESCRIPTION,
        reader_language_only: bool = False,
    ) -> None:
        self.index = index
        self.name = _tool_name(name)
        self.default_max_results = _max_results(default_max_results, name)
        self.description = description
        self.reader_language_only = reader_language_only
        """Search only the reader's language instead of every translation."""

    @property
    def spec(self) -> dict[str, Any]:
        parameters = {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What to search for: keywords or a short question.",
                    "minLength": 1,
                    "maxLength": 2000,
                },
                "max_results": {
                    "type": "integer",
                    "description": (
                        f"How many passages to return (default {self.default_max_results})."
                    ),
                    "minimum": 1,
                    "maximum": MAX_RESULTS_LIMIT,
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        }
        return _function_spec(self.name, self.description, parameters)

    def run(self, arguments: Mapping[str, Any] | str, reader: Reader) -> dict[str, Any]:
        """Search for what the model asked; only passages ``reader`` may read come back."""
        args = _parse(self.name, arguments, RagSearchArguments)
        langcode = reader.langcode if self.reader_language_only else None
        hits = self.index.search(
            args.query, reader, k=args.max_results or self.default_max_results, langcode=langcode
        )
        return {"results": [_rag_row(hit).model_dump() for hit in hits]}


class ListingTool:
    """A configured source tool listing every entity whose fields match fixed filters.

    ``filter_fields`` maps a field name to a wanted value (or a list of accepted values); an
    entity matches when each named field equals a wanted value or, for a list-valued field,
    contains one. Entities come in corpus order, in the reader's language when they have it.
    """

    kind: Literal["listing"] = "listing"

    def __init__(  # noqa: PLR0917 - the configured interface is positional
        self,
        name: str,
        description: str,
        corpus: Corpus,
        filter_fields: Mapping[str, Any],
        shape: Literal["rag", "tool_api"] = "rag",
        max_results: int = MAX_RESULTS_LIMIT,
        *,
        entity_type: str | None = None,
        chunking: ChunkingParams | None = None,
    ) -> None:
        if shape not in ("rag", "tool_api"):
            raise ConfigError(f"tool {name!r}: shape must be 'rag' or 'tool_api', got {shape!r}")
        self.name = _tool_name(name)
        self.description = description
        self.corpus = corpus
        self.filter_fields = dict(filter_fields)
        self.shape: Literal["rag", "tool_api"] = shape
        self.max_results = _max_results(max_results, name, limit=None)
        self.entity_type = entity_type
        self.chunking = chunking or ChunkingParams()

    @property
    def spec(self) -> dict[str, Any]:
        parameters = {"type": "object", "properties": {}, "additionalProperties": False}
        return _function_spec(self.name, self.description, parameters)

    def run(self, arguments: Mapping[str, Any] | str, reader: Reader) -> dict[str, Any]:
        """List the matching entities ``reader`` may read, up to ``max_results``."""
        _parse(self.name, arguments, _NoArguments)
        matching = [doc for doc in self.corpus if self._matches(doc) and doc.readable_by(reader)]
        listed = matching[: self.max_results]
        if self.shape == "rag":
            return {"results": [self._rag_row(doc, reader).model_dump() for doc in listed]}
        return {
            "outputs": {"results": [_tool_api_row(doc, reader) for doc in listed]},
            "summary": self._summary(len(listed), len(matching)),
        }

    def _matches(self, document: Document) -> bool:
        if self.entity_type is not None and document.entity_type != self.entity_type:
            return False
        return all(
            key in document.fields and _field_matches(document.fields[key], wanted)
            for key, wanted in self.filter_fields.items()
        )

    def _rag_row(self, document: Document, reader: Reader) -> ListedResult:
        langcode, translation = document.translation(reader.langcode)
        start, end = chunk_spans(translation.content, self.chunking.max_chars)[0]
        return ListedResult(
            entity_type=document.entity_type,
            entity_id=document.entity_id,
            langcode=langcode,
            chunk_id=chunk_id(document.entity_type, document.entity_id, langcode, 0),
            content=translation.content[start:end],
            score=1.0,
            title=translation.title,
            url=translation.url,
            fields=dict(document.fields),
        )

    def _summary(self, listed: int, matching: int) -> str:
        where = " and ".join(
            f"{key} = {_describe(value)}" for key, value in self.filter_fields.items()
        )
        what = f"entities of type {self.entity_type}" if self.entity_type else "entities"
        condition = f" where {where}" if where else ""
        if listed < matching:
            return f"Listed the first {listed} of {matching} {what}{condition}."
        return f"Listed {listed} {what}{condition}."


def _rag_row(hit: SearchHit) -> RagResult:
    chunk, translation = hit.chunk, hit.translation
    return RagResult(
        entity_type=chunk.entity_type,
        entity_id=chunk.entity_id,
        langcode=chunk.langcode,
        chunk_id=chunk.chunk_id,
        content=chunk.text,
        score=hit.score,
        title=translation.title,
        url=translation.url,
        bm25_score=hit.bm25_score,
    )


def _tool_api_row(document: Document, reader: Reader) -> dict[str, Any]:
    langcode, translation = document.translation(reader.langcode)
    metadata = {"type": document.entity_type, "id": document.entity_id, "langcode": langcode}
    if translation.url is not None:
        metadata["url"] = translation.url
    # The entity's own fields come first so that the reserved keys always win.
    return {**document.fields, "_metadata": metadata, "label": translation.title}


def _field_matches(value: Any, wanted: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    accepted = wanted if isinstance(wanted, list) else [wanted]
    # type() as well as ==, so that True never matches 1 nor 1 match "1".
    return any(type(v) is type(w) and v == w for v in values for w in accepted)


def _describe(value: Any) -> str:
    if isinstance(value, list):
        return " or ".join(str(item) for item in value)
    return str(value)


def _function_spec(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _tool_name(name: str) -> str:
    if not _TOOL_NAME.match(name):
        raise ConfigError(
            f"tool name {name!r} must be 1 to 64 letters, digits, '_' or '-' (what models accept)"
        )
    return name


def _max_results(value: int, name: str, limit: int | None = MAX_RESULTS_LIMIT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"tool {name!r}: max_results must be a positive integer, got {value!r}")
    if limit is not None and value > limit:
        raise ConfigError(f"tool {name!r}: max_results must be at most {limit}, got {value}")
    return value


def _parse(tool: str, arguments: Mapping[str, Any] | str, model: type[_Arguments]) -> _Arguments:
    """Validate the model's arguments, with an error naming each bad argument."""
    data = _decode(tool, arguments)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_problem(error) for error in exc.errors())
        raise InvalidInput(f"{tool}: {problems}") from exc


def _decode(tool: str, arguments: Mapping[str, Any] | str) -> dict[str, Any]:
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise InvalidInput(
                f"{tool}: arguments are not valid JSON ({exc.msg} at line {exc.lineno} "
                f"column {exc.colno})"
            ) from exc
    if not isinstance(arguments, Mapping):
        raise InvalidInput(f"{tool}: arguments must be a JSON object, got {_json_type(arguments)}")
    return dict(arguments)


def _problem(error: ErrorDetails) -> str:
    where = ".".join(str(part) for part in error["loc"])
    if error["type"] == "missing":
        return f"missing required argument {where!r}"
    if error["type"] == "extra_forbidden":
        return f"unexpected argument {where!r}"
    return f"argument {where!r}: {error['msg']}"


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", int: "a number"}
    names |= {float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)
