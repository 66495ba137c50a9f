"""Read tool output rows into one shape, reporting every bad row by index and field.

Three row shapes arrive:

- ``rag_search`` rows: ``{entity_type, entity_id, langcode?, chunk_id?, content, score,
  title?, url?, bm25_score?, fields?}``.
- listing rows shaped like rag_search's, under ``{"results": [...]}``; ``content`` and
  ``score`` may be missing, the label is ``label`` or ``title``.
- tool-API rows under ``{"outputs": {"results": [...]}, "summary": "..."}``: the entity is
  ``_metadata.type`` / ``_metadata.id`` (``_metadata.langcode`` and ``_metadata.url``
  optional), the label is ``label``.

A row's fields are its ``fields`` object (when given) plus every key not named above.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError

from citelab._errors import InvalidInput

__all__ = ["Row", "parse_listed_output", "parse_rag_rows"]

_ENTITY_TYPE = Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")]


def _entity_id(value: object) -> str:
    """Ids may arrive as integers (Drupal's are); booleans and empty strings are bugs."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f"expected a string or an integer, got {type(value).__name__}")
    if value == "":
        raise ValueError("must not be empty")
    return str(value)


_ENTITY_ID = Annotated[str, PlainValidator(_entity_id)]
_MAX_PROBLEMS = 20
_RowParser = Callable[[int, Mapping[str, Any]], "Row"]


@dataclass(frozen=True, slots=True)
class Row:
    """One validated row, whatever shape it came in."""

    index: int
    entity_type: str
    entity_id: str
    content: str
    langcode: str | None = None
    chunk_id: str | None = None
    score: float | None = None
    label: str | None = None
    url: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.entity_type, self.entity_id)


class _Strict(BaseModel):
    # Strict: a score given as "0.9" or an id given as true is a bug upstream, not a value.
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    fields: dict[str, Any] | None = None
    bm25_score: float | None = None

    def all_fields(self) -> dict[str, Any]:
        return {**(self.fields or {}), **(self.model_extra or {})}


class _RagRow(_Strict):
    entity_type: _ENTITY_TYPE
    entity_id: _ENTITY_ID
    langcode: str | None = None
    chunk_id: str | int | None = None
    content: str
    score: float
    title: str | None = None
    url: str | None = None


class _ListedRow(_Strict):
    entity_type: _ENTITY_TYPE
    entity_id: _ENTITY_ID
    langcode: str | None = None
    chunk_id: str | int | None = None
    content: str | None = None
    score: float | None = None
    label: str | None = None
    title: str | None = None
    url: str | None = None


class _Metadata(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    type: _ENTITY_TYPE
    id: _ENTITY_ID
    langcode: str | None = None
    url: str | None = None


class _ToolApiRow(_Strict):
    metadata: _Metadata = Field(alias="_metadata")
    label: str | None = None
    title: str | None = None
    content: str | None = None
    url: str | None = None


def parse_rag_rows(rows: object) -> list[Row]:
    """Validate rag_search result rows; one :class:`InvalidInput` lists every problem."""
    if not isinstance(rows, Sequence) or isinstance(rows, str | bytes):
        raise InvalidInput(f"rag_search results: expected a list of rows, got {_kind(rows)}")
    return _parse_all(rows, "results", _rag_row)


def parse_listed_output(output: object) -> tuple[list[Row], str | None]:
    """Validate a listing tool's output (either shape); returns its rows and its summary."""
    if not isinstance(output, Mapping):
        raise InvalidInput(f"source tool output: expected an object, got {_kind(output)}")
    summary = output.get("summary")
    if summary is not None and not isinstance(summary, str):
        raise InvalidInput(f"source tool output: summary: expected a string, got {_kind(summary)}")
    if "results" in output:
        return _parse_list(output["results"], "results", _listed_row), summary
    outputs = output.get("outputs")
    if isinstance(outputs, Mapping) and "results" in outputs:
        return _parse_list(outputs["results"], "outputs.results", _tool_api_row), summary
    raise InvalidInput(
        "source tool output: expected 'results' or 'outputs.results', "
        f"got keys {sorted(str(key) for key in output)}"
    )


def _parse_list(rows: object, where: str, parse: _RowParser) -> list[Row]:
    if not isinstance(rows, list):
        raise InvalidInput(f"source tool output: {where}: expected a list, got {_kind(rows)}")
    return _parse_all(rows, where, parse)


def _parse_all(rows: Sequence[object], where: str, parse: _RowParser) -> list[Row]:
    parsed: list[Row] = []
    problems: list[str] = []
    for index, data in enumerate(rows):
        place = f"{where}[{index}]"
        if not isinstance(data, Mapping):
            problems.append(f"{place}: expected an object, got {_kind(data)}")
            continue
        try:
            parsed.append(parse(index, data))
        except ValidationError as exc:
            problems.extend(_describe(place, exc))
    if problems:
        shown = problems[:_MAX_PROBLEMS]
        more = len(problems) - len(shown)
        tail = [f"… and {more} more"] if more else []
        raise InvalidInput(
            f"{len(problems)} problem(s) in tool output:\n" + "\n".join(shown + tail)
        )
    return parsed


def _rag_row(index: int, data: Mapping[str, Any]) -> Row:
    row = _RagRow.model_validate(data)
    return Row(
        index=index,
        entity_type=row.entity_type,
        entity_id=row.entity_id,
        content=row.content,
        langcode=row.langcode,
        chunk_id=None if row.chunk_id is None else str(row.chunk_id),
        score=row.score,
        label=row.title,
        url=row.url,
        fields=row.all_fields(),
    )


def _listed_row(index: int, data: Mapping[str, Any]) -> Row:
    row = _ListedRow.model_validate(data)
    return Row(
        index=index,
        entity_type=row.entity_type,
        entity_id=row.entity_id,
        content=row.content or "",
        langcode=row.langcode,
        chunk_id=None if row.chunk_id is None else str(row.chunk_id),
        score=row.score,
        label=row.label or row.title,
        url=row.url,
        fields=row.all_fields(),
    )


def _tool_api_row(index: int, data: Mapping[str, Any]) -> Row:
    row = _ToolApiRow.model_validate(data)
    return Row(
        index=index,
        entity_type=row.metadata.type,
        entity_id=row.metadata.id,
        content=row.content or "",
        langcode=row.metadata.langcode,
        label=row.label or row.title,
        url=row.url or row.metadata.url,
        fields=row.all_fields(),
    )


def _describe(place: str, exc: ValidationError) -> list[str]:
    out = []
    for error in exc.errors():
        path = ".".join(str(part) for part in error["loc"])
        out.append(f"{place}.{path}: {error['msg']}" if path else f"{place}: {error['msg']}")
    return out


def _kind(value: object) -> str:
    return type(value).__name__
