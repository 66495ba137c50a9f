"""Reading other people's answers: ALCE result files, vendor API responses, AnswerMessages.

Every format becomes a list of :class:`ExternalAnswer` — a question, an answer text whose
``[n]`` markers cite numbered sources, and those sources with the passages a judge reads —
which :func:`citelab.evals.score_answers` scores with the same scorers as ``citelab eval``.

``alce``
    ALCE result files as researchers have them: ``{"data": [{"question", "docs": [{"title",
    "text"}] , "output", ...}]}`` (a bare list of items is read too). ``docs`` are numbered
    from 1; a doc with ``sent`` (QA-extracted docs) is judged on ``sent`` as ALCE does.
``citelab``
    AnswerMessages in their wire shape (MCP blocks and ``_meta``). The text's own ``[n]``
    markers cite the sources in priority order; a text without markers gets them from its
    anchors.
``anthropic``, ``openai-responses``, ``openai-chat``, ``cohere``, ``gemini``
    The vendor's response (JSON, or the SDK object itself) read by the matching converter of
    :mod:`citelab.contract.convert`. Its anchors become ``[n]`` markers at the end of each
    cited span, ``n`` the source's position in the message.

A file holds one JSON value (one record, or a list of them) or JSON Lines (one record per
line). A record is the answer itself, or an envelope ``{"id"?, "question"?, "response":
<the answer>, "sources"?: [{"uri", "title"?, "content"?}]}``; for ``anthropic`` the
request's ``documents`` (document blocks, in request order) may stand in for ``sources``.
A source's passage is its ``content`` when given, else the passage text the response carries
for it (Cohere document ``text``/``snippet``, Gemini ``retrievedContext.text``), else its
source quotes (``_meta["citelab/source_quotes"]`` of an AnswerMessage; Anthropic's
``cited_text``), else nothing: a resource_link's ``description`` says what the resource is,
not what it says, and is not read as its passage. A source without a passage cannot be
judged: the scorers leave its citations out of recall and precision (see
:mod:`citelab.evals.scorers`), and ``score_answers`` lists it (``without_passage``). A cited
URL finds its given source's passage after tracking parameters (``utm_source=openai``…) and
trivial differences are removed (:mod:`citelab.evals.external._urls`).

Bad input is an ``InvalidInput`` naming the file, the record and the field.

Formats are registered (:data:`ANSWER_FORMATS`, a :class:`~citelab.Registry` of
:class:`AnswerReader` s), so a user's own format is one more name: a function from the loaded
data to answers, or a :class:`MessageReader` around a function that converts one record to an
AnswerMessage (envelopes, passages and markers then work as for the vendors)::

    ANSWER_FORMATS.register("mistral", MessageReader(my_mistral_to_message))
    score_answers("answers.jsonl", "mistral")         # citelab score --format mistral
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from citelab._errors import CitelabError, ConfigError, InvalidInput
from citelab._jsonl import json_lines
from citelab._registry import Registry, import_attr
from citelab.contract import parse_markers
from citelab.evals.external._urls import PagePassages
from citelab.evals.records import SourceRecord

if TYPE_CHECKING:  # imported where a vendor or citelab answer is read (ALCE files need none)
    from citelab.contract import AnswerMessage

__all__ = [
    "ANSWER_FORMATS",
    "AnswerFormat",
    "AnswerReader",
    "ExternalAnswer",
    "MessageReader",
    "read_answers",
    "to_answers",
]

AnswerFormat = Literal[
    "alce", "citelab", "anthropic", "openai-responses", "openai-chat", "cohere", "gemini"
]
"""The built-in formats' names; any name registered in :data:`ANSWER_FORMATS` works too."""
_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True)
class ExternalAnswer:
    """One answer to score, whatever format it came in."""

    id: str
    """The record's id (its ``id`` field, else its position)."""
    question: str
    text: str
    """The answer with ``[n]`` markers (ALCE outputs exactly as written)."""
    sources: list[SourceRecord]
    """Numbered from 1, in the order the markers use."""
    message: dict[str, Any] = field(default_factory=dict)
    """The AnswerMessage in its wire shape (vendor and citelab formats)."""
    raw_text: str = ""
    """The text before markers were added (vendor formats) or as given."""
    dropped: tuple[str, ...] = ()
    """What the format's converter left out of this answer, one line each (Gemini: chunks
    without uri, supports inside thought parts, citationMetadata)."""
    given: tuple[str, ...] = ()
    """The URIs of the sources the record's envelope gave (``sources``, or Anthropic's
    request ``documents``), as written."""


