"""citelab's punkt (memoized break decisions and word facts) splits exactly as NLTK's own
``PunktSentenceTokenizer`` with the same English parameters, on any text."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from punkt.data import english

from citelab.evals import sent_tokenize
from citelab.evals._punkt import _build, punkt_spans


def _plain_nltk() -> Any:
    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    for word, flags in english.ORTHO_CONTEXT.items():
        params.ortho_context[word] = flags
    return PunktSentenceTokenizer(params)


PLAIN = _plain_nltk()

TRICKY = [
    "He paid $3.50 at 5 p.m. on Jan. 4. Then he left...",
    "Dr. Smith met Mr. J. R. R. Tolkien in the U.S. [1]. It rained [2].",
    "(Sent1.) Sent2.",
    "Wait... what?! \"Yes.\" 'No.' [1][2]. a lower start. 1. item",
    "e.g. this. i.e. that [3]. Ok",
    "Medina is a city.[1] It is in Saudi Arabia [2].",
    "Islam was founded in 632 A.D. [1][2]. Brizan wrote about it [2].",
    "Numbers 1.5, 2. and 3.. Done. 1990. Next",
    "",
    "   ",
    "No full stop at all [1]",
]

# Words punkt treats specially: abbreviations, initials, numbers, ellipses, quotes, markers.
_PIECES = [
    *[
        "Dr.",
        "Mr.",
        "U.S.",
        "e.g.",
        "i.e.",
        "vs.",
        "St.",
        "Jan.",
        "no.",
        "A.",
        "b.",
        "3.5",
        "1990.",
        "12",
        "...",
        "..",
        "the",
        "Cat",
        "it's",
    ],
    *["[1]", "[2].", "[1][3].", "(x)", '"q"', "'r.'", "?", "!", "?!", "--", ".", ",", ";"],
    *["\n", "\n\n", "Über", "naïve", "É.", "x.y.z."],
]


@pytest.mark.parametrize("text", TRICKY)
def test_split_equals_nltk_on_tricky_texts(text: str) -> None:
    assert punkt_spans(text) == list(PLAIN.span_tokenize(text))
    assert sent_tokenize(text) == PLAIN.sentences_from_text(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30), st.sampled_from([" ", "", "  "]))
def test_split_equals_nltk_on_generated_texts(pieces: list[str], glue: str) -> None:
    text = glue.join(pieces)
    # Twice: the second split answers from the memo (contexts and words seen before).
    for _ in range(2):
        assert list(_build().span_tokenize(text)) == list(PLAIN.span_tokenize(text))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_split_equals_nltk_on_any_text(text: str) -> None:
    assert list(_build().span_tokenize(text)) == list(PLAIN.span_tokenize(text))


def test_break_decisions_are_memoized_per_context() -> None:
    tokenizer = _build()
    text = "A claim about cats [1]. Another claim about dogs [2]."
    punkt_spans(text)
    before = tokenizer.text_contains_sentbreak.cache_info()
    # A new text with the same context ("[1]. Another"): decided from the memo.
    list(tokenizer.span_tokenize("Other words entirely [1]. Another claim [2]."))
    after = tokenizer.text_contains_sentbreak.cache_info()
    assert after.hits > before.hits
