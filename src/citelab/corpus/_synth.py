"""Large synthetic corpora for benchmarks: deterministic, vocabulary-based, fast.

Words are invented from syllables (one inventory per language, so the languages share no
vocabulary) and drawn from a Zipf-like distribution, which gives BM25 a realistic spread of
common and rare terms. With the default parameters every paragraph is one chunk at the default
``max_chars`` of 800 (paragraphs are 400 to 790 code points long, so two never share a chunk),
and the number of chunks is the number of paragraphs. The same ``seed`` and ``entities`` give
the same bytes (for a given numpy version).

Random numbers are drawn from numpy in large blocks and consumed one by one from Python lists:
per-call numpy overhead would otherwise dominate the generation of a million paragraphs.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from citelab._errors import InvalidInput

__all__ = ["SynthParams", "synth_documents", "write_synthetic_corpus"]

_SYLLABLES = {
    "en": "ba ler ton mi sa ker dro fel wa nis por tha gle ven hum cor pit sel dan",
    "de": "schu berg hal ding ke mat rin zel wo gen stu fa lich ter bau kop mun sig",
    "fr": "beau ri lon che mou tan vi gre lu sou pla nu cel dre fou mer oin pau",
}
_CATEGORIES = [f"category-{n:02d}" for n in range(24)]
_ROLES = ["staff", "hr", "finance", "research"]
_BLOCK = 1 << 18


@dataclass(frozen=True)
class SynthParams:
    """Shape of a synthetic corpus."""

    vocabulary: int = 20_000
    """Distinct words per language."""
    paragraphs: tuple[int, int] = (2, 8)
    """Paragraphs per translation, inclusive range."""
    paragraph_chars: tuple[int, int] = (480, 790)
    """Length budget of a paragraph in code points, inclusive range."""
    sentence_words: tuple[int, int] = (6, 15)
    """Words per sentence, inclusive range."""
    other_languages: float = 0.25
    """Probability that an entity also has a ``de`` (and, independently, a ``fr``) version."""
    restricted: float = 0.1
    """Share of entities readable only by one role or one user."""

    def __post_init__(self) -> None:
        problems = []
        if not 10 <= self.vocabulary <= 100_000:
            problems.append(f"vocabulary must be between 10 and 100000, got {self.vocabulary}")
        for name in ("paragraphs", "paragraph_chars", "sentence_words"):
            low, high = getattr(self, name)
            if not 1 <= low <= high:
                problems.append(f"{name} must be a range 1 <= low <= high, got {(low, high)}")
        for name in ("other_languages", "restricted"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name} must be a probability in [0, 1]")
        if problems:
            raise InvalidInput("SynthParams: " + "; ".join(problems))


class _Uniforms:
    """Uniform floats in [0, 1) drawn from numpy in blocks, handed out one at a time."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._block: list[float] = []
        self._next = 0

    def random(self) -> float:
        if self._next == len(self._block):
            self._block = self._rng.random(_BLOCK).tolist()
            self._next = 0
        value = self._block[self._next]
        self._next += 1
        return value

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""
        return low + int(self.random() * (high - low + 1))


