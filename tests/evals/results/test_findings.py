"""Findings have three verdicts: as predicted, NOT shown, and not testable here.

``citelab eval --suite default --limit 5`` keeps no multi-turn case, so the findings about
follow-ups have no turn to look at: they said ✘ "NOT shown by these results" as if the
results contradicted them (#24, item 3). Now they say "not testable here" and why, in the
sentence, ``verdict``, the HTML report, the notebook view and ``run.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from citelab.evals import (
    Case,
    CaseRecord,
    Finding,
    GoldTurn,
    build_scorers,
    evaluate_findings,
    score_records,
    write_outputs,
)

from .._builders import record

TEXT = "Tuition fees are due in May [1]. Permits cost 30 euros per term [2]."
REORDERED = "Permits cost 30 euros per term [2]. Tuition fees are due in May [1]."


def _result(tags: list[str]):  # type: ignore[no-untyped-def]
    cases = {("d", f"c{i}"): Case(id=f"c{i}", turns=[GoldTurn(question="q")]) for i in range(4)}
    records = [
        CaseRecord(
            key=f"{variant}{i}",
            variant=variant,
            model="m",
            dataset="d",
            case_id=f"c{i}",
            tags=tags,
            turns=[record(text, ("fees", "parking"), question="q")],
        )
        for i in range(4)
        for variant, text in (("baseline", TEXT), ("other", REORDERED))
    ]
    scorers = build_scorers(["citation_recall", "dangling_markers"])
    suite = {"name": "s", "findings": []}
    return score_records(records, cases, scorers, config={"suite": suite}, seed=1)


FOLLOW_UPS = Finding(
    title="Follow-ups keep their numbers",
    metric="citation_recall",
    baseline="baseline",
    variant="other",
    subset="tag:multi_turn",
    expect="same",
)
DANGLING = Finding(
    title="No dangling marker",
    metric="dangling_markers",
    variant="*",
    max=0.0,
)
LOWER = Finding(
    title="Other recalls less",
    metric="citation_recall",
    baseline="baseline",
    variant="other",
    expect="lower",
)


def test_a_finding_without_turns_to_look_at_is_not_testable_here() -> None:
    untestable, holds, fails = evaluate_findings(_result([]), [FOLLOW_UPS, DANGLING, LOWER])
    assert (untestable.verdict, untestable.holds) == ("untestable", False)
    assert "not testable here" in untestable.sentence
    assert "NOT shown" not in untestable.sentence
    assert "no tag:multi_turn turns in these results" in untestable.sentence
    assert (holds.verdict, holds.holds) == ("holds", True)
    assert (fails.verdict, fails.holds) == ("fails", False)
    assert "NOT shown by these results" in fails.sentence


def test_a_subset_with_turns_but_no_value_says_so() -> None:
    (checked,) = evaluate_findings(
        _result(["multi_turn"]), [FOLLOW_UPS.model_copy(update={"metric": "claim_recall"})]
    )
    assert checked.verdict == "untestable"
    assert "no value for 'other', 'baseline' (the metric applies to none" in checked.sentence


def test_the_report_and_run_json_show_the_third_state(tmp_path: Path) -> None:
    written = write_outputs(_result([]), tmp_path, [FOLLOW_UPS, DANGLING, LOWER])
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert [f["verdict"] for f in run["findings"]] == ["untestable", "holds", "fails"]
    page = written["report.html"].read_text(encoding="utf-8")
    assert '<span class="untestable">○ not testable here' in page
    assert '<span class="holds">✔' in page
    assert '<span class="fails">✘' in page


def test_the_notebook_view_shows_the_findings_too() -> None:
    result = _result([])
    result.config["suite"]["findings"] = [
        f.model_dump(mode="json") for f in (FOLLOW_UPS, DANGLING, LOWER)
    ]
    page = result.report_html()
    assert "<h2>Findings</h2>" in page
    assert "○ not testable here" in page
    from citelab.evals.report._report import MATH_IGNORE_CLASS
    from citelab.widget._display import MATH_IGNORE_CLASS as WIDGET_CLASS

    assert MATH_IGNORE_CLASS == WIDGET_CLASS
    assert result.show()._repr_html_().startswith(f'<div class="{MATH_IGNORE_CLASS}">')


def test_a_value_on_too_few_units_says_why_its_interval_is_wilsons() -> None:
    from citelab.evals.results._findings import point_text

    assert point_text((1.0, 0.9, 1.0), 12.0) == "1.000 [0.900, 1.000] (too few units: Wilson)"
    alike = "1.000 [0.970, 1.000] (too few units, all alike: Wilson)"
    assert point_text((1.0, 0.97, 1.0), 120.0) == alike
    assert point_text((0.5, 0.4, 0.6)) == "0.500 [0.400, 0.600]"
