"""A variant note says "identical to the baseline" only when the recorded answers are.

A perturbing model wraps the extractive one, which does not read instructions; but its seeded
faults are drawn from the messages, the system prompt among them, so a variant that only
rewords the prompt does change its answers. The note used to say "for that model it cannot
differ from the baseline" beside a table showing it did (#24, item 2).
"""

from __future__ import annotations

import json
from pathlib import Path

from citelab.evals import run

SUITE = """
name = "notes"
datasets = ["university"]
models = [
  { spec = "extractive", label = "plain" },
  { spec = "perturbed", label = "noisy", options = { rates = { wrong = 0.2 }, seed = 7 } },
]
scorers = ["citation_recall"]

[[variants]]
name = "baseline"

[[variants]]
name = "terse_contract"
set = { contract_template = "terse" }
"""


def _answers(records: list[dict[str, object]], variant: str, model: str) -> list[str]:
    return [
        str(turn["text"])  # type: ignore[index]
        for record in sorted(records, key=lambda r: str(r["case_id"]))
        if record["variant"] == variant and record["model"] == model
        for turn in record["turns"]  # type: ignore[attr-defined]
    ]


def test_a_note_says_identical_only_when_the_answers_are(tmp_path: Path) -> None:
    suite = tmp_path / "notes.toml"
    suite.write_text(SUITE, encoding="utf-8")
    out = tmp_path / "out"
    result = run(suite, out_dir=out, progress=False)
    lines = (out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    plain_same = _answers(records, "baseline", "plain") == _answers(
        records, "terse_contract", "plain"
    )
    noisy_same = _answers(records, "baseline", "noisy") == _answers(
        records, "terse_contract", "noisy"
    )
    assert plain_same  # the extractive model writes the same answers under either wording
    assert not noisy_same  # the perturbation's draws follow the prompt's text
    note = result.config["variant_notes"]["terse_contract"]
    assert "cannot differ" not in note
    assert "plain does not read: its answers are identical to baseline's" in note
    assert "noisy" in note
    assert "differ from baseline's" in note
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "cannot differ" not in report
