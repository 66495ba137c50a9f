"""``citelab judges card`` and ``calibrate`` on the command line: WiCE's dev split (read from
``../shared/testdata/wice/``; those tests skip when it is absent), the label mapping printed
with every run, cards written as JSON and HTML, bad options; and ``--judge llm`` without a
model, wherever a judge is named (score, calibrate, card, suites)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score

from citelab.cli import main
from citelab.evals import JudgeCard, LexicalJudge

ROOT = Path(__file__).resolve().parents[2]
WICE = ROOT.parent / "shared" / "testdata" / "wice"
T5 = WICE / "dev_scores_t5-3b-anli.json"
needs_wice = pytest.mark.skipif(
    not (WICE / "oracle_claim_dev.jsonl").is_file(),
    reason=f"WiCE's dev split is not in {WICE} (third-party data kept outside the repository)",
)
LLM_HINT = """--judge '{"name": "llm", "model": "gpt-4o-mini"}'"""


def independent_figures(path: Path) -> dict[str, float]:
    """Accuracy, macro-F1 and κ of the lexical judge on a WiCE file, computed without
    citelab's reader or figures: plain json, a claim's verdict the best over its rows,
    scikit-learn's metrics."""
    judge = LexicalJudge()
    truth: dict[str, bool] = {}
    verdict: dict[str, bool] = defaultdict(bool)
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        ident = row["meta"]["id"]
        truth[ident] = row["label"] == "supported"
        verdict[ident] |= judge.supports(row["claim"], "\n".join(row["evidence"]))
    y, v = list(truth.values()), [verdict[k] for k in truth]
    return {
        "accuracy": accuracy_score(y, v),
        "macro_f1": f1_score(y, v, average="macro"),
        "kappa": cohen_kappa_score(y, v),
    }