class AnswerReader(Protocol):
    """Reads one answer format: ``reader(data, where)`` → the answers of ``data`` (a file's
    JSON value or the list of its JSON Lines records, or what was given to
    :func:`~citelab.evals.score_answers`); bad input is an ``InvalidInput`` that starts with
    ``where`` and names the record and the field."""

    def __call__(self, data: Any, where: str) -> list[ExternalAnswer]: ...


# --- ALCE -----------------------------------------------------------------------------------


class _AlceDoc(BaseModel):
    model_config = ConfigDict(extra="allow")

    title: str = ""
    text: str | None = None
    sent: str | None = None

    @model_validator(mode="after")
    def _has_text(self) -> _AlceDoc:
        if self.text is None and self.sent is None:
            raise ValueError("a doc needs 'text' (or 'sent')")
        return self

    @property
    def passage(self) -> str:
        # ALCE's _format_document: "sent" wins when present (QA-extracted docs).
        return self.sent if self.sent is not None else self.text or ""


class _AlceItem(BaseModel):
    model_config = ConfigDict(extra="allow")

    question: str
    output: str
    docs: list[_AlceDoc] = []
    id: str | int | None = None


def _alce_answer(data: Any, where: str, position: int) -> ExternalAnswer:
    item = _validate(_AlceItem, data, where)
    sources = [
        SourceRecord(number=n, uri=f"alce:doc/{n}", title=doc.title, content=doc.passage)
        for n, doc in enumerate(item.docs, start=1)
    ]
    ident = str(item.id) if item.id is not None else str(position)
    return ExternalAnswer(ident, item.question, item.output, sources, raw_text=item.output)


def read_alce(data: Any, where: str) -> list[ExternalAnswer]:
    """ALCE result files as researchers have them: {"data": [{"question", "docs", "output"}]}
    or a bare list of items; docs numbered from 1, judged on their "sent" when present."""
    items, named = _alce_items(data, where)
    return [_alce_answer(item, f"{named}[{i}]", i) for i, item in enumerate(items)]


def _alce_items(data: Any, where: str) -> tuple[list[Any], str]:
    """The items, and how an item's position is named (``file: data[3]``)."""
    if isinstance(data, Mapping):
        if "data" not in data:
            raise InvalidInput(f"{where}: an ALCE result file needs a 'data' list of items")
        data = data["data"]
        where = f"{where}: data"
    if not isinstance(data, list):
        raise InvalidInput(f"{where}: expected a list of ALCE items, got {type(data).__name__}")
    return data, where


# --- envelopes and vendor responses ---------------------------------------------------------


class _GivenSource(BaseModel):
    model_config = ConfigDict(extra="allow")

    uri: str
    title: str | None = None
    content: str | None = None


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | int | None = None
    question: str = ""
    response: Any
    sources: list[_GivenSource] | None = None
    documents: list[dict[str, Any]] | None = None


def _envelope(data: Any, where: str) -> _Envelope:
    plain = _plain(data)
    if isinstance(plain, Mapping) and "response" in plain:
        return _validate(_Envelope, plain, where)
    return _Envelope(response=data)


def _plain(data: Any) -> Any:
    dump = getattr(data, "model_dump", None)
    return dump(mode="json") if callable(dump) else data


