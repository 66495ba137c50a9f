"""The part of a passage a claim rests on: the sentence(s) sharing the most content words.

A source's passage is a whole chunk (hundreds of characters); a claim usually rests on one
sentence of it. :func:`supporting_span` finds that sentence, deterministically and offline:

1. the passage is cut into sentences (a ``.``, ``!`` or ``?`` followed by white space and no
   lower-case letter, or a line break, ends one), each with its offsets in the passage;
2. words are compared folded (case, accents) with a trailing plural ``s`` taken off, and
   short function words left out;
3. the best sentence shares the most distinct claim words (ties: the larger share of its own
   words, then the earlier sentence); a neighbouring sentence is added while it brings claim
   words the span does not hold yet, so a claim drawn from two adjacent sentences gets both.

Without any shared word the whole passage is the span (nothing tells its parts apart).
Offsets are code points, end exclusive, with the sentence's surrounding white space left out.
"""

from __future__ import annotations

from functools import lru_cache

from citelab._lexicon import SENTENCE_END, SPAN_FUNCTION_WORDS, WORD, fold

__all__ = ["supporting_span"]


def supporting_span(claim: str, passage: str) -> tuple[int, int]:
    """``(start, end)`` of the sentence(s) of ``passage`` that ``claim`` rests on (see the
    module docs); ``(0, len(passage))`` when no sentence shares a word with it."""
    wanted = _words(claim)
    sentences = _sentences(passage)
    if not wanted or not sentences:
        return 0, len(passage)
    held = [_words(passage[start:end]) & wanted for start, end in sentences]
    best = max(range(len(sentences)), key=lambda i: _rank(i, held, sentences, passage))
    if not held[best]:
        return 0, len(passage)
    first, last = _widened(best, held)
    return sentences[first][0], sentences[last][1]


def _rank(
    index: int, held: list[set[str]], sentences: list[tuple[int, int]], passage: str
) -> tuple[int, float, int]:
    start, end = sentences[index]
    own = len(_words(passage[start:end])) or 1
    return len(held[index]), len(held[index]) / own, -index


def _widened(best: int, held: list[set[str]]) -> tuple[int, int]:
    """The best sentence with each neighbour that adds claim words, in turn."""
    first = last = best
    covered = set(held[best])
    while True:
        before = held[first - 1] - covered if first > 0 else set()
        after = held[last + 1] - covered if last + 1 < len(held) else set()
        if not before and not after:
            return first, last
        if len(after) >= len(before):
            last += 1
            covered |= after
        else:
            first -= 1
            covered |= before


def _sentences(passage: str) -> list[tuple[int, int]]:
    """Each sentence's span, white space around it left out; empty pieces dropped."""
    spans = []
    start = 0
    for end in [*(match.start() for match in SENTENCE_END.finditer(passage)), len(passage)]:
        piece = passage[start:end]
        stripped = piece.strip()
        if stripped:
            left = start + len(piece) - len(piece.lstrip())
            spans.append((left, left + len(stripped)))
        following = SENTENCE_END.match(passage, end)
        start = following.end() if following else end
    return spans


def _words(text: str) -> set[str]:
    return {_normal(word) for word in WORD.findall(text)} - SPAN_FUNCTION_WORDS - {""}


@lru_cache(maxsize=1 << 14)
def _normal(word: str) -> str:
    plain = fold(word)
    if len(plain) > 3 and plain.endswith("s") and not plain.endswith("ss"):
        plain = plain[:-1]
    return plain if plain not in SPAN_FUNCTION_WORDS else ""
