"""A local LLM judge with MiniCheck's prompt, as the README's recipe runs it: ``citelab
serve-model --model judge`` (the offline stand-in for Ollama or vLLM) started as a command,
asked over real HTTP by the real ``openai`` SDK, from the API and from ``citelab score``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

import pytest

from citelab import ModelError
from citelab._errors import ConfigError
from citelab.cli import main
from citelab.evals import LexicalJudge, LLMJudge, build_judge
from citelab.evals.judges import (
    MINICHECK_PROMPT,
    MINICHECK_SYSTEM,
    JudgeModel,
    read_judge_prompt,
)
from citelab.models import Message, ModelDelta, ToolChoice, ToolSpec, serve_in_thread

PAIRS = [
    ("Tuition fees are due in May.", "Title: Fees\nTuition fees are due in May. Late fees."),
    ("Tuition fees are due in June.", "Title: Fees\nTuition fees are due in May."),
    ("The library opens at 8 am.", "Title: Library\nThe library opens at 8 am on weekdays."),
    ("Parking is free.", "Title: Parking\nParking permits cost 30 euros.\nClaim: not this one"),
]


@pytest.fixture(scope="module")
def served_command() -> Iterator[str]:
    """``citelab serve-model --model judge`` as a user starts it; its base URL."""
    command = [sys.executable, "-m", "citelab", "serve-model", "--model", "judge", "--port", "0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert "serving model 'judge' at http://127.0.0.1:" in line, line
            yield line.split(" at ")[1].strip()
        finally:
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=20) == 0


def test_the_minicheck_prompt_is_judged_by_the_served_model(served_command: str) -> None:
    judge = build_judge(
        {"name": "llm", "model": "judge", "base_url": served_command, "prompt": "minicheck"}
    )
    assert isinstance(judge, LLMJudge)
    assert judge.config()["prompt"] == "minicheck"
    # The served judge model reads the prompt back and asks the lexical judge.
    expected = [LexicalJudge().supports(s, e) for s, e in PAIRS]
    assert judge.supports_many(PAIRS) == expected
    assert set(expected) == {True, False}
    assert build_judge(judge.config()).supports_many(PAIRS) == expected


class _Recording:
    """The judge model, keeping every message list it is asked."""

    def __init__(self) -> None:
        self.name = "judge"
        self.inner = JudgeModel()
        self.asked: list[list[Message]] = []

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        self.asked.append(list(messages))
        async for delta in self.inner.stream(messages):
            yield delta


def test_the_request_is_an_instruction_then_document_and_claim() -> None:
    model = _Recording()
    statement, evidence = PAIRS[3]
    with serve_in_thread(model) as server:
        LLMJudge("judge", base_url=server.base_url, prompt="minicheck").supports(
            statement, evidence
        )
    [messages] = model.asked
    assert [(m["role"], m["content"]) for m in messages] == [  # type: ignore[index]
        ("system", MINICHECK_SYSTEM),
        ("user", f"Document: {evidence}\nClaim: {statement}"),
    ]
    assert MINICHECK_PROMPT.format(evidence=evidence, statement=statement) == (
        f"Document: {evidence}\nClaim: {statement}"
    )


def test_the_minicheck_layout_is_read_back_claim_last() -> None:
    statement, evidence = PAIRS[3]  # the evidence itself has a "Claim:" line
    prompt = MINICHECK_PROMPT.format(evidence=evidence, statement=statement)
    assert read_judge_prompt(prompt) == (statement, evidence)
    with pytest.raises(ModelError, match="neither 'Evidence:' and 'Statement:' sections nor"):
        read_judge_prompt("Is this supported?")


def test_a_prompt_is_a_template_or_a_known_name() -> None:
    with pytest.raises(ConfigError, match=r"\{evidence\}, or name one of minicheck"):
        LLMJudge("judge", prompt="mini-check")


def test_citelab_score_with_the_recipes_judge_spec(
    served_command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = [
        {"title": "Fees", "text": "Tuition fees are due in May. Late fees cost 50 euros."},
        {"title": "Library", "text": "The library opens at 8 am on weekdays."},
    ]
    outputs = [
        "Tuition fees are due in May [1]. The library opens at 9 am [2].",
        "Late fees cost 50 euros [1][2]. The library opens at 8 am [2].",
    ]
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps({"data": [{"question": "Q?", "docs": docs, "output": o} for o in outputs]}),
        encoding="utf-8",
    )
    spec = {"name": "llm", "model": "judge", "base_url": served_command, "prompt": "minicheck"}
    command = ["score", str(answers), "--format", "alce", "--json", "--judge"]
    assert main([*command, json.dumps(spec)]) == 0
    with_llm = json.loads(capsys.readouterr().out)
    assert main([*command, "lexical"]) == 0
    with_lexical = json.loads(capsys.readouterr().out)
    # the served model judges as lexical does; each judge is named as itself
    assert with_llm["metrics"] == with_lexical["metrics"]
    assert "citation_recall_alce" in with_llm["metrics"]
    assert [judge["judge"] for judge in with_llm["judges"]] != [
        judge["judge"] for judge in with_lexical["judges"]
    ]


README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_readme_recipe_runs_against_the_stand_in_server(
    served_command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's local-judge command, with the stand-in's address and model name put in
    place of Ollama's (every other key as written)."""
    text = README.read_text(encoding="utf-8")
    specs = [
        json.loads(line.split("--judge '", 1)[1].rstrip().rstrip("'"))
        for line in text.splitlines()
        if "--judge '" in line and '"prompt": "minicheck"' in line
    ]
    assert len(specs) == 1, "the README shows one MiniCheck-prompt judge"
    spec = specs[0]
    assert spec["name"] == "llm"
    assert spec["base_url"].startswith("http://127.0.0.1:")
    spec |= {"base_url": served_command, "model": "judge"}
    answers = tmp_path / "run.json"
    docs = [{"title": "Fees", "text": "Tuition fees are due in May."}]
    answers.write_text(
        json.dumps(
            {"data": [{"question": "Q?", "docs": docs, "output": "Fees are due in May [1]."}]}
        ),
        encoding="utf-8",
    )
    assert main(["score", str(answers), "--format", "alce", "--judge", json.dumps(spec)]) == 0
    assert "citation_recall" in capsys.readouterr().out
