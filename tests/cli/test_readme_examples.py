"""The README's shell examples run as written (in a fresh folder, with this checkout's
``citelab`` first on the PATH) and do what the README says they do."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _shell_block(marker: str) -> str:
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    [block] = [block for block in blocks if marker in block]
    return block


def _run(script: str, folder: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "CITELAB_CACHE_DIR": str(folder / ".cache"),
    }
    return subprocess.run(
        ["bash", "-c", script],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.mark.slow
def test_the_scoring_envelope_example_runs_as_written(tmp_path: Path) -> None:
    done = _run(_shell_block("citelab score answers.jsonl"), tmp_path)
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    assert metrics["citation_recall"]["value"] == 1.0
    assert metrics["citation_precision"]["value"] == 1.0


@pytest.mark.slow
def test_the_ci_recipe_runs_as_written_and_passes_its_gates(tmp_path: Path) -> None:
    recipe = _shell_block("--non-inferior '*=0.02'")
    done = _run(recipe, tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    # The default suite's threshold and its required finding pass; its terse_contract gate
    # compares identical answers (the offline model does not read the prompt).
    assert "gates: 2 passed, 1 not informative" in done.stdout
    compared = json.loads((tmp_path / "runs" / "compare" / "compare.json").read_text())
    assert compared["gates"]
    # The candidate is the accepted run again: its gates are not informative, and not failed.
    assert {gate["verdict"] for gate in compared["gates"]} == {"uninformative"}
    assert not any(gate["fails_run"] for gate in compared["gates"])
    # A second time, the accepted run is kept and the candidate resumes: still green.
    again = _run(recipe, tmp_path)
    assert again.returncode == 0, again.stderr


@pytest.mark.slow  # several processes or a server: not in make test-quick
def test_the_alce_row_commands_run_as_written_against_serve_model(tmp_path: Path) -> None:
    from tests.evals.dataset.test_alce_prompt import ITEMS, PROMPT

    (tmp_path / "prompts").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "prompts" / "asqa_default.json").write_text(json.dumps(PROMPT))
    (tmp_path / "data" / "asqa_eval_gtr_top100.json").write_text(json.dumps(ITEMS))
    import socket

    with socket.socket() as probe:  # a free port instead of the README's 8008
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    done = _run(_shell_block("citelab alce run").replace("8008", port), tmp_path)
    assert done.returncode == 0, done.stderr
    prompts = [json.loads(line) for line in (tmp_path / "prompts.jsonl").read_text().splitlines()]
    assert [p["index"] for p in prompts] == list(range(len(ITEMS)))
    result = json.loads(
        (tmp_path / "result" / "asqa-extractive-citelab-shot2-ndoc5-42.json").read_text()
    )
    assert [item["prompt"] for item in result["data"]] == [p["prompt"] for p in prompts]
    completion = json.loads(
        (tmp_path / "result" / "asqa-extractive-completion-shot2-ndoc5-42.json").read_text()
    )
    assert completion["args"]["model"] == "openai-completions:extractive"
    assert completion["args"]["chat"] is False
    outputs = [item["output"] for item in completion["data"]]
    assert all(outputs)
    assert not any("\n" in output for output in outputs)
    lines = done.stdout.splitlines()  # serve-model's and alce run's lines, then score's JSON
    metrics = json.loads("\n".join(lines[lines.index("{") :]))["metrics"]
    assert metrics["citation_recall_alce"]["answers"] == len(ITEMS)


@pytest.mark.slow
def test_the_runs_over_time_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")  # no request leaves the test
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    done = _run(_shell_block("citelab runs runs/"), tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    for run in ("monday", "tuesday", "wednesday"):
        assert run in done.stdout  # the index lists each
    compared = json.loads((tmp_path / "compared.json").read_text(encoding="utf-8"))
    assert compared["labels"] == ["monday", "tuesday", "wednesday"]
    assert compared["only"] == {"monday": 0, "tuesday": 0, "wednesday": 3}
    assert any(row["run"] == "wednesday" and row["difference"] is not None
               for row in compared["figures"])  # fmt: skip
    assert (tmp_path / "mlruns").is_dir()
    usage = json.loads((tmp_path / "runs" / "monday" / "run.json").read_text())["usage"]
    # A cost where the example gives a price (the extractive model), none where it gives
    # none (the perturbing model): never a made-up zero.
    priced = {row["model"]: row["cost_usd"] is not None for row in usage}
    assert priced == {"extractive": True, "perturbed": False}


def test_the_judge_section_says_agreement_varies_by_domain_with_the_figures() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Support judges") : text.index("### An NLI judge")]
    flat = " ".join(section.split())
    assert "Agreement varies by domain: label 100 of your own pairs." in flat
    figures = ["κ 0.42 / AUC 0.81", "κ 0.33 / AUC 0.73", "κ 0.15, 0.44 and 0.59"]
    figures += ["κ ≈ 0.10 / 0.37 / 0.54", "κ ≈ 0.20 / 0.44 / 0.67", "AttributionBench"]
    for figure in figures:
        assert figure in flat, figure
