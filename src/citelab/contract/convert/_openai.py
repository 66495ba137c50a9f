"""OpenAI annotations: ``url_citation`` and ``file_citation``, Responses and Chat Completions.

- Responses API: an ``output_text`` content part ``{"type": "output_text", "text",
  "annotations": [...]}`` where a ``url_citation`` has ``start_index``/``end_index`` into the
  part's text plus ``url`` and ``title``, and a ``file_citation`` has ``file_id``,
  ``filename`` and one ``index`` (a position, not a span).
- Chat Completions: the assistant message ``{"role": "assistant", "content",
  "annotations": [{"type": "url_citation", "url_citation": {...}}]}`` (URL citations only).

Indices are read as code points, end exclusive (Python string indices; OpenAI documents them
only as "characters"). A file becomes the source uri ``openai-file:<file_id>``; such a
source is written back as a ``file_citation`` at the anchor's start. Shapes are read and
written with the ``openai`` SDK's own models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openai.types.chat import ChatCompletionMessage
from openai.types.responses import ResponseOutputText
from openai.types.responses.response_output_text import (
    AnnotationFileCitation,
    AnnotationURLCitation,
)

from citelab._errors import InvalidInput
from citelab.contract._message import AnswerMessage, build_message
from citelab.contract._payloads import Anchor
from citelab.contract.convert._common import (
    Losses,
    SourceBook,
    anchor_for,
    mapping_items,
    parse_foreign,
)

__all__ = [
    "OPENAI_FILE_SCHEME",
    "OPENAI_LOSSES",
    "from_openai_chat",
    "from_openai_responses",
    "to_openai_chat",
    "to_openai_responses",
]

OPENAI_FILE_SCHEME = "openai-file:"
"""Source uris of OpenAI files: ``openai-file:<file_id>``."""

OPENAI_LOSSES = Losses(
    to_target=(
        "source descriptions, priorities and uncited sources",
        "suggested replies",
        "a file citation's span: file_citation carries one index (the anchor's start)",
        "Chat Completions: file citations (it has url_citation only)",
    ),
    from_target=(
        "the order of uncited sources: sources are listed in first-citation order",
        "file citations become zero-width anchors (one position, no span)",
        "container_file_citation and file_path annotations, logprobs",
        "Responses: the part structure (all output_text parts are joined)",
    ),
)


def to_openai_responses(message: AnswerMessage) -> dict[str, Any]:
    """The answer as a Responses API ``output_text`` part with annotations."""
    titles = _titles(message)
    annotations = [_response_annotation(anchor, titles) for anchor in _ordered(message)]
    part = ResponseOutputText(type="output_text", text=message.text, annotations=annotations)
    return part.model_dump(mode="json", exclude_none=True)


def _response_annotation(
    anchor: Anchor, titles: dict[str, str]
) -> AnnotationURLCitation | AnnotationFileCitation:
    uri = anchor.source_uri
    if uri.startswith(OPENAI_FILE_SCHEME):
        return AnnotationFileCitation(
            type="file_citation",
            file_id=uri.removeprefix(OPENAI_FILE_SCHEME),
            filename=titles[uri],
            index=anchor.start_index,
        )
    return AnnotationURLCitation(
        type="url_citation",
        url=uri,
        title=titles[uri],
        start_index=anchor.start_index,
        end_index=anchor.end_index,
    )


def to_openai_chat(message: AnswerMessage) -> dict[str, Any]:
    """The answer as a Chat Completions assistant message with ``url_citation`` annotations."""
    titles = _titles(message)
    annotations = [
        {
            "type": "url_citation",
            "url_citation": {
                "url": anchor.source_uri,
                "title": titles[anchor.source_uri],
                "start_index": anchor.start_index,
                "end_index": anchor.end_index,
            },
        }
        for anchor in _ordered(message)
        if not anchor.source_uri.startswith(OPENAI_FILE_SCHEME)
    ]
    chat = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": message.text, "annotations": annotations}
    )
    return chat.model_dump(mode="json", exclude_none=True)


def _titles(message: AnswerMessage) -> dict[str, str]:
    titles = {source.uri: source.title or source.name for source in message.sources}
    for anchor in message.anchors:
        if anchor.source_uri not in titles:
            raise InvalidInput(f"anchor cites {anchor.source_uri!r}, which is not a source")
    return titles


def _ordered(message: AnswerMessage) -> list[Anchor]:
    return sorted(message.anchors, key=lambda a: (a.start_index, a.end_index))


def from_openai_responses(
    data: object, *, sources: Sequence[object] | None = None
) -> AnswerMessage:
    """Read an ``output_text`` part, a ``message`` output item, or a whole response.

    Every ``output_text`` part is joined, in order, into the answer text.
    """
    book = SourceBook(sources)
    text, anchors = "", []
    for where, raw in _output_text_parts(data):
        part = parse_foreign(ResponseOutputText, raw, f"Responses output_text ({where})")
        offset, text = len(text), text + part.text
        for annotation in part.annotations:
            anchor = _anchor_from_response(text, offset, annotation, book, where)
            if anchor is not None:
                anchors.append(anchor)
    return build_message(text, book.items, anchors=anchors)


def _output_text_parts(data: object) -> list[tuple[str, object]]:
    item = mapping_items(data)
    if item.get("type") == "output_text":
        return [("part", item)]
    if "output" in item:
        return [
            found
            for i, output in enumerate(item["output"] or [])
            if mapping_items(output).get("type") == "message"
            for found in _parts(mapping_items(output).get("content"), f"output[{i}].content")
        ]
    if "content" in item:
        return _parts(item["content"], "content")
    raise InvalidInput("expected an output_text part, a message output item or a response")


def _parts(content: object, where: str) -> list[tuple[str, object]]:
    parts = [mapping_items(part) for part in (content or [])] if isinstance(content, list) else []
    return [(f"{where}[{j}]", p) for j, p in enumerate(parts) if p.get("type") == "output_text"]


def _anchor_from_response(
    text: str, offset: int, annotation: object, book: SourceBook, where: str
) -> Anchor | None:
    if isinstance(annotation, AnnotationURLCitation):
        uri = book.cite(annotation.url, annotation.title)
        start, end = offset + annotation.start_index, offset + annotation.end_index
        return anchor_for(text, uri, start, end, where)
    if isinstance(annotation, AnnotationFileCitation):
        uri = book.cite(OPENAI_FILE_SCHEME + annotation.file_id, annotation.filename)
        position = offset + annotation.index
        return anchor_for(text, uri, position, position, where)
    return None


def from_openai_chat(data: object, *, sources: Sequence[object] | None = None) -> AnswerMessage:
    """Read a Chat Completions assistant message, or a completion (its first choice)."""
    item = mapping_items(data)
    if "choices" in item:
        choices = item["choices"] or []
        if not choices:
            raise InvalidInput("the chat completion has no choices")
        item = mapping_items(mapping_items(choices[0]).get("message"))
    chat = parse_foreign(ChatCompletionMessage, item, "Chat Completions message")
    text = chat.content or ""
    book = SourceBook(sources)
    anchors = []
    for index, annotation in enumerate(chat.annotations or []):
        cited = annotation.url_citation
        uri = book.cite(cited.url, cited.title)
        where = f"annotations[{index}]"
        anchors.append(anchor_for(text, uri, cited.start_index, cited.end_index, where))
    return build_message(text, book.items, anchors=anchors)
