"""``score_answers`` and ``citelab score``: every format read, bad input named, no half output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from citelab import ConfigError, InvalidInput
from citelab.cli import main
from citelab.contract import build_message
from citelab.contract.convert import (
    to_anthropic,
    to_cohere,
    to_gemini,
    to_openai_chat,
    to_openai_responses,
)
from citelab.evals import build_judge, read_answers, score_answers

FEES = "Tuition fees are due in May. A late payment costs 50 euros."
LIBRARY = "The library opens at 8 am on weekdays."
ALCE = {
    "data": [
        {
            "question": "When are fees due?",
            "docs": [{"title": "Fees", "text": FEES}, {"title": "Library", "text": LIBRARY}],
            "output": "Tuition fees are due in May [1]. The library opens at 8 am [2][1].",
        },
        {
            "question": "When does the library open?",
            "docs": [{"title": "Library", "text": LIBRARY}],
            "output": "The library opens at 9 pm [1].",
        },
    ]
}


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_an_alce_file_is_scored_in_both_modes_and_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "asqa_results.json", ALCE)
    out = tmp_path / "report"
    result = score_answers(path, "alce", out_dir=out)
    cases = result.to_pandas("case").set_index("case_id")
    # Answer 0: both statements supported; precision: [1] needed, then [2] needed and [1]
    # an overcite in the second statement (lexical judge) → 2/3. Answer 1: "9 pm" is not
    # in the passage → recall 0.
    assert cases.loc["0", "citation_recall_alce"] == 1.0
    assert cases.loc["0", "citation_precision_alce"] == pytest.approx(2 / 3)
    assert cases.loc["1", "citation_recall_alce"] == 0.0
    assert "citation_recall" not in cases.columns  # ALCE files: ALCE's figures by default
    both = score_answers(path, "alce", scorers=["citation_recall", "citation_precision"])
    assert list(both.to_pandas("case")["citation_recall"]) == [1.0, 0.0]
    for name in ("summary.csv", "cases.csv", "statements.csv", "citations.csv", "report.html"):
        assert (out / name).is_file(), name
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["format"] == "alce"
    assert run["answers"] == 2
    assert "citation_recall_alce" in (out / "report.html").read_text(encoding="utf-8")


def vendor_payloads() -> dict[str, Any]:
    sources = [
        {"uri": "https://uni.example/fees", "title": "Fees"},
        {"uri": "https://uni.example/library", "title": "Library"},
    ]
    text = "Fees are due in May. The library opens at 8 am."
    anchors = [
        {"sourceUri": sources[0]["uri"], "citedText": text[:20], "startIndex": 0, "endIndex": 20},
        {"sourceUri": sources[1]["uri"], "citedText": text[21:], "startIndex": 21, "endIndex": 47},
    ]
    message = build_message(text, sources, anchors=anchors)
    return {
        "anthropic": {"content": to_anthropic(message)},
        "openai-responses": to_openai_responses(message),
        "openai-chat": to_openai_chat(message),
        "cohere": to_cohere(message),
        "gemini": to_gemini(message),
        "citelab": message.to_wire(),
    }


@pytest.mark.parametrize(
    "answer_format",
    ["anthropic", "openai-responses", "openai-chat", "cohere", "gemini", "citelab"],
)
def test_each_vendor_format_is_read_and_scored(tmp_path: Path, answer_format: str) -> None:
    payload = vendor_payloads()[answer_format]
    contents = {
        "https://uni.example/fees": FEES,
        "https://uni.example/library": LIBRARY,
    }
    envelope = {
        "id": "a-1",
        "question": "When?",
        "response": payload,
        "sources": [
            {"uri": uri, "title": uri.rsplit("/", 1)[1].title(), "content": content}
            for uri, content in contents.items()
        ],
    }
    path = write(tmp_path, "answers.jsonl", envelope)
    (answer,) = read_answers(path, answer_format)
    assert answer.text.count("[") == 2, answer.text
    assert [s.content for s in answer.sources] == [FEES, LIBRARY]
    result = score_answers(path, answer_format)
    cases = result.to_pandas("case")
    span = "_span" if answer_format == "anthropic" else ""  # Anthropic: per cited span
    assert list(cases[f"citation_recall{span}"]) == [1.0]
    assert list(cases[f"citation_precision{span}"]) == [1.0]


def test_anthropic_request_documents_are_the_sources() -> None:
    documents = [
        {"type": "document", "title": "Fees", "source": {"type": "text", "data": FEES}},
        {
            "type": "document",
            "title": "Library",
            "source": {"type": "content", "content": [{"type": "text", "text": LIBRARY}]},
        },
    ]
    response = {
        "content": [
            {
                "type": "text",
                "text": "The library opens at 8 am.",
                "citations": [
                    {"type": "content_block_location", "document_index": 1, "cited_text": LIBRARY}
                ],
            }
        ]
    }
    result = score_answers([{"response": response, "documents": documents}], "anthropic")
    assert list(result.to_pandas("case")["citation_recall_span"]) == [1.0]
    details = result.to_pandas("statement")
    # Every request document is a source, in request order: document 1 is cited as [2].
    assert list(details["citations"]) == ["2"]


def test_sdk_objects_are_read_too() -> None:
    openai_types = pytest.importorskip("openai.types.responses")
    part = openai_types.ResponseOutputText.model_validate(vendor_payloads()["openai-responses"])
    result = score_answers([part], "openai-responses")
    assert len(result.turns) == 1


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"rows": []}, r"bad\.json: an ALCE result file needs a 'data' list"),
        (
            {"data": [{"question": "Q", "docs": []}]},
            r"bad\.json: data\[0\]: field output: Field required",
        ),
        (
            {"data": [{"question": "Q", "output": "A", "docs": [{"title": "T"}]}]},
            r"data\[0\]: field docs\.0: Value error, a doc needs 'text'",
        ),
        ({"data": []}, r"bad\.json: no answers to score"),
    ],
)
def test_bad_alce_input_names_file_record_and_field(
    tmp_path: Path, data: Any, expected: str
) -> None:
    path = write(tmp_path, "bad.json", data)
    with pytest.raises(InvalidInput, match=expected):
        score_answers(path, "alce", out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_bad_vendor_records_and_lines_are_named(tmp_path: Path) -> None:
    good = json.dumps({"response": vendor_payloads()["cohere"]})
    path = tmp_path / "cohere.jsonl"
    path.write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"cohere\.jsonl: line 2: not JSON"):
        read_answers(path, "cohere")
    bad = {"message": {"content": [{"type": "text", "text": "x"}], "citations": [{"start": 0}]}}
    path.write_text(good + "\n" + json.dumps({"response": bad}) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"cohere\.jsonl: record 1: not a valid Cohere"):
        read_answers(path, "cohere")
    known = "unknown answer format 'bing'; known answer formats: alce, anthropic, citelab"
    with pytest.raises(ConfigError, match=known):
        read_answers(path, "bing")


def test_a_failing_judge_leaves_no_half_written_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.csv").write_text("earlier run\n", encoding="utf-8")

    def broken(statement: str, evidence: str) -> bool:
        raise ConfigError("the judge broke")

    judge = build_judge({"name": "tests.evals.external.test_score_answers:broken"})
    with pytest.raises(ConfigError, match="the judge broke"):
        score_answers(write(tmp_path, "a.json", ALCE), "alce", judge=judge, out_dir=out)
    assert (out / "summary.csv").read_text(encoding="utf-8") == "earlier run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "out"]


def broken(statement: str, evidence: str) -> bool:
    raise ConfigError("the judge broke")


def always(statement: str, evidence: str) -> bool:
    return True


class Strict:
    name = "strict"

    def __init__(self, minimum: int = 1) -> None:
        self.minimum = minimum

    def supports(self, statement: str, evidence: str) -> bool:
        return len(statement) >= self.minimum and statement in evidence

    def config(self) -> dict[str, Any]:
        return {"name": "tests.evals.external.test_score_answers:Strict", "minimum": self.minimum}


def test_judges_named_as_module_attr() -> None:
    function = build_judge("tests.evals.external.test_score_answers:always")
    assert function.supports("x", "y") is True
    assert function.config() == {"name": "tests.evals.external.test_score_answers:always"}
    built = build_judge({"name": "tests.evals.external.test_score_answers:Strict", "minimum": 3})
    assert type(built).__name__ == "Strict"
    assert built.supports("abc", "xabcx") is True
    assert built.supports("ab", "xabx") is False
    assert build_judge(built.config()).config() == built.config()
    with pytest.raises(ConfigError, match="cannot import 'no_such_module'"):
        build_judge("no_such_module:judge")
    with pytest.raises(ConfigError, match="has no 'missing'"):
        build_judge("tests.evals.external.test_score_answers:missing")
    with pytest.raises(ConfigError, match="takes no configuration"):
        build_judge({"name": "tests.evals.external.test_score_answers:always", "threshold": 1})


def test_citelab_score_prints_json_and_fails_loudly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "eli5_results.json", ALCE)
    code = main(["score", str(path), "--json", "--scale", "100", "--judge", "lexical"])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["answers"] == 2
    assert payload["metrics"]["citation_recall_alce"]["value"] == pytest.approx(50.0)
    # Two answers: no interval (it would only look confident), and the words why.
    recall = payload["metrics"]["citation_recall_alce"]
    assert (recall["ci_low"], recall["ci_high"]) == (None, None)
    assert recall["interval"].startswith("too few units (")
    bad = write(tmp_path, "broken.json", {"data": [{"question": "Q"}]})
    assert main(["score", str(bad)]) == 2
    assert "broken.json: data[0]: field output" in capsys.readouterr().err


def test_the_command_runs_as_a_process(tmp_path: Path) -> None:
    path = write(tmp_path, "results.json", ALCE)
    done = subprocess.run(
        [sys.executable, "-m", "citelab", "score", str(path), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "citation_recall_alce" in done.stdout
    assert (tmp_path / "o" / "report.html").is_file()


_IMPORTS = """
import contextlib, io, json, sys
from citelab.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["score", sys.argv[1], "--json"])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

