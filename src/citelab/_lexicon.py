"""Lexical matching for the offline extractive model and the corpus agent's starter
questions: words, stems, stopwords and sentences.

Deliberately simple and deterministic: lower-cased, accent-folded word tokens, a light suffix
stripper (plurals, ``-ing``, ``-ed``, ``-ly``…) applied alike to questions and sources, and a
short stopword list for English with the commonest French, German and Spanish function words.
It is not a linguistic stemmer; it only has to make "programmes" meet "programme".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "Term",
    "content_runs",
    "content_terms",
    "is_question_wording",
    "related_stems",
    "related_words",
    "sentences",
    "stem",
    "stems_of",
]

_TOKEN = re.compile(r"\w+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?![a-z])|\n+")

# English, then the commonest French, German and Spanish function words (accent-folded).
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could did do does doing done down during
    each either else ever every few for from further get gets got had has have having he her
    here hers him his how i if in into is isn it its itself just let like may me might more
    most much must my need needs no nor not now of off on once one only or other our ours out
    over own please same shall she should so some such tell than that the their theirs them
    then there these they this those through to too under until up upon us use used using very
    want was we were what whats when where whether which while who whom whose why will with
    within without would yes yet you your yours know give show explain describe find exist
    exists there
    le la les un une des du de et ou est sont pour par sur dans avec pas que qui quoi comment
    je tu il elle nous vous ils au aux ce cette ces mon ma mes
    der die das ein eine einen dem den des und oder ist sind fur mit von zu im in auf wie was
    wer wo ich du er sie es wir ihr nicht kann konnen mein meine meinen meinem meiner
    el los las una unos unas del y o es son para por con en que como donde cual yo tu
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_SUFFIXES: tuple[tuple[str, str, int], ...] = (
    # (suffix, replacement, minimum stem length left)
    ("ational", "ate", 3),
    ("ization", "ize", 3),
    ("fulness", "ful", 3),
    ("iveness", "ive", 3),
    ("ations", "ate", 3),
    ("ation", "ate", 3),
    ("ments", "", 4),
    ("ment", "", 4),
    ("ness", "", 4),
    ("ings", "", 3),
    ("ing", "", 3),
    ("ies", "y", 2),
    ("ied", "y", 2),
    ("sses", "ss", 2),
    ("edly", "", 3),
    ("ed", "", 3),
    ("ly", "", 4),
    ("es", "e", 3),
    ("s", "", 3),
    ("e", "", 3),
)


@dataclass(frozen=True)
class Term:
    """A content word of a question: its stem and the first surface form it had."""

    stem: str
    word: str


@lru_cache(maxsize=1 << 16)
def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=1 << 16)  # a corpus repeats its words: evaluations stem them once
def stem(word: str) -> str:
    """The light stem of one folded word (suffixes stripped until none applies)."""
    for _ in range(3):  # "requirements" -> "require" -> "requir", as "required" does
        shorter = _strip_suffix(word)
        if shorter == word:
            break
        word = shorter
    return word


def _strip_suffix(word: str) -> str:
    if word.isdigit() or len(word) <= 3:
        return word
    for suffix, replacement, keep in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return word[: len(word) - len(suffix)] + replacement
    return word


def _content_words(text: str) -> list[str]:
    return [w for w in (_fold(t) for t in _TOKEN.findall(text)) if w not in _STOPWORDS]


# Content words that say how a question is asked, not what it is about ("exactly how long
# does it take"), and function words the stopword list lacks (German "zum"): a source need
# not hold them to answer it.
_QUESTION_WORDING_TEXT = """
    exactly exact actually currently usually typically generally normally roughly approximately
    precisely specifically possible possibly take takes taking happen happens work works
    mean means say says said happen anyone someone something anything thing things way ways
    zum zur beim vom ins ans aus einer einem eines
"""
_QUESTION_WORDING = frozenset(stem(_fold(w)) for w in _QUESTION_WORDING_TEXT.split())


def is_question_wording(stem_: str) -> bool:
    """Whether a question term's stem says how the question is asked, not what about."""
    return stem_ in _QUESTION_WORDING


def stems_of(text: str) -> set[str]:
    """The stems of every content word of ``text``."""
    return {stem(word) for word in _content_words(text)}


def content_terms(question: str) -> list[Term]:
    """The question's content words, one per stem, in order of first appearance."""
    seen: dict[str, Term] = {}
    for token in _TOKEN.findall(question):
        folded = _fold(token)
        if folded in _STOPWORDS or (len(folded) < 2 and not folded.isdigit()):
            continue
        seen.setdefault(stem(folded), Term(stem(folded), token))
    return list(seen.values())


def content_runs(question: str) -> list[list[Term]]:
    """The question's runs of adjacent content words (a stopword, a one-letter word or a
    punctuation mark ends a run): "harbour museum open" in "When is the harbour museum
    open?"."""
    runs: list[list[Term]] = [[]]
    for match in re.finditer(r"\w+|[^\w\s]", question):
        token = match.group()
        folded = _fold(token)
        if (
            not token[0].isalnum()
            or folded in _STOPWORDS
            or (len(folded) < 2 and not folded.isdigit())
        ):
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append(Term(stem(folded), token))
    return [run for run in runs if run]


def sentences(text: str) -> list[str]:
    """The sentences of a source text (a line break also ends one); list bullets and Markdown
    heading marks are taken off, blank pieces are dropped."""
    parts = (part.strip().lstrip("-*•# ").strip() for part in _SENTENCE_END.split(text))
    return [part for part in parts if len(part) > 2]


# Words that ask for the same thing as another word a source is likely to use ("what does it
# cost?" is answered by "the fee is…"). Kept short on purpose: a question word outside these
# groups matches only itself.
_RELATED_GROUPS = (
    "cost costs price prices fee fees pay pays paid charge charges tuition expensive",
    "deadline deadlines close closes due",
    "long duration semesters years",
)


def _related_table() -> dict[str, dict[str, str]]:
    """stem → {related stem: a surface word of it}."""
    table: dict[str, dict[str, str]] = {}
    for group in _RELATED_GROUPS:
        words: dict[str, str] = {}
        for word in group.split():
            words.setdefault(stem(_fold(word)), word)
        for one in words:
            table[one] = {other: word for other, word in words.items() if other != one}
    return table


_RELATED = _related_table()


def related_stems(stem_: str) -> frozenset[str]:
    """Stems that answer for ``stem_`` (``cost`` → ``fee``, ``price``, ``pay``…), or none."""
    return frozenset(_RELATED.get(stem_, ()))


def related_words(stem_: str) -> list[str]:
    """One surface word per related stem, in the group's order (for search queries)."""
    return list(_RELATED.get(stem_, {}).values())