class _WordStream:
    """An endless Zipf-distributed stream of one language's invented words."""

    def __init__(self, langcode: str, params: SynthParams, rng: np.random.Generator) -> None:
        self._rng = rng
        self._sentence_words = params.sentence_words
        words = _invent_words(_SYLLABLES[langcode], params.vocabulary, rng)
        self._size = len(words)
        # Three spellings of every word: plain, sentence start, sentence end.
        self._words = words + [w.capitalize() for w in words] + [w + "." for w in words]
        # A word costs its letters plus a space, plus one more if it ends a sentence.
        self._cost = np.array([len(w) + 2 for w in words])
        size = self._size
        weights = 1.0 / np.arange(1, size + 1) ** 1.05
        self._cdf = np.cumsum(weights / weights.sum())
        self._pool: tuple[str, ...] = ()
        self._ends: list[int] = []
        self._position = 0

    def take(self, budget: int) -> list[str]:
        """The next words whose total cost fits ``budget`` (at least one word)."""
        spent = self._ends[self._position - 1] if self._position else 0
        end = bisect_right(self._ends, spent + budget)
        if end >= len(self._ends):
            self._refill()
            return self.take(budget)
        end = max(end, self._position + 1)
        words = list(self._pool[self._position : end])
        self._position = end
        return words

    def _refill(self) -> None:
        ids = np.searchsorted(self._cdf, self._rng.random(_BLOCK), side="right")
        ids = np.minimum(ids, self._size - 1)
        low, high = self._sentence_words
        sentence_ends = np.cumsum(self._rng.integers(low, high + 1, _BLOCK // low + 1)) - 1
        sentence_ends = sentence_ends[sentence_ends < _BLOCK - 1]
        spelling = np.zeros(_BLOCK, dtype=np.int64)
        spelling[0] = 1
        spelling[sentence_ends + 1] = 1
        spelling[sentence_ends] = 2
        self._pool = itemgetter(*(ids + spelling * self._size).tolist())(self._words)
        self._ends = np.cumsum(self._cost[ids]).tolist()
        self._position = 0


def _invent_words(inventory: str, size: int, rng: np.random.Generator) -> list[str]:
    syllables = inventory.split()
    words: dict[str, None] = {}
    while len(words) < size:
        counts = rng.integers(2, 5, size)
        picks = rng.integers(0, len(syllables), (size, 4)).tolist()
        for count, row in zip(counts.tolist(), picks, strict=True):
            words.setdefault("".join(syllables[i] for i in row[:count]))
    return list(words)[:size]


class _Writer:
    """Builds documents from the random streams."""

    def __init__(self, seed: int, params: SynthParams) -> None:
        rng = np.random.default_rng(seed)
        self.params = params
        self.uniform = _Uniforms(rng)
        self.streams = {lang: _WordStream(lang, params, rng) for lang in _SYLLABLES}

    def document(self, number: int) -> dict[str, Any]:
        share = self.params.other_languages
        languages = ["en"] + [lang for lang in ("de", "fr") if self.uniform.random() < share]
        entity_id = str(number + 1)
        document: dict[str, Any] = {
            "entity_type": "page",
            "entity_id": entity_id,
            "translations": {lang: self.translation(entity_id, lang) for lang in languages},
            "fields": {
                "category": _CATEGORIES[self.uniform.integer(0, len(_CATEGORIES) - 1)],
                "year": self.uniform.integer(2000, 2024),
            },
        }
        if self.uniform.random() < self.params.restricted:
            document["access"] = self.restriction()
        return document

    def translation(self, entity_id: str, langcode: str) -> dict[str, str]:
        count = self.uniform.integer(*self.params.paragraphs)
        paragraphs = [
            self.paragraph(langcode, self.uniform.integer(*self.params.paragraph_chars))
            for _ in range(count)
        ]
        title = self.paragraph(langcode, self.uniform.integer(12, 30)).rstrip(".")
        return {
            "title": title,
            "content": "\n\n".join(paragraphs),
            "url": f"/{langcode}/page/{entity_id}",
        }

    def paragraph(self, langcode: str, budget: int) -> str:
        # The stream carries sentence breaks; a paragraph only mends its own two edges.
        words = self.streams[langcode].take(budget)
        words[0] = words[0].capitalize()
        if not words[-1].endswith("."):
            words[-1] += "."
        return " ".join(words)

    def restriction(self) -> dict[str, Any]:
        if self.uniform.random() < 0.5:
            return {"public": False, "roles": [_ROLES[self.uniform.integer(0, len(_ROLES) - 1)]]}
        return {"public": False, "users": [f"user{self.uniform.integer(1, 99)}"]}


def synth_documents(
    entities: int, seed: int = 0, params: SynthParams | None = None
) -> Iterator[dict[str, Any]]:
    """``entities`` documents as JSON-ready dicts (the JSONL corpus format)."""
    if entities < 0:
        raise InvalidInput(f"entities must not be negative, got {entities}")
    writer = _Writer(seed, params or SynthParams())
    for number in range(entities):
        yield writer.document(number)


def write_synthetic_corpus(
    out: TextIO | str | Path, entities: int, seed: int = 0, params: SynthParams | None = None
) -> int:
    """Write a synthetic JSONL corpus; returns the number of paragraphs (chunks) written."""
    if isinstance(out, str | Path):
        with Path(out).open("w", encoding="utf-8") as handle:
            return write_synthetic_corpus(handle, entities, seed, params)
    paragraphs = 0
    for document in synth_documents(entities, seed, params):
        paragraphs += sum(t["content"].count("\n\n") + 1 for t in document["translations"].values())
        out.write(json.dumps(document, ensure_ascii=False) + "\n")
    return paragraphs
