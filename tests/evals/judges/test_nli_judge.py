"""The NLI judge on tiny models the tests build and save themselves (``_tiny_nli.py``): real
``transformers`` loading from a folder, real tokenizing, batching, generation and parsing.

The models are tiny and untrained. The T5's weights are set by hand so that it says "1" exactly
when the word ``marker`` is in its input: so the verdicts of ALCE's TRUE rule can be stated
here. The BERT classifier is random: the judge's scores are checked against a softmax computed
here from the same model's logits.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="the NLI judge needs the extra 'nli'")

import torch
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoModelForSequenceClassification,
    AutoTokenizer,
)

from citelab._errors import ConfigError, InvalidInput, MissingDependency
from citelab.evals import FunctionJudge, NLIJudge, build_judge, judge_names, score_answers
from citelab.evals.judges import TRUE_INPUT, score_deferring

from ._tiny_nli import build_classifier, build_true_t5, tiny_answers

MNLI = {0: "contradiction", 1: "neutral", 2: "entailment"}
PAIRS = [
    ("the cat sat", "the dog marker ran"),
    ("the cat sat", "the cat sat on the mat"),
    ("tuition fees are due in may", "Title: Fees\nTuition fees are due in may. Late fees cost."),
    ("the marker is due", "the library opens at am on weekdays"),
    ("the dog ran", "a cat"),
    ("parking costs a fee", "Title: Parking\nparking costs euros\nTitle: Fees\nthe fee is due"),
]


@pytest.fixture(scope="module")
def true_t5(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_true_t5(tmp_path_factory.mktemp("t5"))


@pytest.fixture(scope="module")
def mnli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_classifier(tmp_path_factory.mktemp("mnli"), MNLI)


@pytest.fixture(scope="module")
def true_judge(true_t5: Path) -> NLIJudge:
    return NLIJudge(str(true_t5))


def _marked(statement: str, evidence: str) -> bool:
    """The tiny T5's rule (see _tiny_nli.py)."""
    return "marker" in f"{statement} {evidence}".split()


class _Recording:
    """The judge's tokenizer, recording the texts it is given."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.texts: list[Any] = []

    def __call__(self, text: Any, *args: Any, **kwargs: Any) -> Any:
        self.texts.append(text)
        return self.tokenizer(text, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tokenizer, name)


@pytest.fixture
def recorded(true_t5: Path) -> tuple[NLIJudge, _Recording]:
    judge = NLIJudge(str(true_t5))
    runtime = judge._loaded()
    recording = _Recording(runtime.tokenizer)
    runtime.tokenizer = recording
    return judge, recording


def _counted(judge: NLIJudge) -> list[int]:
    """The size of every batch the judge's model runs from now on."""
    runtime = judge._loaded()
    sizes: list[int] = []
    run = runtime.run

    def counting(pairs: Sequence[tuple[str, str]]) -> Any:
        sizes.append(len(pairs))
        return run(pairs)

    runtime.run = counting  # type: ignore[method-assign]
    return sizes


# --- ALCE's TRUE setup (a seq2seq model) ---------------------------------------------------


def test_the_judge_is_registered_and_rebuilt_from_its_configuration(true_t5: Path) -> None:
    assert "nli" in judge_names()
    judge = build_judge({"name": "nli", "model": str(true_t5), "batch_size": 4})
    assert isinstance(judge, NLIJudge)
    assert build_judge(judge.config()).config() == judge.config()
    assert judge.config()["batch_size"] == 4


def test_true_verdicts_follow_the_model_output(true_judge: NLIJudge) -> None:
    verdicts = true_judge.supports_many(PAIRS)
    assert verdicts == [_marked(s, e) for s, e in PAIRS]
    assert set(verdicts) == {True, False}


def test_the_input_text_is_exactly_alces_premise_hypothesis(
    recorded: tuple[NLIJudge, _Recording],
) -> None:
    judge, recording = recorded
    statement, evidence = "fees are due", "Title: Fees\nTuition fees are due in may."
    judge.supports(statement, evidence)
    assert recording.texts == [[f"premise: {evidence} hypothesis: {statement}"]]
    assert TRUE_INPUT.format(evidence=evidence, statement=statement) == recording.texts[0][0]