class MessageReader:
    """Reads records that convert to AnswerMessages: ``convert(response, sources=...)`` → an
    :class:`~citelab.contract.AnswerMessage` (a ``module:attr`` is imported when first used;
    ``None`` reads citelab's own wire shape). Each record is the response itself or an
    envelope ``{"id"?, "question"?, "response", "sources"?}`` (see the module docs); its
    anchors become ``[n]`` markers at the end of each cited span.

    ``keeps_markers``: a text that has ``[n]`` markers keeps them (citelab's own messages);
    ``reads_documents``: the envelope's ``documents`` (Anthropic document blocks) stand in for
    its sources; ``reports_dropped``: ``convert`` takes ``dropped=[]`` and says in it what it
    left out.
    """

    def __init__(
        self,
        convert: Callable[..., AnswerMessage] | str | None,
        *,
        description: str = "",
        keeps_markers: bool = False,
        reads_documents: bool = False,
        reports_dropped: bool = False,
    ) -> None:
        self._convert = convert
        self.description = description
        self.keeps_markers = keeps_markers
        self.reads_documents = reads_documents
        self.reports_dropped = reports_dropped

    def __call__(self, data: Any, where: str) -> list[ExternalAnswer]:
        items = data if isinstance(data, list) else [data]
        return [self.answer(item, f"{where}: record {i}", i) for i, item in enumerate(items)]

    def convert(self, response: Any, sources: list[dict[str, Any]], dropped: list[str]) -> Any:
        """The record's response as an AnswerMessage (as ``convert`` returns it)."""
        convert = self._convert
        if convert is None:
            from citelab.contract import AnswerMessage

            return AnswerMessage.model_validate(_plain(response))
        if isinstance(convert, str):
            convert = self._convert = import_attr(convert)
        options: dict[str, Any] = {"sources": sources or None}
        if self.reports_dropped:
            options["dropped"] = dropped
        return convert(response, **options)

    def answer(self, data: Any, where: str, position: int) -> ExternalAnswer:
        """One record as an answer."""
        from citelab.contract import AnswerMessage

        envelope = _envelope(data, where)
        given = _given_sources(envelope, self.reads_documents)
        dropped: list[str] = []
        try:
            message = self.convert(envelope.response, given, dropped)
        except ValidationError as exc:
            raise InvalidInput(f"{where}: not an AnswerMessage: {_first_error(exc)}") from exc
        except CitelabError as exc:
            raise InvalidInput(f"{where}: {exc}") from exc
        if not isinstance(message, AnswerMessage):
            raise InvalidInput(f"{where}: the converter returned {type(message).__name__}")
        return self._answer(envelope, message, given, dropped, position)

    def _answer(
        self,
        envelope: _Envelope,
        message: AnswerMessage,
        given: list[dict[str, Any]],
        dropped: list[str],
        position: int,
    ) -> ExternalAnswer:
        quoted = _quoted_passages(message)
        passages = PagePassages(
            {**quoted, **_response_passages(_plain(envelope.response)), **_passages(given)}
        )
        text = message.text
        if not self.keeps_markers or not parse_markers(text):
            text = _with_markers(message)
        sources = [
            SourceRecord(
                number=n,
                uri=link.uri,
                title=link.title or link.name,
                content=passages.get(link.uri, ""),
            )
            for n, link in enumerate(message.sources, start=1)
        ]
        ident = str(envelope.id) if envelope.id is not None else str(position)
        return ExternalAnswer(
            ident,
            envelope.question,
            text,
            sources,
            message.to_wire(),
            raw_text=message.text,
            dropped=tuple(dropped),
            given=tuple(_given_uris(given)),
        )


def _given_sources(envelope: _Envelope, reads_documents: bool) -> list[dict[str, Any]]:
    if envelope.sources is not None:
        return [source.model_dump(exclude_none=True) for source in envelope.sources]
    if envelope.documents is not None and reads_documents:
        return list(envelope.documents)
    return []


def _given_uris(given: Sequence[Mapping[str, Any]]) -> list[str]:
    from citelab.contract.convert import anthropic_document_source

    uris = [
        anthropic_document_source(item, index)["uri"]
        if item.get("type") == "document"
        else item.get("uri")
        for index, item in enumerate(given)
    ]
    return [uri for uri in uris if isinstance(uri, str)]


