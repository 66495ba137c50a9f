"""Tokenization for BM25: lowercase Unicode words minus a small stopword list per language.

Text is NFKC-normalized first, so that composed and decomposed accents (and compatibility
forms such as ligatures) give the same terms.

The stopword lists are the ones shipped inside ``bm25s`` (no download). A chunk is tokenized
with its own language's list; a query restricted to one language uses that list, and an
unrestricted query drops the words that are stopwords in *any* known language, because such a
word carries no meaning in the language it is a stopword of and little across languages.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import cached_property

from bm25s import stopwords as _bm25s_stopwords

__all__ = ["TOKENIZER_VERSION", "Tokenizer"]

#: Bump whenever tokenization changes: persisted indexes built by older rules are rebuilt.
TOKENIZER_VERSION = 1

_WORD = re.compile(r"\w+")

_LISTS: dict[str, tuple[str, ...]] = {
    "en": _bm25s_stopwords.STOPWORDS_EN,
    "de": _bm25s_stopwords.STOPWORDS_GERMAN,
    "fr": _bm25s_stopwords.STOPWORDS_FRENCH,
    "nl": _bm25s_stopwords.STOPWORDS_DUTCH,
    "es": _bm25s_stopwords.STOPWORDS_SPANISH,
    "it": _bm25s_stopwords.STOPWORDS_ITALIAN,
    "pt": _bm25s_stopwords.STOPWORDS_PORTUGUESE,
    "sv": _bm25s_stopwords.STOPWORDS_SWEDISH,
    "da": _bm25s_stopwords.STOPWORDS_DANISH,
    "nb": _bm25s_stopwords.STOPWORDS_NORWEGIAN,
}


class Tokenizer:
    """Turns text into BM25 terms; one instance serves every language."""

    def __init__(self) -> None:
        self._stopwords = {lang: frozenset(words) for lang, words in _LISTS.items()}
        self._any_language = frozenset().union(*self._stopwords.values())

    def stopwords(self, langcode: str | None) -> frozenset[str]:
        """The stopwords of ``langcode`` (its base language for e.g. ``de-CH``); every
        language's when ``langcode`` is None; none for a language without a list."""
        if langcode is None:
            return self._any_language
        return self._stopwords.get(langcode.lower().split("-")[0], frozenset())

    def terms(self, text: str, langcode: str | None) -> list[str]:
        """The BM25 terms of ``text`` in order, repetitions kept."""
        stop = self.stopwords(langcode)
        words = _WORD.findall(unicodedata.normalize("NFKC", text).lower())
        return [word for word in words if word not in stop]

    @cached_property
    def signature(self) -> str:
        """Changes whenever tokenization would: stored with a persisted index."""
        digest = hashlib.sha256(f"v{TOKENIZER_VERSION}:NFKC:{_WORD.pattern}".encode())
        for lang in sorted(self._stopwords):
            digest.update(f"\n{lang}:".encode() + " ".join(sorted(self._stopwords[lang])).encode())
        return digest.hexdigest()[:16]