# What citelab score never uses: the runner and what it pulls in (agents, the answer service,
# model adapters), starlette and matplotlib; on ALCE files the MCP types (vendor and citelab
# answers only) and the corpus's chunking, synthetic corpora and folder import (with YAML).
# (NLTK is imported the ordinary way for punkt, and its package __init__ imports scipy.stats.)
_UNUSED = ["citelab.evals.runner._runner", "citelab.agent", "citelab.answers", "citelab.models"]
_UNUSED += ["starlette", "matplotlib", "mcp_types", "yaml"]
_UNUSED += ["citelab.corpus._chunking", "citelab.corpus._synth", "citelab.corpus._import"]


def _run_script(script: str, path: Path) -> Any:
    """``script`` in a fresh interpreter with ``path`` as its argument: what it printed, as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_command_imports_only_what_scoring_uses(tmp_path: Path) -> None:
    out = _run_script(_IMPORTS, write(tmp_path, "results.json", ALCE))
    assert out["code"] == 0
    assert "citelab.evals.scorers._punkt" in out["modules"]  # the ALCE split ran
    assert [name for name in _UNUSED if name in out["modules"]] == []


def test_a_suite_names_its_judge_as_module_attr(tmp_path: Path) -> None:
    from citelab.evals import load_suite
    from citelab.evals.runner._plan import _scorer_specs

    suite_file = tmp_path / "suites" / "mine.toml"
    suite_file.parent.mkdir()
    suite_file.write_text(
        'name = "mine"\ndatasets = ["university"]\nscorers = ["citation_recall"]\n'
        'judge = "tests.evals.external.test_score_answers:always"\n',
        encoding="utf-8",
    )
    suite = load_suite(suite_file)
    (spec,) = _scorer_specs(suite)
    scorer = build_judge(spec["judge"])
    assert scorer.config() == {"name": "tests.evals.external.test_score_answers:always"}


def test_what_the_gemini_converter_drops_reaches_run_json_and_the_report(tmp_path: Path) -> None:
    text = "Fees are due in May. The office is on Hill Road."
    candidate = {
        "content": {"role": "model", "parts": [{"text": text}]},
        "groundingMetadata": {
            "groundingChunks": [
                {"web": {"uri": "https://uni.example/fees", "title": "Fees"}},
                {"maps": {"title": "Campus office", "placeId": "places/1"}},
            ],
            "groundingSupports": [
                {"segment": {"endIndex": 20}, "groundingChunkIndices": [0]},
                {"segment": {"startIndex": 21, "endIndex": 48}, "groundingChunkIndices": [1]},
            ],
        },
        "citationMetadata": {"citations": [{"startIndex": 0, "endIndex": 4, "uri": "x"}]},
    }
    clean = {"content": {"role": "model", "parts": [{"text": "Fees are due in May."}]}}
    lines = [
        {"id": "g-1", "question": "When and where?", "response": {"candidates": [candidate]}},
        {"id": "g-2", "question": "When?", "response": clean},
    ]
    path = tmp_path / "gemini.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "report"
    result = score_answers(path, "gemini", out_dir=out)
    assert len(result.turns) == 2  # the rest of the answer is kept and scored
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    dropped = run["dropped"]
    assert {entry["answer"] for entry in dropped} == {"g-1"}
    assert any("groundingChunks[1] (maps)" in entry["what"] for entry in dropped)
    assert any("citationMetadata" in entry["what"] for entry in dropped)
    note = run["variant_notes"]["answers"]
    assert note.startswith("The gemini converter left out 2 thing(s) in 1 answer(s)")
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "The gemini converter left out 2 thing(s)" in report
    assert "groundingChunks[1] (maps)" in report


def test_answers_the_converter_reads_whole_declare_nothing_dropped(tmp_path: Path) -> None:
    path = write(tmp_path, "answers.jsonl", {"response": vendor_payloads()["gemini"]})
    result = score_answers(path, "gemini")
    assert result.config["dropped"] == []
    assert result.config["variant_notes"] == {}


def test_citelab_score_tells_what_the_converter_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = {
        "content": {"parts": [{"text": "Fees are due in May."}]},
        "citationMetadata": {"citations": [{"startIndex": 0, "endIndex": 4, "uri": "x"}]},
    }
    path = write(tmp_path, "gemini.jsonl", {"id": "g-9", "response": candidate})
    assert main(["score", str(path), "--format", "gemini", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["dropped"][0]["answer"] == "g-9"
    assert "note: The gemini converter left out 1 thing(s) in 1 answer(s)" in captured.err


def test_an_alce_file_without_any_citation_is_scored_not_crashed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every output uncited (a model that found nothing): recall 0, precision has no citations.
    data = [
        {
            "question": f"Q{k}?",
            "output": "I could not find it.",
            "docs": [{"title": "T", "text": "x"}],
        }
        for k in range(3)
    ]
    path = tmp_path / "asqa-uncited.json"
    path.write_text(json.dumps({"data": data}), encoding="utf-8")
    assert main(["score", str(path), "--format", "alce", "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)["metrics"]
    assert metrics["citation_recall_alce"]["value"] == 0.0
    assert metrics["citation_recall_alce"]["answers"] == 3