@needs_wice
@pytest.mark.parametrize(
    ("name", "kind"),
    [("oracle_claim_dev.jsonl", "wice-oracle-chunks"), ("claim_dev.jsonl", "wice-claims")],
)
def test_calibrate_on_wice_prints_what_an_independent_computation_finds(
    capsys: pytest.CaptureFixture[str], name: str, kind: str
) -> None:
    expected = independent_figures(WICE / name)
    args = ["judges", "calibrate", str(WICE / name), "--format", "wice", "--judge", "lexical"]
    assert main([*args, "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert f"read as {kind}" in out
    assert "label mapping: supported → yes · partially_supported → no" in out
    row = next(line for line in out.splitlines() if line.lstrip().startswith("lexical ("))
    numbers = [float(n) for n in re.findall(r"-?\d+\.\d+", row.split(")", 1)[1])]
    # judge, pairs, claims, accuracy, its interval, macro-F1, κ, its interval, AUC
    accuracy, macro_f1, kappa = numbers[0], numbers[3], numbers[4]
    assert accuracy == round(expected["accuracy"], 3)
    assert macro_f1 == round(expected["macro_f1"], 3)
    assert kappa == round(expected["kappa"], 3)

    assert main([*args, "--json", "--resamples", "100"]) == 0
    payload = json.loads(capsys.readouterr().out)
    [figures] = payload["judges"]
    assert figures["claims"] == 349
    for key, value in expected.items():
        assert figures[key] == pytest.approx(value, abs=1e-12)
    assert payload["labels"]["format"] == kind
    assert payload["labels"]["mapping"]["partially_supported"] == "no"


@needs_wice
def test_the_default_judges_card_on_its_own_training_file_says_in_sample(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # #32: this printed κ 0.501 on the very file lexical_trained was trained on, unwarned.
    args = ["judges", "card", str(WICE / "oracle_claim_dev.jsonl"), "--format", "wice"]
    assert main([*args, "--resamples", "20"]) == 0
    out = capsys.readouterr().out
    assert "judge: lexical_trained" in out
    assert "IN SAMPLE: lexical_trained was trained on these very labels" in out


@needs_wice
def test_the_card_shows_wices_published_t5_outputs_side_by_side(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(
        ["judges", "card", str(WICE / "oracle_claim_dev.jsonl"), "--judge", "lexical",
         "--reference", f"T5-3B (ANLI)={T5}", "--resamples", "100", "--out", str(tmp_path)]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0
    out = captured.out
    assert "read as wice-oracle-chunks" in out
    assert "1043 pairs, 349 claims" in out
    assert "judge: lexical (threshold=0.75); score: its overlap" in out
    assert re.search(r"^kappa\s+0\.\d{3}\s+\[0\.\d{3}, 0\.\d{3}\]", out, re.MULTILINE)
    assert re.search(r"^sensitivity\s+0\.\d{3}\s+\[.*\]\s+\d+ of 114$", out, re.MULTILINE)
    assert "reference judges (published outputs)" in out
    t5 = re.search(r"^\s*T5-3B \(ANLI\)\s+covered by T5-3B \(ANLI\)\s+100\s", out, re.MULTILINE)
    assert t5 is not None
    same = re.search(
        r"^lexical \(threshold=0\.75\)\s+covered by T5-3B \(ANLI\)\s+100\s", out, re.MULTILINE
    )
    assert same is not None
    assert re.search(
        r"^κ difference \(lexical − T5-3B \(ANLI\), paired\): -?0\.\d{3} \[", out, re.M
    )
    assert "published elsewhere (ALCE's data, not this set)" in out
    card_file = tmp_path / "lexical-threshold-0.75.card.json"
    assert f"card: {card_file}" in captured.err
    card = JudgeCard.load(card_file)
    assert [r.name for r in card.references] == ["T5-3B (ANLI)"]
    assert card.references[0].claims == 100
    page = (tmp_path / "lexical-threshold-0.75.card.html").read_text(encoding="utf-8")
    assert "T5-3B (ANLI) (published outputs, yes at ≥ 0.5)" in page


def test_the_card_of_several_judges_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["judges", "card", "--judge", "lexical", "--judge", '{"name": "lexical_trained"}']
    assert main([*args, "--json", "--resamples", "50", "--partial-as", "skip"]) == 0
    payload: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert payload["labels"]["name"] == "citelab's own set"
    assert payload["labels"]["partial_as"] == "skip"
    assert [card["judge"]["name"] for card in payload["cards"]] == ["lexical", "lexical_trained"]
    cards = [JudgeCard.model_validate(card) for card in payload["cards"]]
    assert all(card.labels.claims == 209 for card in cards)
    assert cards[0].categories


def test_columns_name_the_fields_of_a_csv(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(
        "sentence,passage,gold\n"
        "Rooms open at 9.,Rooms open at 9.,supported\n"
        "Rooms open at 8.,Rooms open at 9.,not supported\n"
        "Rooms open at 9 daily.,Rooms open at 9.,partially supported\n",
        encoding="utf-8",
    )
    columns = ["--claim-column", "sentence", "--evidence-column", "passage", "--label-column",
               "gold"]  # fmt: skip
    assert main(["judges", "card", str(path), *columns, "--partial-as", "yes"]) == 0
    out = capsys.readouterr().out
    assert "read as csv" in out
    assert "partially_supported → yes" in out
    # Three claims: a share shows Wilson's interval and says the units are too few.
    assert re.search(
        r"^accuracy\s+\d\.\d{3}\s+\[.*\] Wilson \(too few units to resample: 3\)\s+\d of 3$",
        out,
        re.MULTILINE,
    )
    assert re.search(
        r"^kappa\s+\S+\s+(—|— too few units \(3; an interval needs 30\))\s*$", out, re.M
    )
    assert main(["judges", "card", str(path)]) == 2
    assert "no column 'claim' for the claim" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "problem"),
    [
        (["--reference", "nameonly"], "--reference 'nameonly': write it as NAME=VALUE"),
        (["--reference", "R=missing.json"], "cannot read reference R"),
        (["--reference-threshold", "R=0.3"], "no --reference named 'R'"),
    ],
)
def test_bad_reference_options_are_explained(
    capsys: pytest.CaptureFixture[str], option: list[str], problem: str
) -> None:
    assert main(["judges", "card", *option]) == 2
    assert problem in capsys.readouterr().err


def test_a_reference_threshold_is_applied(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "ref.json"
    path.write_text(json.dumps({"g01-1": 0.4, "g01-3": 0.2}), encoding="utf-8")
    args = ["judges", "card", "--reference", f"R={path}", "--json", "--resamples", "20"]
    assert main([*args, "--reference-threshold", "R=0.3"]) == 0
    [side] = json.loads(capsys.readouterr().out)["cards"][0]["references"]
    assert side["threshold"] == 0.3
    assert side["claims"] == 2
    assert side["reference"]["says_yes"]["count"] == 1
    assert main([*args, "--reference-threshold", "R=high"]) == 2
    assert "'high' is not a number" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command",
    [
        ["judges", "card", "--judge", "llm"],
        ["judges", "calibrate", "--judge", "llm"],
        ["judges", "card", "--judge", '{"name": "llm", "base_url": "http://127.0.0.1:9/v1"}'],
        ["score", "FIXTURE", "--judge", "llm"],
    ],
)
def test_the_llm_judge_without_a_model_says_how_to_give_one(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    fixture = str(ROOT / "fixtures" / "alce" / "lindholm_results.json")
    assert main([fixture if part == "FIXTURE" else part for part in command]) == 2
    err = capsys.readouterr().err
    assert "judge llm needs a model" in err
    assert LLM_HINT in err
    assert "missing 1 required positional argument" not in err


def test_a_suite_with_the_llm_judge_without_a_model_says_how_to_give_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "fee", "agent": "university", "turns": [{"question": "The fee?"}]}\n',
        encoding="utf-8",
    )
    suite = tmp_path / "s.toml"
    suite.write_text(
        'name = "s"\ndatasets = ["cases.jsonl"]\njudge = { name = "llm" }\n', encoding="utf-8"
    )
    assert main(["eval", "--suite", str(suite), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "judge llm needs a model" in err
    assert 'judge = {name = "llm", model = "gpt-4o-mini"}' in err


@pytest.mark.parametrize("action", ["card", "calibrate"])
def test_label_map_reads_a_files_own_spellings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, action: str
) -> None:
    path = tmp_path / "attribution.csv"
    path.write_text(  # AttributionBench's spelling, text of our own
        "claim,evidence,attribution_label\n"
        "The ferry leaves at 9 am.,The ferry leaves at 9 am from pier 3.,attributable\n"
        "The ferry leaves at noon.,The ferry leaves at 9 am from pier 3.,not attributable\n",
        encoding="utf-8",
    )
    args = ["judges", action, str(path), "--label-column", "attribution_label", "--judge",
            "lexical", "--resamples", "50"]  # fmt: skip
    assert main(args) == 2
    assert "--label-map 'attributable=supported'" in capsys.readouterr().err
    mapped = ["--label-map", "attributable=supported", "--label-map",
              "not attributable=not_supported"]  # fmt: skip
    assert main([*args, *mapped]) == 0
    out = capsys.readouterr().out
    assert "read 'attributable' as supported · 'not attributable' as not_supported" in out
    assert "2 pairs, 2 claims" in out
    assert main([*args, "--label-map", "attributable"]) == 2
    assert "'attributable' is not SPELLING=GRADE" in capsys.readouterr().err