def test_the_score_is_the_probability_of_1_at_the_first_decoding_step(
    true_t5: Path, true_judge: NLIJudge
) -> None:
    tokenizer = AutoTokenizer.from_pretrained(true_t5)
    model = AutoModelForSeq2SeqLM.from_pretrained(true_t5).eval()
    one = tokenizer.convert_tokens_to_ids("1")
    for statement, evidence in PAIRS:
        inputs = tokenizer(f"premise: {evidence} hypothesis: {statement}", return_tensors="pt")
        with torch.no_grad():
            logits = model(**inputs, decoder_input_ids=torch.tensor([[0]])).logits[0, 0]
        expected = torch.softmax(logits, dim=-1)[one].item()
        assert true_judge.score(statement, evidence) == pytest.approx(expected, abs=1e-6)
        assert (expected > 0.5) == _marked(statement, evidence)  # the tiny model's rule


def test_supported_only_when_the_decoded_output_is_exactly_1(
    tmp_path: Path, true_judge: NLIJudge
) -> None:
    # A T5 whose end token never wins repeats its verdict: "1 1 1 1 1 1 1 1 1 1" (ALCE
    # generates at most 10 new tokens), which ALCE's rule does not read as "1".
    folder = build_true_t5(tmp_path / "t5", ends=False)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    statement, evidence = PAIRS[0]
    inputs = tokenizer(f"premise: {evidence} hypothesis: {statement}", return_tensors="pt")
    output = model.generate(**inputs, max_new_tokens=10)
    assert tokenizer.decode(output[0], skip_special_tokens=True) == " ".join(["1"] * 10)
    judge = NLIJudge(str(folder))
    assert not judge.supports(statement, evidence)
    assert judge.score(statement, evidence) == pytest.approx(true_judge.score(statement, evidence))
    # With a threshold the score decides, from one decoding step.
    assert NLIJudge(str(folder), threshold=0.5).supports(statement, evidence)


def test_a_threshold_decides_on_the_score(true_t5: Path, true_judge: NLIJudge) -> None:
    scores = true_judge.score_many(PAIRS)
    for threshold in (0.001, 0.5, 0.9):
        judge = NLIJudge(str(true_t5), threshold=threshold)
        assert judge.supports_many(PAIRS) == [score >= threshold for score in scores]
        assert judge.score_many(PAIRS) == pytest.approx(scores, abs=1e-6)


def test_batches_and_single_calls_agree(true_t5: Path, mnli: Path) -> None:
    for folder in (true_t5, mnli):
        batched = NLIJudge(str(folder), batch_size=4)
        sizes = _counted(batched)
        verdicts, scores = batched.supports_many(PAIRS), batched.score_many(PAIRS)
        assert sizes == [4, 2]  # the scores were remembered with the verdicts
        single = NLIJudge(str(folder), batch_size=1)
        assert [single.supports(s, e) for s, e in PAIRS] == verdicts
        assert [single.score(s, e) for s, e in PAIRS] == pytest.approx(scores, abs=1e-5)


def test_verdicts_are_cached_per_statement_and_evidence(true_t5: Path) -> None:
    judge = NLIJudge(str(true_t5), batch_size=8)
    sizes = _counted(judge)
    first = judge.supports_many([*PAIRS, *PAIRS])
    assert sizes == [len(PAIRS)]  # a repeated pair is asked once
    assert [judge.supports(s, e) for s, e in PAIRS] == first[: len(PAIRS)]
    judge.score(*PAIRS[0])
    assert sizes == [len(PAIRS)]
    assert judge.supports("the cat sat", "the dog marker ran!")  # new evidence: asked
    assert sizes == [len(PAIRS), 1]


