"""ALCE's generation with a citelab model over real HTTP (serve-model's app, the openai SDK):
ALCE's messages and decoding on the wire, ALCE's result file, resume, and citelab score."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.evals.dataset.test_alce_prompt import ITEMS, PROMPT

from citelab import ConfigError, ModelError
from citelab.cli import main
from citelab.evals.dataset import (
    ALCE_SYSTEM_MESSAGE,
    AlcePromptSettings,
    alce_prompts,
    load_alce_eval,
    load_alce_prompt_file,
)
from citelab.evals.runner import AlceDecoding, run_alce
from citelab.models import FinishDelta, Message, ModelDelta, TextDelta, build_app, message_text
from citelab.models.serve._server import serve_app_in_thread


class _AlceLike:
    """Answers the last question of an ALCE prompt citing [1], on two lines; fails on the
    questions in ``failing``."""

    name = "alce-like"

    def __init__(self) -> None:
        self.seen: list[list[Message]] = []
        self.failing: set[str] = set()

    async def stream(
        self, messages: Sequence[Message], tools: Any = None, **_: Any
    ) -> AsyncIterator[ModelDelta]:
        self.seen.append(list(messages))
        question = message_text(messages[-1]).rsplit("Question: ", 1)[-1].split("\n", 1)[0]
        if question in self.failing:
            raise ModelError(f"refusing {question}")
        yield TextDelta(text=f" It is {question} [1].\nA second line [2]. End.")
        yield FinishDelta(reason="stop")


class _Recorder:
    """An ASGI app that keeps every request body on its way to the wrapped app."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.bodies: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        self.bodies.append(json.loads(body))

        given = False

        async def replay() -> Any:
            nonlocal given
            if given:  # later calls wait for the disconnect, as the server's own do
                return await receive()
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


@pytest.fixture
def served() -> Any:
    model = _AlceLike()
    recorder = _Recorder(build_app(model))
    with serve_app_in_thread(recorder) as server:
        yield model, recorder, server.base_url


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    prompt = tmp_path / "asqa_default.json"
    prompt.write_text(json.dumps(PROMPT), encoding="utf-8")
    data = tmp_path / "asqa_eval_gtr_top100.json"
    data.write_text(json.dumps(ITEMS[1:]), encoding="utf-8")
    return prompt, data


SETTINGS = AlcePromptSettings(shot=2, ndoc=3, seed=7)


def _run(files: tuple[Path, Path], base_url: str, out: Path, **options: Any) -> Path:
    decoding = options.pop("decoding", None)
    return run_alce(
        files[0],
        files[1],
        options.pop("spec", "openai:alce-like"),
        SETTINGS,
        decoding,
        model_options={"base_url": base_url, "api_key": "none", "max_retries": 0, "timeout": 10},
        out_dir=out,
        progress=False,
        **options,
    )


def test_chat_run_sends_alces_messages_and_decoding_and_writes_its_result_file(
    files: tuple[Path, Path], served: Any, tmp_path: Path
) -> None:
    model, recorder, base_url = served
    path = _run(files, base_url, tmp_path / "result", concurrency=3)
    assert path.name == "asqa-alce-like-citelab-shot2-ndoc3-7.json"
    expected = alce_prompts(load_alce_prompt_file(files[0]), load_alce_eval(files[1]), SETTINGS)
    sent = {message_text(m[1]): m for m in model.seen}
    assert set(sent) == {prompt for _, _, prompt in expected}
    assert all(m[0] == {"role": "system", "content": ALCE_SYSTEM_MESSAGE} for m in model.seen)
    assert len(recorder.bodies) == len(ITEMS) - 1
    for body in recorder.bodies:
        assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.5, 1.0, 300)
        assert "stop" not in body
    result = json.loads(path.read_text(encoding="utf-8"))
    assert result["args"]["shot"] == 2
    assert result["args"]["seed"] == 7
    first = result["data"][0]
    assert first["qa_pairs"] == ITEMS[1]["qa_pairs"]
    assert first["prompt"] == expected[0][2]
    assert first["output"] == " It is Question 1? [1].\nA second line [2]. "
    assert [len(item["docs"]) for item in result["data"]] == [1, 2, 3, 3, 3, 3]
    assert not path.with_suffix(".partial.jsonl").exists()


def test_completion_mode_stops_at_the_newline_without_system_message(
    files: tuple[Path, Path], served: Any, tmp_path: Path
) -> None:
    model, recorder, base_url = served
    decoding = AlceDecoding(temperature=0.0, top_p=0.9, max_new_tokens=50, chat=False)
    path = _run(files, base_url, tmp_path / "result", decoding=decoding)
    assert all(len(messages) == 1 for messages in model.seen)
    body = recorder.bodies[0]
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.0, 0.9, 50)
    assert body["stop"] == ["\n", "\n\n"]
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    assert data[2]["output"] == " It is Question 3? [1]."


def test_a_completions_model_gets_the_raw_prompt_with_alces_decoding(
    files: tuple[Path, Path], served: Any, tmp_path: Path
) -> None:
    model, recorder, base_url = served
    decoding = AlceDecoding(temperature=0.0, top_p=0.9, max_new_tokens=50, chat=False)
    out = tmp_path / "result"
    path = _run(files, base_url, out, decoding=decoding, spec="openai-completions:alce-like")
    expected = alce_prompts(load_alce_prompt_file(files[0]), load_alce_eval(files[1]), SETTINGS)
    assert sorted(body["prompt"] for body in recorder.bodies) == sorted(p for *_, p in expected)
    assert all("messages" not in body for body in recorder.bodies)
    assert {message_text(m[0]) for m in model.seen} == {p for *_, p in expected}
    body = recorder.bodies[0]
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.0, 0.9, 50)
    assert body["stop"] == ["\n", "\n\n"]
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    assert data[2]["output"] == " It is Question 3? [1]."
    assert json.loads(path.read_text())["args"]["model"] == "openai-completions:alce-like"
    with pytest.raises(ConfigError, match=r"completions \(non-chat\) model.*--completion"):
        _run(files, base_url, out, spec="openai-completions:alce-like")


