import pytest

from citelab import ConfigError
from citelab.evals import (
    DEFAULT_JUDGE,
    LexicalJudge,
    TrainedLexicalJudge,
    build_judge,
    judge_names,
)
from citelab.evals.judges import content_terms


def test_content_terms_fold_case_drop_function_words_and_markers() -> None:
    assert content_terms("The Fees are due in May [1][2].") == {"fees", "due", "may"}
    assert content_terms("Die Gebühren sind im Mai fällig.") == {"gebühren", "mai", "fällig"}
    assert content_terms("[3]") == frozenset()


def test_lexical_support_is_content_word_recall_above_the_threshold() -> None:
    judge = LexicalJudge(threshold=0.75)
    evidence = "Title: Fees\nTuition fees are due in May."
    assert judge.overlap("Fees are due in May.", evidence) == 1.0
    assert judge.supports("Fees are due in May.", evidence)
    # 3 of 4 content words ("fees", "due", "may" but not "june") is exactly the threshold.
    assert judge.overlap("Fees are due in May or June.", evidence) == 0.75
    assert judge.supports("Fees are due in May or June.", evidence)
    assert not judge.supports("Parking permits are due in May.", evidence)


def test_numbers_are_words_so_a_different_number_is_not_supported() -> None:
    judge = LexicalJudge(threshold=1.0)
    assert judge.supports("The programme has 120 credits.", "The programme has 120 credits.")
    assert not judge.supports("The programme has 180 credits.", "The programme has 120 credits.")


def test_a_statement_without_content_words_is_never_supported() -> None:
    assert not LexicalJudge().supports("It is.", "It is what it is.")


def test_judges_are_rebuilt_from_their_configuration() -> None:
    judge = LexicalJudge(threshold=0.6)
    rebuilt = build_judge(judge.config())
    assert isinstance(rebuilt, LexicalJudge)
    assert rebuilt.threshold == 0.6
    assert build_judge("lexical").config() == {"name": "lexical", "threshold": 0.75}
    assert build_judge(judge) is judge
    assert judge_names() == ["lexical", "lexical_trained", "llm", "nli"]


def test_the_default_judge_is_the_trained_one_and_lexical_pairs_is_gone() -> None:
    assert DEFAULT_JUDGE == "lexical_trained"
    assert isinstance(build_judge(DEFAULT_JUDGE), TrainedLexicalJudge)
    # Retired (#25): tuned on citelab's own set, it almost never said yes on real text.
    with pytest.raises(ConfigError) as caught:
        build_judge("lexical_pairs")
    assert str(caught.value) == (
        "unknown judge 'lexical_pairs'; known judges: lexical, lexical_trained, llm, nli "
        "(or name one as module:attr)"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("entailment", "unknown judge 'entailment'"),
        ({"name": "lexical", "threshold": 2}, "threshold must be in"),
        ({"name": "lexical", "cutoff": 1}, r"judge 'lexical': bad options \['cutoff'\]"),
        ({"name": "llm", "model": "m", "prompt": "no placeholders"}, "must contain {statement}"),
    ],
)
def test_bad_judge_configuration_is_a_clear_error(spec: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_judge(spec)  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", ["llm", {"name": "llm"}, {"name": "llm", "model": ""}])
def test_the_llm_judge_without_a_model_says_how_to_give_one(spec: object) -> None:
    with pytest.raises(ConfigError) as caught:
        build_judge(spec)  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith("judge llm needs a model")
    assert """--judge '{"name": "llm", "model": "gpt-4o-mini"}'""" in message
    assert '"base_url": "http://127.0.0.1:8000/v1"' in message
    assert 'judge = {name = "llm", model = "gpt-4o-mini"}' in message  # a suite's form
    assert "missing 1 required positional argument" not in message
