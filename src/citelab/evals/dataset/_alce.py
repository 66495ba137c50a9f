"""ALCE's benchmark as its files are: eval files (ASQA, QAMPARI, ELI5) and prompt files, and
the exact prompt ALCE's ``run.py`` builds from them.

An eval file is a JSON list of items (``question``, ``answer`` and whatever else the dataset
has, ``docs`` with ``title``/``text``); a prompt file holds ``instruction``, ``demo_sep``,
``demo_prompt``, ``doc_prompt`` and ``demos``. :func:`alce_prompts` draws the demonstrations
as ``run.py`` does (NumPy's legacy generator seeded with ``seed``, ``shot`` demos without
replacement, then the ``quick_test`` items from the same stream), formats every item's first
``ndoc`` documents with ``doc_prompt`` numbered from 1, and fills the templates with ALCE's
order of substitutions, so the prompts are ALCE's character for character. Items keep every
field of the file, so a result file written from them is read by ALCE's ``eval.py``.
:func:`alce_documents` makes an item's shown documents a corpus of their own (one entity
each, numbered from 1 as the prompt numbers them), which citelab's pipeline searches for that
item alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citelab._errors import InvalidInput
from citelab.corpus import Document, Translation

__all__ = [
    "ALCE_SYSTEM_MESSAGE",
    "AlceItem",
    "AlcePromptFile",
    "AlcePromptSettings",
    "alce_chat_messages",
    "alce_clean_output",
    "alce_document_uri",
    "alce_documents",
    "alce_prompts",
    "load_alce_eval",
    "load_alce_prompt_file",
]

ALCE_SYSTEM_MESSAGE = (
    "You are a helpful assistant that answers the following questions with proper citations."
)
"""The system message ``run.py`` puts before the prompt for chat models."""

Shorter = Literal["summary", "extraction"]
_M = TypeVar("_M", bound=BaseModel)


class AlceDocument(BaseModel):
    """One retrieved document; other fields (``summary``, ``extraction``, ``id``…) are kept."""

    model_config = ConfigDict(extra="allow")

    title: str
    text: str


class AlceDemo(BaseModel):
    """One demonstration of a prompt file; a list ``answer`` is shown one line each."""

    model_config = ConfigDict(extra="allow")

    question: str
    answer: str | list[str]
    docs: list[AlceDocument] = []


class AlcePromptFile(BaseModel):
    """An ALCE prompt file (``prompts/*.json``)."""

    model_config = ConfigDict(extra="allow")

    instruction: str
    """Fills ``{INST}`` in every demo and in the test item."""
    demo_sep: str
    """Written after every demonstration."""
    demo_prompt: str
    """The template of a demo and of the test item: ``{INST}``, ``{Q}``, ``{D}``, ``{A}``."""
    doc_prompt: str
    """The template of one document: ``{ID}`` (from 1), ``{T}`` (title), ``{P}`` (text)."""
    demos: list[AlceDemo] = []


class AlceItem(BaseModel):
    """One item of an ALCE eval file; every field of the file is kept (``qa_pairs``,
    ``claims``, ``answers``…), as ALCE's ``eval.py`` reads them."""

    model_config = ConfigDict(extra="allow")

    question: str
    docs: list[AlceDocument] = []


class AlcePromptSettings(BaseModel):
    """``run.py``'s prompt options: ``--shot``, ``--ndoc``, ``--seed``, ``--no_doc_in_demo``,
    ``--fewer_doc_in_demo`` with ``--ndoc_in_demo``, ``--use_shorter``, ``--quick_test``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    shot: int = Field(ge=0)
    """Demonstrations drawn from the prompt file."""
    ndoc: int = Field(ge=0)
    """Documents of each item shown (the first ``ndoc``)."""
    seed: int = 42
    """Seeds NumPy's generator as ``run.py``'s ``np.random.seed`` does."""
    no_doc_in_demo: bool = False
    """Demonstrations without documents."""
    ndoc_in_demo: int | None = Field(default=None, ge=0)
    """``--fewer_doc_in_demo``: this many documents in each demonstration."""
    use_shorter: Shorter | None = None
    """Show each document's ``summary`` or ``extraction`` instead of its text, skipping the
    ones marked irrelevant."""
    quick_test: int | None = Field(default=None, ge=1)
    """Only this many eval items, drawn after the demos from the same generator."""

    @property
    def demo_ndoc(self) -> int:
        if self.no_doc_in_demo:
            return 0
        return self.ndoc_in_demo if self.ndoc_in_demo is not None else self.ndoc


def load_alce_prompt_file(path: str | Path) -> AlcePromptFile:
    """An ALCE prompt file, checked (a bad one names the file and the field)."""
    return _validated(AlcePromptFile, _read_json(Path(path)), str(path))


def load_alce_eval(path: str | Path) -> list[AlceItem]:
    """The items of an ALCE eval file (a JSON list; a result file's ``{"data": [...]}`` too)."""
    data = _read_json(Path(path))
    if isinstance(data, Mapping) and isinstance(data.get("data"), list):
        data = data["data"]
    if not isinstance(data, list) or not data:
        raise InvalidInput(f"{path}: an ALCE eval file is a non-empty JSON list of items")
    return [_validated(AlceItem, item, f"{path}: item {i}") for i, item in enumerate(data)]


def alce_prompts(
    prompt_file: AlcePromptFile,
    items: Sequence[AlceItem],
    settings: AlcePromptSettings,
) -> list[tuple[int, AlceItem, str]]:
    """Each item's ``(index in the eval file, item with its shown docs, prompt)``, as
    ``run.py`` builds them (see the module docs)."""
    generator = np.random.RandomState(settings.seed)
    head = _head(prompt_file, settings, generator)
    indices = list(range(len(items)))
    if settings.quick_test is not None:
        drawn = generator.choice(len(items), settings.quick_test, replace=False)
        indices = [int(i) for i in drawn]
    out = []
    for index in indices:
        item = items[index]
        shown = _shown_docs(item.docs, settings.ndoc, settings.use_shorter)
        test = _block(
            prompt_file,
            item.question,
            item.docs,
            answer=None,
            ndoc=settings.ndoc,
            settings=settings,
        )
        prompt = head + test
        out.append((index, item.model_copy(update={"docs": shown}), prompt))
    return out


def alce_chat_messages(prompt: str) -> list[dict[str, str]]:
    """``run.py``'s conversion of a text prompt for a chat model."""
    return [
        {"role": "system", "content": ALCE_SYSTEM_MESSAGE},
        {"role": "user", "content": prompt},
    ]


def alce_clean_output(text: str) -> str:
    """What ``run.py`` keeps of a generation: no ``<|im_end|>``, no trailing space, no
    closing ``End.``."""
    text = text.replace("<|im_end|>", "").rstrip()
    return text.removesuffix("End.")


def alce_document_uri(dataset: str, index: int, number: int) -> str:
    """The entity URI of document ``number`` (from 1) of item ``index`` of ``dataset``."""
    return f"entity:{dataset}/q{index}.{number}"


def alce_documents(dataset: str, index: int, docs: Sequence[AlceDocument]) -> list[Document]:
    """An item's documents as corpus entities (see :func:`alce_document_uri`): the title
    (``Document [n]`` when it has none) and the text, in ALCE's order."""
    return [
        Document(
            entity_type=dataset,
            entity_id=f"q{index}.{number}",
            translations={
                "en": Translation(
                    title=doc.title.strip() or f"Document [{number}]", content=doc.text
                )
            },
        )
        for number, doc in enumerate(docs, start=1)
    ]


# --- the prompt ------------------------------------------------------------------------------


def _head(
    prompt_file: AlcePromptFile, settings: AlcePromptSettings, generator: np.random.RandomState
) -> str:
    if settings.shot > len(prompt_file.demos):
        raise InvalidInput(
            f"shot {settings.shot}: the prompt file has only {len(prompt_file.demos)} demos"
        )
    drawn = generator.choice(len(prompt_file.demos), settings.shot, replace=False)
    parts = []
    for demo_id in drawn:
        demo = prompt_file.demos[int(demo_id)]
        parts.append(
            _block(
                prompt_file,
                demo.question,
                demo.docs,
                answer=demo.answer,
                ndoc=settings.demo_ndoc,
                settings=settings,
            )
        )
        parts.append(prompt_file.demo_sep)
    return "".join(parts)


def _block(
    prompt_file: AlcePromptFile,
    question: str,
    docs: Sequence[AlceDocument],
    *,
    answer: str | list[str] | None,
    ndoc: int,
    settings: AlcePromptSettings,
) -> str:
    """One demo (``answer`` given) or the test item; ALCE's substitutions in ALCE's order
    (so a ``{Q}`` in the instruction, or an ``{A}`` in a document, is replaced as ALCE does)."""
    text = prompt_file.demo_prompt.replace("{INST}", prompt_file.instruction)
    text = text.replace("{Q}", question)
    if "{D}" in text:
        if ndoc == 0:
            text = text.replace("{D}\n", "")
        else:
            shown = _shown_docs(docs, ndoc, settings.use_shorter)
            listed = "".join(
                _document(doc, n, prompt_file.doc_prompt, settings.use_shorter)
                for n, doc in enumerate(shown, start=1)
            )
            text = text.replace("{D}", listed)
    text = text.replace("{A}", "").rstrip()
    if answer is None:
        return text
    return text + ("\n" + "\n".join(answer) if isinstance(answer, list) else answer)


def _document(doc: AlceDocument, number: int, doc_prompt: str, use_shorter: Shorter | None) -> str:
    passage = doc.text if use_shorter is None else str(_field(doc, use_shorter))
    return doc_prompt.replace("{T}", doc.title).replace("{P}", passage).replace("{ID}", str(number))


def _shown_docs(
    docs: Sequence[AlceDocument], ndoc: int, use_shorter: Shorter | None
) -> list[AlceDocument]:
    """The documents shown: the first ``ndoc``, or with ``use_shorter`` the first ``ndoc``
    whose summary/extraction is not marked irrelevant (the list stops at the first document
    without one; if that is the first, it is shown with its text)."""
    if use_shorter is None:
        return list(docs[:ndoc])
    shown: list[AlceDocument] = []
    for doc in docs:
        value = _field(doc, use_shorter)
        if value is None:
            if not shown:
                shown.append(doc.model_copy(update={use_shorter: doc.text}))
            break
        if "irrelevant" in value or "Irrelevant" in value:
            continue
        shown.append(doc)
        if len(shown) >= ndoc:
            break
    return shown


def _field(doc: AlceDocument, name: str) -> str | None:
    value = (doc.model_extra or {}).get(name)
    return None if value is None else str(value)


# --- files -----------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read it: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not JSON: {exc}") from exc


def _validated(model: type[_M], data: Any, where: str) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        location = ".".join(str(part) for part in error["loc"]) or "(the whole)"
        raise InvalidInput(f"{where}: field {location}: {error['msg']}") from exc