def test_alce_run_sends_a_completions_model_the_raw_prompt(
    files: tuple[Path, Path], served: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, recorder, base_url = served
    options = json.dumps({"base_url": base_url, "max_retries": 0})
    args = ["alce", "run", "--prompt-file", str(files[0]), "--eval-file", str(files[1])]
    args += ["--shot", "2", "--ndoc", "3", "--seed", "7", "--out", str(tmp_path / "r")]
    args += ["--model", "openai-completions:alce-like", "--model-options", options]
    assert main([*args, "--no-progress"]) == 2
    assert "--completion" in capsys.readouterr().err
    assert main([*args, "--completion", "--no-progress"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.name == "asqa-alce-like-citelab-shot2-ndoc3-7.json"
    assert all(body["stop"] == ["\n", "\n\n"] for body in recorder.bodies)
    assert main(["score", str(path), "--format", "alce", "--json"]) == 0


def test_an_interrupted_run_resumes_without_asking_again(
    files: tuple[Path, Path], served: Any, tmp_path: Path
) -> None:
    model, _, base_url = served
    model.failing = {"Question 4?"}
    out = tmp_path / "result"
    with pytest.raises(ModelError):
        _run(files, base_url, out, cache=False, concurrency=1)
    partial = out / "asqa-alce-like-citelab-shot2-ndoc3-7.partial.jsonl"
    assert len(partial.read_text(encoding="utf-8").splitlines()) == 3
    # An interruption can cut the last line short; a line may lack a field: both asked again.
    with partial.open("a", encoding="utf-8") as file:
        file.write('["not", "an entry"]\n{"key": "cut sh')
    asked = len(model.seen)
    model.failing = set()
    path = _run(files, base_url, out, cache=False, concurrency=1)
    again = [message_text(m[-1]).rsplit("Question: ", 1)[-1][:11] for m in model.seen[asked:]]
    assert again == ["Question 4?", "Question 5?", "Question 6?"]
    outputs = [item["output"] for item in json.loads(path.read_text())["data"]]
    assert outputs[3] == " It is Question 4? [1].\nA second line [2]. "


def test_citelab_score_reads_the_result_file(
    files: tuple[Path, Path], served: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, base_url = served
    path = _run(files, base_url, tmp_path / "result")
    assert main(["score", str(path), "--format", "alce", "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)["metrics"]
    assert metrics["citation_recall_alce"]["answers"] == len(ITEMS) - 1


def test_the_prompt_command_prints_one_json_object_a_line(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--prompt-file", str(files[0]), "--eval-file", str(files[1]), "--shot", "1"]
    assert main(["alce", "prompt", *args, "--ndoc", "2", "--fewer-doc-in-demo", "1"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    expected = alce_prompts(
        load_alce_prompt_file(files[0]),
        load_alce_eval(files[1]),
        AlcePromptSettings(shot=1, ndoc=2, ndoc_in_demo=1),
    )
    assert lines == [{"index": i, "prompt": p} for i, _, p in expected]
    assert main(["alce", "prompt", *args, "--ndoc", "-1"]) == 2
    assert "--ndoc: Input should be greater than or equal to 0" in capsys.readouterr().err


def test_a_suite_puts_alces_prompt_beside_the_pipeline_scored_by_the_same_judge(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    from citelab.evals import rescore, run

    suite = tmp_path / "suite.toml"
    suite.write_text(
        f"""
name = "alce_beside"
datasets = ["helpcentre"]
limit = 2
models = ["extractive"]
scorers = ["citation_recall", "citation_precision"]
judge = {{name = "lexical"}}

[[alce]]
name = "asqa"
prompt_file = "{files[0].name}"
eval_file = "{files[1].name}"
shot = 1
ndoc = 2
quick_test = 4
""",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = run(suite, out_dir=out, progress=False)
    scores = result.scores
    alce = scores[scores["variant"] == "alce_prompt"]
    assert set(alce["dataset"]) == {"asqa"}
    assert set(scores[scores["variant"] == "baseline"]["dataset"]) == {"helpcentre"}
    assert len(alce[alce["metric"] == "citation_recall"]) == 4
    [written] = (out / "alce").glob("asqa-*.json")
    assert len(json.loads(written.read_text())["data"]) == 4
    assert (out / "report.html").is_file()
    assert {judge.judge_config["name"] for judge in result.judges()} == {"lexical"}
    # One scorer, one judge, both variants: the same judged metric covers both.
    assert set(scores["metric"]) == {"citation_recall", "citation_precision"}
    # Rescored (no model runs), the answers with ALCE's prompt are read back from its files.
    again = rescore(out, suite)
    before = scores.sort_values(["variant", "dataset", "case_id", "metric"]).reset_index(drop=True)
    after = again.scores.sort_values(["variant", "dataset", "case_id", "metric"])
    assert after.reset_index(drop=True)[before.columns].equals(before)
    written.unlink()
    with pytest.raises(ConfigError, match=r"no ALCE result file for \[\[alce\]\] 'asqa'"):
        rescore(out, suite)