def test_a_long_evidence_is_cut_at_its_end_and_the_statement_kept(true_t5: Path) -> None:
    judge = NLIJudge(str(true_t5), max_length=20)
    runtime = judge._loaded()
    recording = _Recording(runtime.tokenizer)
    runtime.tokenizer = recording
    evidence = " ".join(["the cat sat on the mat ."] * 10) + " marker"
    assert not judge.supports("the dog ran", evidence)  # the marker was cut away
    text = recording.texts[-1][0]
    assert text.startswith("premise: the cat sat")
    assert text.endswith(" hypothesis: the dog ran")
    assert len(recording.tokenizer(text).input_ids) <= 20
    assert NLIJudge(str(true_t5)).supports("the dog ran", evidence)  # uncut, as ALCE


# --- sequence classifiers ------------------------------------------------------------------


def _softmax(folder: Path, first: list[str], second: list[str] | None) -> torch.Tensor:
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    rows = []
    for index, text in enumerate(first):
        pair = None if second is None else second[index]
        with torch.no_grad():
            logits = model(**tokenizer(text, pair, return_tensors="pt")).logits[0]
        rows.append(torch.softmax(logits, dim=-1))
    return torch.stack(rows)


def test_a_classifier_scores_the_entailment_label_of_the_text_pair(mnli: Path) -> None:
    expected = _softmax(mnli, [e for _, e in PAIRS], [s for s, _ in PAIRS])
    judge = NLIJudge(str(mnli))
    assert judge.score_many(PAIRS) == pytest.approx(expected[:, 2].tolist(), abs=1e-5)
    assert judge.supports_many(PAIRS) == (expected.argmax(dim=-1) == 2).tolist()
    neutral = NLIJudge(str(mnli), label="neutral", threshold=0.3)
    assert neutral.score_many(PAIRS) == pytest.approx(expected[:, 1].tolist(), abs=1e-5)
    assert neutral.supports_many(PAIRS) == (expected[:, 1] >= 0.3).tolist()


def test_the_entailment_label_is_found_by_name_wherever_it_is(tmp_path: Path) -> None:
    folder = build_classifier(tmp_path, {0: "ENTAILMENT", 1: "NOT_ENTAILMENT"})
    expected = _softmax(folder, [e for _, e in PAIRS], [s for s, _ in PAIRS])
    assert NLIJudge(str(folder)).score_many(PAIRS) == pytest.approx(
        expected[:, 0].tolist(), abs=1e-5
    )


