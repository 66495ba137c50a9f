"""Inspect AI's answers as citelab's: a sample's answer text and the sources it cites, from an
Inspect eval log (``citelab score --format inspect``) or from a running task's state (the
scorers of :mod:`citelab.inspect`).

Where the cited passages come from, first that applies: the sample's ``metadata["docs"]`` in
ALCE's shape (``[{title, text}]``, numbered from 1, the text's own ``[n]`` markers cite them);
else the citations Inspect normalised onto the answer's text parts (``ContentText.citations``):
each distinct cited resource (by URL, else title, else position) is a source numbered in
first-citation order, its passage the text the citations quote (``cited_text``), and a ``[n]``
marker goes at the end of each text part that cites it. A citation that quotes nothing (only
a range) gives its source no passage: it is reported, not judged (see
:mod:`citelab.evals.external`). The documents a model saw are read from ``metadata["docs"]``.

``inspect-ai`` is imported only to read a log file (``pip install 'citelab[inspect]'``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from citelab._errors import InvalidInput, MissingDependency
from citelab.evals.external._formats import ExternalAnswer
from citelab.evals.records import SourceRecord

__all__ = ["InspectLogReader", "inspect_answer", "read_inspect_log"]

_MARKER = re.compile(r"\[\d+\]")


def inspect_answer(
    ident: str,
    question: str,
    content: str | Sequence[Any],
    metadata: Mapping[str, Any] | None,
    where: str,
) -> ExternalAnswer:
    """One answer from an assistant message's ``content`` (a string, or Inspect's content
    parts, as objects or dicts) and the sample's ``metadata``; see the module docs."""
    docs = (metadata or {}).get("docs")
    parts = [_plain(part) for part in content] if not isinstance(content, str) else []
    raw = content if isinstance(content, str) else "".join(_texts(parts))
    if docs is not None:
        return ExternalAnswer(ident, question, raw, _doc_sources(docs, where), raw_text=raw)
    text, sources = _cited(parts)
    return ExternalAnswer(ident, question, text, sources, raw_text=raw)


def read_inspect_log(path: str | Path) -> list[ExternalAnswer]:
    """The answers of an Inspect eval log (``.eval`` or ``.json``), one per sample and epoch."""
    read_eval_log = _inspect_log_module().read_eval_log
    try:
        log = read_eval_log(str(path), resolve_attachments=True)
    except Exception as exc:  # Inspect raises several kinds for a file that is not a log
        raise InvalidInput(f"{path}: not an Inspect eval log: {exc}") from exc
    return _log_answers(log, str(path))


class InspectLogReader:
    """The ``inspect`` answer format: an Inspect eval log, read by Inspect itself from its
    file (``read_path``: ``.eval`` logs are zip archives), or its JSON already loaded."""

    description = (
        "An Inspect AI eval log (.eval or .json): each sample's answer, cited by its "
        "metadata docs (ALCE's shape) or by Inspect's citations (pip install 'citelab[inspect]')."
    )

    def __call__(self, data: Any, where: str) -> list[ExternalAnswer]:
        module = _inspect_log_module()
        try:
            log = module.EvalLog.model_validate(data)
        except ValueError as exc:
            raise InvalidInput(f"{where}: not an Inspect eval log: {exc}") from exc
        return _log_answers(log, where)

    def read_path(self, path: Path) -> list[ExternalAnswer]:
        return read_inspect_log(path)


def _inspect_log_module() -> Any:
    try:
        import inspect_ai.log
    except ImportError as exc:
        raise MissingDependency("inspect_ai", "Reading Inspect logs", extra="inspect") from exc
    return inspect_ai.log


def _log_answers(log: Any, where: str) -> list[ExternalAnswer]:
    answers = []
    for sample in log.samples or []:
        place = f"{where}: sample {sample.id} epoch {sample.epoch}"
        message = sample.output.message if sample.output.choices else None
        content: Any = message.content if message is not None else sample.output.completion
        ident = str(sample.id) if sample.epoch == 1 else f"{sample.id}#{sample.epoch}"
        question = _question(sample.input)
        answers.append(inspect_answer(ident, question, content, sample.metadata, place))
    if not answers:
        raise InvalidInput(f"{where}: the log has no samples (was it written with samples?)")
    return answers


def _question(given: Any) -> str:
    if isinstance(given, str):
        return given
    texts = [m.text for m in given if getattr(m, "role", None) == "user"]
    return texts[-1] if texts else ""


def _plain(part: Any) -> dict[str, Any]:
    dump = getattr(part, "model_dump", None)
    plain = dump(mode="json") if callable(dump) else part
    return plain if isinstance(plain, dict) else {}


def _texts(parts: Iterable[Mapping[str, Any]]) -> Iterable[str]:
    for part in parts:
        if part.get("type") == "text":
            yield str(part.get("text") or "")


def _doc_sources(docs: Any, where: str) -> list[SourceRecord]:
    if not isinstance(docs, list):
        raise InvalidInput(f"{where}: metadata.docs must be a list of {{title, text}}")
    sources = []
    for number, doc in enumerate(docs, start=1):
        if not isinstance(doc, Mapping) or not isinstance(doc.get("text", doc.get("sent")), str):
            raise InvalidInput(f"{where}: metadata.docs.{number - 1}: needs a 'text'")
        passage = doc.get("sent") if isinstance(doc.get("sent"), str) else doc["text"]
        title = str(doc.get("title") or "")
        uri = str(doc.get("url") or doc.get("id") or f"alce:doc/{number}")
        sources.append(SourceRecord(number=number, uri=uri, title=title, content=passage))
    return sources


def _cited(parts: Sequence[Mapping[str, Any]]) -> tuple[str, list[SourceRecord]]:
    """The text with a marker after each cited part, and the cited sources in order."""
    numbers: dict[str, int] = {}
    titles: dict[str, str] = {}
    quotes: dict[str, list[str]] = {}
    pieces = []
    for part in parts:
        if part.get("type") != "text":
            continue
        text = str(part.get("text") or "")
        cited: list[int] = []
        for citation in part.get("citations") or []:
            key = str(citation.get("url") or citation.get("title") or f"citation:{len(numbers)}")
            number = numbers.setdefault(key, len(numbers) + 1)
            titles.setdefault(key, str(citation.get("title") or key))
            quoted = citation.get("cited_text")
            if isinstance(quoted, str) and quoted.strip():
                found = quotes.setdefault(key, [])
                if quoted not in found:
                    found.append(quoted)
            if number not in cited:
                cited.append(number)
        stripped = text.rstrip()
        markers = "".join(f"[{n}]" for n in sorted(cited))
        pieces.append(stripped + markers + text[len(stripped) :] if markers else text)
    sources = [
        SourceRecord(
            number=number,
            uri=key if "://" in key else f"inspect:source/{number}",
            title=titles[key],
            content="\n".join(quotes.get(key, [])),
        )
        for key, number in numbers.items()
    ]
    return "".join(pieces), sources