def _passages(given: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Source uri → passage, from given sources (``content``) or Anthropic documents."""
    from citelab.contract.convert import anthropic_document_source

    out: dict[str, str] = {}
    for index, item in enumerate(given):
        if item.get("type") == "document":
            source = anthropic_document_source(item, index)
            uri, content = source["uri"], source.get("content")
        else:
            uri, content = item.get("uri"), item.get("content")
        if isinstance(uri, str) and isinstance(content, str):
            out[uri] = content
    return out


def _quoted_passages(message: AnswerMessage) -> dict[str, str]:
    """Source uri → its source quotes (distinct, in order), joined by line breaks."""
    found: dict[str, list[str]] = {}
    for quote in message.source_quotes:
        texts = found.setdefault(quote.source_uri, [])
        if quote.text.strip() and quote.text not in texts:
            texts.append(quote.text)
    return {uri: "\n".join(texts) for uri, texts in found.items() if texts}


def _response_passages(data: Any) -> dict[str, str]:
    """Passage text a vendor response carries for its sources (Cohere, Gemini, Anthropic)."""
    found: dict[str, list[str]] = {}
    for uri, text in _walk_passages(data):
        if text not in found.setdefault(uri, []):
            found[uri].append(text)
    return {uri: "\n".join(texts) for uri, texts in found.items()}


def _walk_passages(data: Any) -> Iterable[tuple[str, str]]:
    if isinstance(data, list):
        for item in data:
            yield from _walk_passages(item)
        return
    if not isinstance(data, Mapping):
        return
    document = data.get("document") or data.get("tool_output")
    if isinstance(document, Mapping):  # a Cohere citation source
        uri = document.get("url") or document.get("uri") or data.get("id") or document.get("id")
        text = document.get("text") or document.get("snippet")
        if isinstance(uri, str) and isinstance(text, str):
            yield uri, text
    context = data.get("retrievedContext") or data.get("retrieved_context")
    if isinstance(context, Mapping):  # a Gemini grounding chunk
        uri, text = context.get("uri"), context.get("text")
        if isinstance(uri, str) and isinstance(text, str):
            yield uri, text
    for value in data.values():
        if isinstance(value, list | Mapping):
            yield from _walk_passages(value)


def _with_markers(message: AnswerMessage) -> str:
    """The text with ``[n]`` inserted at the end of every anchor (n: the source's position)."""
    numbers = {link.uri: n for n, link in enumerate(message.sources, start=1)}
    ends: dict[int, list[int]] = {}
    for anchor in message.anchors:
        number = numbers.get(anchor.source_uri)
        if number is not None and number not in ends.setdefault(anchor.end_index, []):
            ends[anchor.end_index].append(number)
    text = message.text
    for end in sorted(ends, reverse=True):
        markers = "".join(f"[{n}]" for n in sorted(ends[end]))
        text = text[:end] + markers + text[end:]
    return text


# --- files ----------------------------------------------------------------------------------


def read_answers(
    path: str | Path, answer_format: AnswerFormat | str = "alce"
) -> list[ExternalAnswer]:
    """The answers of a file in ``answer_format`` (see the module docs)."""
    path = Path(path)
    ANSWER_FORMATS.check(answer_format)  # before reading a big file
    reader = ANSWER_FORMATS.get(answer_format)
    read_path = getattr(reader, "read_path", None)
    if callable(read_path):  # a format that reads its own files (Inspect's zipped logs)
        answers: list[ExternalAnswer] = read_path(path)
        _check_unique([a.id for a in answers], str(path))
        return answers
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read it: {exc}") from exc
    data = _parse_file(raw, str(path))
    return to_answers(data, answer_format, where=str(path))


def to_answers(
    data: Any, answer_format: AnswerFormat | str = "alce", *, where: str = "input"
) -> list[ExternalAnswer]:
    """The answers of already-loaded data (a file's JSON, a list of SDK objects…)."""
    answers = ANSWER_FORMATS.get(answer_format)(data, where)
    if not answers:
        raise InvalidInput(f"{where}: no answers to score")
    _check_unique([a.id for a in answers], where)
    return answers


def _parse_file(raw: str, where: str) -> Any:
    """One JSON document, else JSON Lines (through :func:`citelab._jsonl.json_lines`)."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as whole:
        records, problems = json_lines(raw.splitlines())
        if len(records) + len(problems) < 2:
            raise InvalidInput(f"{where}: not JSON: {whole}") from whole
        if problems:
            number, problem = problems[0]
            raise InvalidInput(f"{where}: line {number}: not JSON: {problem}") from whole
        return [record for _, record in records]


def _check_unique(ids: list[str], where: str) -> None:
    seen: set[str] = set()
    for ident in ids:
        if ident in seen:
            raise InvalidInput(f"{where}: two records have the id {ident!r}")
        seen.add(ident)


def _validate(model: type[_M], data: Any, where: str) -> _M:
    try:
        return model.model_validate(_plain(data))
    except ValidationError as exc:
        raise InvalidInput(f"{where}: {_first_error(exc)}") from exc


def _first_error(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors()[:3]:
        location = ".".join(str(part) for part in error["loc"]) or "(the record)"
        problems.append(f"field {location}: {error['msg']}")
    more = len(exc.errors()) - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def _reader(thing: Any) -> AnswerReader:
    if not callable(thing):
        raise ConfigError(f"a reader is a function (data, where) -> answers, not {thing!r}")
    return thing  # type: ignore[no-any-return]  # callable: the protocol's one method


_CONVERT = "citelab.contract.convert"

ANSWER_FORMATS: Registry[AnswerReader] = Registry("answer format", convert=_reader)
"""Every answer format by name (:class:`~citelab.Registry` of :class:`AnswerReader` s)."""

ANSWER_FORMATS.register("alce", read_alce)
ANSWER_FORMATS.register(
    "citelab",
    MessageReader(
        None,
        description="AnswerMessages in their wire shape (MCP blocks and _meta); the text's own "
        "[n] markers cite the sources in priority order, else its anchors do.",
        keeps_markers=True,
    ),
)


def _vendor(name: str, converter: str, what: str, **options: bool) -> None:
    description = f"{what}, read by citelab.contract.convert.{converter}."
    reader = MessageReader(f"{_CONVERT}:{converter}", description=description, **options)
    ANSWER_FORMATS.register(name, reader)


_vendor("anthropic", "from_anthropic", "An Anthropic Messages response", reads_documents=True)
_vendor("openai-responses", "from_openai_responses", "An OpenAI Responses API response")
_vendor("openai-chat", "from_openai_chat", "An OpenAI Chat Completions response")
_vendor("cohere", "from_cohere", "A Cohere chat response")
_vendor("gemini", "from_gemini", "A Gemini response", reports_dropped=True)