def test_minichecks_input_is_one_text_joined_by_the_end_token(tmp_path: Path) -> None:
    folder = build_classifier(tmp_path, {0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ConfigError, match=r"which class .* means 'supported'.*0: LABEL_0, 1"):
        NLIJudge(str(folder)).supports("a claim", "a passage")
    judge = NLIJudge(str(folder), label=1, input_format="minicheck")
    expected = _softmax(folder, [f"{e}[SEP]{s}" for s, e in PAIRS], None)
    assert judge.score_many(PAIRS) == pytest.approx(expected[:, 1].tolist(), abs=1e-5)
    with pytest.raises(ConfigError, match="label 5 is not a class"):
        NLIJudge(str(folder), label=5).supports("a claim", "a passage")


def test_a_classifier_input_is_cut_to_the_models_positions(mnli: Path) -> None:
    # The tokenizer sets no limit; the model has 64 positions: longer pairs are cut to fit.
    long = " ".join(["the cat sat on the mat ."] * 30)
    judge = NLIJudge(str(mnli))
    assert 0.0 <= judge.score("the cat sat", long) <= 1.0
    assert judge._loaded().max_length == 64


# --- scoring answers: deferred and batched ------------------------------------------------


def test_concurrent_scoring_batches_the_questions_of_many_answers(true_t5: Path) -> None:
    judge = NLIJudge(str(true_t5), batch_size=4)
    sizes = _counted(judge)
    tasks = [lambda s=s, e=e: judge.supports(s, e) for s, e in PAIRS * 2]

    async def all_at_once() -> list[bool]:
        """As the scoring loop runs them: each task deferring, four at a time."""
        slots = asyncio.Semaphore(4)

        async def one(task: Callable[[], bool]) -> bool:
            async with slots:
                return await score_deferring(task)

        try:
            return list(await asyncio.gather(*(one(task) for task in tasks)))
        finally:
            await judge.aclose()

    assert asyncio.run(all_at_once()) == [_marked(s, e) for s, e in PAIRS * 2]
    assert sum(sizes) == len(PAIRS)  # every pair once
    assert max(sizes) <= 4
    assert len(sizes) < len(PAIRS)


def test_alce_files_scored_with_the_true_judge_match_its_rule(true_t5: Path) -> None:
    judge = NLIJudge(str(true_t5), batch_size=4)
    sizes = _counted(judge)
    result = score_answers(tiny_answers(), "alce", judge=judge)
    rule = FunctionJudge(_marked, "tests:marked")
    expected = score_answers(tiny_answers(), "alce", judge=rule)
    assert result.summary()["value"].tolist() == expected.summary()["value"].tolist()
    assert result.to_pandas("statement")["hit"].tolist() == (
        expected.to_pandas("statement")["hit"].tolist()
    )
    assert max(sizes) > 1  # the answers' questions were asked in batches


# --- errors and the machine ------------------------------------------------------------------


def test_a_missing_model_says_nothing_is_downloaded(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r'judge nli needs the folder of its model: \{"name"'):
        build_judge("nli")
    with pytest.raises(ConfigError, match=r"no model at .*never downloads.*local_files_only"):
        NLIJudge(str(tmp_path / "absent"))
    with pytest.raises(ConfigError, match="no model at 'google/t5_xxl_true_nli_mixture'"):
        NLIJudge("google/t5_xxl_true_nli_mixture")
    with pytest.raises(ConfigError, match=r"has no config\.json"):
        NLIJudge(str(tmp_path))


def test_a_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch, true_t5: Path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    with pytest.raises(MissingDependency, match=r"pip install 'citelab\[nli\]'"):
        build_judge({"name": "nli", "model": str(true_t5)})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"batch_size": 0}, "batch_size must be at least 1"),
        ({"threshold": 1.0}, r"threshold must be in \(0, 1\)"),
        ({"dtype": "int8"}, "dtype must be one of float32, bfloat16, float16"),
        ({"max_length": 2}, "max_length must be at least 8"),
        ({"input_format": "xml"}, "input_format must be one of"),
    ],
)
def test_bad_options_are_refused(true_t5: Path, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        NLIJudge(str(true_t5), **options)


def test_an_input_format_of_the_other_kind_is_refused_at_load(true_t5: Path, mnli: Path) -> None:
    with pytest.raises(ConfigError, match="'pair' does not fit a seq2seq model"):
        NLIJudge(str(true_t5), input_format="pair").supports("a", "b")
    with pytest.raises(ConfigError, match="'true' does not fit a classification model"):
        NLIJudge(str(mnli), input_format="true").supports("a", "b")


def test_an_unusable_device_is_a_config_error(true_t5: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ConfigError, match="device 'cuda' is not usable"):
        NLIJudge(str(true_t5), device="cuda").supports("a", "b")


def test_a_folder_that_is_no_model_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "no-such-model"}', encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot load the model at"):
        NLIJudge(str(tmp_path)).supports("a", "b")


def test_statements_and_evidence_must_be_text(true_judge: NLIJudge) -> None:
    with pytest.raises(InvalidInput, match="must be text, got str and NoneType"):
        true_judge.supports("a claim", None)  # type: ignore[arg-type]


def test_loading_and_judging_open_no_connection(
    monkeypatch: pytest.MonkeyPatch, true_t5: Path, mnli: Path
) -> None:
    def refuse(self: socket.socket, address: Any) -> None:
        raise AssertionError(f"the NLI judge opened a connection to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    assert NLIJudge(str(true_t5)).supports_many(PAIRS[:2]) == [True, False]
    NLIJudge(str(mnli)).score_many(PAIRS[:2])
