"""The lexical judge's passage-by-passage path (what the citation scorers use) gives the
verdict ``supports`` gives on the joined passages; a subclass's own ``supports`` is kept."""

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from citelab.evals import LexicalJudge, score_answers
from citelab.evals.judges import content_terms
from citelab.evals.judges._judges import _MARKER, _STOPWORDS, _WORD

_WORDS = st.sampled_from(["fees", "due", "May", "120", "credits", "not", "the", "[1]", "É", "ﬁ"])
_TEXT = st.lists(_WORDS, max_size=8).map(" ".join)
_PASSAGE = st.lists(_TEXT, min_size=1, max_size=3).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(_TEXT, st.lists(_PASSAGE, max_size=4), st.sampled_from([0.5, 0.75, 1.0]))
def test_passages_verdict_equals_the_joined_verdict(
    claim: str, passages: list[str], threshold: float
) -> None:
    judge = LexicalJudge(threshold)
    assert judge.supports_passages(claim, passages) == judge.supports(claim, "\n".join(passages))


def test_examples_of_the_passages_path() -> None:
    judge = LexicalJudge(threshold=1.0)
    passages = ["Title: Fees\nTuition fees are due", "Title: Dates\nin May."]
    assert judge.supports_passages("Fees are due in May.", passages)  # words from both
    assert not judge.supports_passages("Fees are due in May.", passages[:1])
    assert not judge.supports_passages("Fees are due in May.", [])
    assert not judge.supports_passages("It is.", passages)  # no content words


class _Strict(LexicalJudge):
    """A subclass with its own rule: supported only when the evidence says "verified"."""

    def supports(self, statement: str, evidence: str) -> bool:
        return "verified" in evidence and super().supports(statement, evidence)


def test_a_subclass_that_overrides_supports_is_asked_through_it() -> None:
    judge = _Strict(threshold=0.5)
    assert not judge.supports_passages("Fees are due.", ["Title: A\nFees are due."])
    assert judge.supports_passages("Fees are due.", ["Title: A\nFees are due.", "verified"])
    data = {
        "data": [
            {
                "question": "When are fees due?",
                "docs": [{"title": "A", "text": "Fees are due in May."}],
                "output": "Fees are due in May [1].",
            }
        ]
    }
    scored = score_answers(data, "alce", judge=judge).summary()
    assert scored.set_index("metric").loc["citation_recall_alce", "value"] == 0.0
    plain = score_answers(data, "alce", judge=LexicalJudge(threshold=0.5)).summary()
    assert plain.set_index("metric").loc["citation_recall_alce", "value"] == 1.0


def _reference_terms(text: str) -> frozenset[str]:
    """The judge's words as first defined: markers out, NFKC, case-folded, stop words out."""
    normal = unicodedata.normalize("NFKC", _MARKER.sub(" ", text)).casefold()
    return frozenset(_WORD.findall(normal)).difference(_STOPWORDS, ("_",))


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab [1],2]ﬁÉe\u0301ＡK\n_"), max_size=40)
    | st.text(alphabet=st.characters(max_codepoint=127))  # the ASCII shortcut
    | st.text()
)
def test_content_terms_shortcuts_change_nothing(text: str) -> None:
    assert content_terms(text) == _reference_terms(text)
