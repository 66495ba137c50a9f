"""Human support labels in ALCE's human-evaluation citation format, as labelled pairs.

ALCE (Gao et al. 2023) published its annotators' citation judgements as one JSON object
(``human_eval/human_eval_citations_completed.json`` in its repository)::

    {"<dataset>": {"<model's result file>": {
        "<question id>": {"id": ..., "question": ..., "output": ...,
            "sentences": [{"text": "<sentence with its [n] markers>",
                           "citations": [{"title": ..., "text": ...,
                                          "citation_precision_score": 0 | 1 | 2}, ...],
                           "sentence_recall_score": 0 | 1,
                           "sentence_precision_score": 0 | 1}, ...],
            "automatic_recall_scores": [...], ...},
        "overall_results": {...}}}}

Each sentence gives one *recall* pair: the sentence (its markers removed, as ALCE removes
them before judging) against all its cited passages together, labelled by
``sentence_recall_score`` (1: the passages fully support it). Each citation gives one
*citation* pair: the sentence against that one passage, graded by the annotator's rating:
``2`` supported ("the document fully supports all claims in the sentence"), ``1``
partially supported, ``0`` not supported (the labels reader maps partial support to "not
fully supported" unless told otherwise). A passage reads ``Title: <title>`` and its text on
the next line, as ALCE shows passages to its judge. Sentences without citations give no pair
(there is no evidence to judge). The categories ``alce_recall`` and ``alce_citation`` keep
the two kinds apart (``--by-category``). Every other field (automatic scores, overall
results) is ignored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from citelab._errors import InvalidInput
from citelab._validation import validation_problems
from citelab.contract import strip_plain_markers

__all__ = ["is_alce_human_eval", "load_alce_human_eval"]

_GRADES = {2: "supported", 1: "partially_supported", 0: "not_supported"}
_SKIPPED = "overall_results"


class _Citation(BaseModel):
    model_config = ConfigDict(extra="ignore")

    title: str = ""
    text: str
    citation_precision_score: float

    @field_validator("citation_precision_score")
    @classmethod
    def _rating(cls, value: float) -> float:
        if value not in (0, 1, 2):
            raise ValueError(f"must be 0, 1 or 2 (none, partial, full support), got {value:g}")
        return value


class _Sentence(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str
    citations: list[_Citation]
    sentence_recall_score: float

    @field_validator("sentence_recall_score")
    @classmethod
    def _binary(cls, value: float) -> float:
        if value not in (0, 1):
            raise ValueError(f"must be 0 or 1 (not supported, supported), got {value:g}")
        return value


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    sentences: list[_Sentence]


def is_alce_human_eval(path: Path) -> bool:
    """True when ``path`` is one JSON object (ALCE's format) rather than JSON Lines."""
    if path.suffix.casefold() == ".jsonl":
        return False
    try:
        with path.open(encoding="utf-8") as stream:
            head = stream.read(4096)
    except OSError:
        return False
    if path.suffix.casefold() == ".json":
        return True
    # One object spread over lines: its first line is not a whole JSON value.
    first = head.lstrip().split("\n", 1)[0]
    return first.startswith("{") and not _whole_json(first)


def _whole_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def load_alce_human_eval(path: Path) -> list[dict[str, Any]]:
    """The labelled pairs of an ALCE human-eval citation file, as :class:`LabelledPair` data
    with a ``grade`` (supported, partially_supported, not_supported) in place of the label;
    :class:`InvalidInput` naming the file, the record and the field of every problem."""
    data = _read(path)
    pairs: list[dict[str, Any]] = []
    problems: list[str] = []
    for dataset, models in _objects(data, path.name, "", problems):
        for model, items in _objects(models, path.name, dataset, problems):
            for key, raw in _objects(items, path.name, f"{dataset} › {model}", problems):
                if key == _SKIPPED:
                    continue
                record = f"{dataset} › {model} › {key}"
                try:
                    item = _Item.model_validate(raw)
                except ValidationError as exc:
                    where = f"{path.name}: record {record}"
                    problems.extend(validation_problems(exc, where, label="field "))
                    continue
                pairs.extend(_pairs(item, f"{dataset}/{model}/{key}"))
    if problems:
        raise InvalidInput(
            f"ALCE human-eval labels {path} have {len(problems)} problem(s):\n"
            + "\n".join(problems)
        )
    if not pairs:
        raise InvalidInput(f"ALCE human-eval labels {path}: no cited sentence to make a pair of")
    return pairs


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read labels {path}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{path.name}:{exc.lineno}: invalid JSON ({exc.msg} at column {exc.colno}); ALCE's "
            "human-eval format is one JSON object: dataset → model → question id → record"
        ) from exc


def _objects(value: Any, filename: str, within: str, problems: list[str]) -> list[tuple[str, Any]]:
    """The entries of one level of the nesting (dataset, model, question id)."""
    if isinstance(value, dict):
        return list(value.items())
    where = f"record {within}" if within else "the top level"
    problems.append(
        f"{filename}: {where}: expected an object (dataset → model → question id → record), "
        f"got {type(value).__name__}"
    )
    return []


def _pairs(item: _Item, ident: str) -> list[dict[str, Any]]:
    pairs: list[dict[str, Any]] = []
    for index, sentence in enumerate(item.sentences):
        if not sentence.citations:
            continue
        claim = strip_plain_markers(sentence.text).strip()
        passages = [_passage(citation) for citation in sentence.citations]
        pairs.append(
            {
                "id": f"{ident}/s{index}",
                "claim": claim,
                "evidence": passages,
                "grade": "supported" if sentence.sentence_recall_score == 1 else "not_supported",
                "category": "alce_recall",
            }
        )
        for number, (citation, passage) in enumerate(
            zip(sentence.citations, passages, strict=True)
        ):
            pairs.append(
                {
                    "id": f"{ident}/s{index}/c{number}",
                    "claim": claim,
                    "evidence": [passage],
                    "grade": _GRADES[int(citation.citation_precision_score)],
                    "category": "alce_citation",
                }
            )
    return pairs


def _passage(citation: _Citation) -> str:
    return f"Title: {citation.title}\n{citation.text}"
