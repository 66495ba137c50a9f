"""The text normaliser: words, accent folding, stopwords, a light stemmer and sentences.

The one home of citelab's lexical reading of text. The offline extractive model and the
corpus agent use its main form (below); the lexical judges, the trained support judge and the
supporting-span finder use the named variants at the end, whose small differences their
verdicts depend on (the trained judge's shipped parameters were fitted to its features). The
ALCE-compatible scorers split sentences with NLTK's punkt instead (``evals/scorers/_punkt``),
as ALCE's ``eval.py`` does.

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
    "JUDGE_FUNCTION_WORDS",
    "SENTENCE_END",
    "SPAN_FUNCTION_WORDS",
    "SUPPORT_FUNCTION_WORDS",
    "WORD",
    "Term",
    "content_runs",
    "content_terms",
    "fold",
    "is_question_wording",
    "related_stems",
    "related_words",
    "sentences",
    "stem",
    "stem_once",
    "stems_of",
]

WORD = re.compile(r"\w+", re.UNICODE)
"""A word: a run of ``\\w`` characters."""
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?![a-z])|\n+")
"""Where a sentence of a source ends: ``.``, ``!`` or ``?`` then white space and no
lower-case letter, or a line break."""
_TOKEN = WORD

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
def fold(word: str) -> str:
    """``word`` case-folded and without accents (NFKD, combining marks dropped)."""
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
    shorter = _stripped(word, _SUFFIXES)
    if word.endswith(("ss", "us", "is")) and shorter == word[:-1]:
        return word  # only "s" applied: "class", "campus", "analysis" are not plurals
    return shorter


def _stripped(word: str, suffixes: tuple[tuple[str, str, int], ...]) -> str:
    """``word`` with the first suffix that applies replaced (one pass)."""
    for suffix, replacement, keep in suffixes:
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            return word[: len(word) - len(suffix)] + replacement
    return word


def _content_words(text: str) -> list[str]:
    return [w for w in (fold(t) for t in _TOKEN.findall(text)) if w not in _STOPWORDS]


# Content words that say how a question is asked, not what it is about ("exactly how long
# does it take"), and function words the stopword list lacks (German "zum"): a source need
# not hold them to answer it.
_QUESTION_WORDING_TEXT = """
    exactly exact actually currently usually typically generally normally roughly approximately
    precisely specifically possible possibly take takes taking happen happens work works
    mean means say says said happen anyone someone something anything thing things way ways
    zum zur beim vom ins ans aus einer einem eines
"""
_QUESTION_WORDING = frozenset(stem(fold(w)) for w in _QUESTION_WORDING_TEXT.split())


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
        folded = fold(token)
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
        folded = fold(token)
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
    parts = (part.strip().lstrip("-*•# ").strip() for part in SENTENCE_END.split(text))
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
            words.setdefault(stem(fold(word)), word)
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


# Variants. Each reads text a little differently from the main form above; the components
# named below depend on exactly these readings, so they are kept as they are.

_JUDGE_FUNCTION_TEXT = """
    a an and are as at be been but by can could did do does for from had has have how i if
    in into is it its might must of on or our shall should so such than that the their them
    then there these they this those to too was we were what when where which while who whom
    why will with would you your yes also only very just about any all each more most der
    die das den dem des ein eine einer eines einem einen und oder ist sind war wird werden
    im in am an auf aus bei mit nach von vor zu zum zur für über unter auch als wie es sie
    er wir ihr ich du man kann können muss müssen soll le la les un une des du de et ou est
    sont été être au aux en dans par pour sur avec sans que qui quoi ce cet cette ces il
    elle ils elles nous vous on se sa son ses leur leurs y
"""
JUDGE_FUNCTION_WORDS = frozenset(_JUDGE_FUNCTION_TEXT.split())
"""Function words of en/de/fr the lexical judge drops (kept short on purpose: a content word
wrongly listed would make the judge more lenient; negations are not listed, "fees are not due"
must not be supported by "fees are due")."""

SUPPORT_FUNCTION_WORDS = (JUDGE_FUNCTION_WORDS - {"sans"}) | frozenset(
    ["he", "she", "his", "her", "him", "after", "before", "during", "since", "over", "up", "out"]
)
"""The trained support judge's function words (its features, and so its shipped parameters,
depend on them): the lexical judge's, with pronouns and a few prepositions, without "sans"."""

_SPAN_FUNCTION_TEXT = """
    a an and are as at be by for from has have in is it its of on or that the their this to
    was were will with which who what when where how not no can may must all any der die das
    und ist ein eine le la les et est un une des du de el los las y es
"""
SPAN_FUNCTION_WORDS = frozenset(_SPAN_FUNCTION_TEXT.split())
"""The short function words the supporting-span finder leaves out (a subset of the main
stopwords)."""

_JUDGE_SUFFIXES = tuple(
    entry for entry in _SUFFIXES if entry[0] not in ("fulness", "iveness", "edly")
)


def stem_once(word: str) -> str:
    """The trained support judge's stem of a folded word: one suffix of the main table
    (without ``-fulness``, ``-iveness``, ``-edly``) stripped once, with no length or plural
    guard."""
    return _stripped(word, _JUDGE_SUFFIXES)
