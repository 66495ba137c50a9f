"""citelab's scorers in a real Inspect AI task on Inspect's own mock model (offline), and the
task's log scored by ``citelab score --format inspect``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ContentText,
    DocumentCitation,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.solver import generate

from citelab.cli import main
from citelab.inspect import citation_precision, citation_recall

DOCS = [
    {"title": "Ferry timetable", "text": "The ferry leaves at 9 am from pier 3 every day."},
    {"title": "Harbour cafe", "text": "The harbour cafe opens at noon and serves soup."},
]


@pytest.fixture(autouse=True)
def _inspect_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # Inspect writes under it


def _output(content: str | list[ContentText]) -> ModelOutput:
    message = ChatMessageAssistant(content=content, model="mockllm/model")
    output = ModelOutput(
        model="mockllm/model", choices=[ChatCompletionChoice(message=message, stop_reason="stop")]
    )
    # An explicit usage, or Inspect looks for a tokenizer on the network.
    output.usage = ModelUsage(input_tokens=20, output_tokens=10, total_tokens=30)
    return output


def _run(samples: list[Sample], outputs: list[ModelOutput], log_dir: Path) -> Any:
    task = Task(
        dataset=samples, solver=generate(), scorer=[citation_recall(), citation_precision()]
    )
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = inspect_eval(task, model=model, log_dir=str(log_dir), display="none", max_samples=1)
    assert log.status == "success", log.error
    return log


def _means(log: Any) -> dict[str, float]:
    return {s.name: s.metrics["mean"].value for s in log.results.scores}


def test_a_task_with_alce_docs_is_scored_with_the_judge_named(tmp_path: Path) -> None:
    samples = [
        Sample(id="right", input="When does the ferry leave?", metadata={"docs": DOCS}),
        Sample(id="wrong", input="When does the ferry go?", metadata={"docs": DOCS}),
    ]
    outputs = [
        _output("The ferry leaves at 9 am from pier 3 [1]."),
        _output("The ferry leaves at 9 am from pier 3 [2]."),
    ]
    log = _run(samples, outputs, tmp_path / "logs")
    assert _means(log) == {"citation_recall": 0.5, "citation_precision": 0.5}
    score = log.samples[0].scores["citation_recall"]
    assert score.value == 1.0
    assert score.metadata["judge"]["name"] == "lexical_trained"
    assert score.metadata["judge_card"] == "shipped"
    assert 0 < score.metadata["judge_kappa"] <= 1
    assert "κ" in score.explanation


def test_inspects_own_citations_give_the_passages(tmp_path: Path) -> None:
    cited = DocumentCitation(cited_text=DOCS[0]["text"], title="Ferry timetable")
    part = ContentText(text="The ferry leaves at 9 am from pier 3.", citations=[cited])
    uncited = ContentText(text=" The cafe sells boats.")
    log = _run(
        [Sample(id="vendor", input="When does the ferry leave?")],
        [_output([part, uncited])],
        tmp_path / "logs",
    )
    recall = log.samples[0].scores["citation_recall"]
    assert recall.answer == "The ferry leaves at 9 am from pier 3.[1] The cafe sells boats."
    assert recall.value == 0.5  # one statement supported, one uncited
    assert log.samples[0].scores["citation_precision"].value == 1.0


def test_a_sample_with_nothing_to_score_is_nan_not_zero(tmp_path: Path) -> None:
    log = _run([Sample(id="empty", input="Hello?")], [_output("")], tmp_path / "logs")
    assert math.isnan(log.samples[0].scores["citation_recall"].value)


def test_citelab_score_reads_the_tasks_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = [
        Sample(id="right", input="When does the ferry leave?", metadata={"docs": DOCS}),
        Sample(id="wrong", input="When does the ferry go?", metadata={"docs": DOCS}),
    ]
    outputs = [
        _output("The ferry leaves at 9 am from pier 3 [1]."),
        _output("The ferry leaves at 9 am from pier 3 [2]."),
    ]
    log = _run(samples, outputs, tmp_path / "logs")
    location = Path(log.location)
    assert location.suffix == ".eval"  # Inspect's zipped log, as it writes by default
    assert main(["score", str(location), "--format", "inspect", "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)["metrics"]
    assert metrics["citation_recall"]["value"] == 0.5
    assert metrics["citation_recall"]["answers"] == 2
    assert main(["score", str(tmp_path / "nothing.eval"), "--format", "inspect"]) == 2
    assert "not an Inspect eval log" in capsys.readouterr().err
