"""Gates: thresholds (by value or by interval), non-inferiority on paired cases, required
findings, the suite schema's errors, and what the report and ``run.json`` show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from citelab import ConfigError
from citelab.evals import (
    Case,
    CaseRecord,
    Finding,
    Gate,
    GoldTurn,
    build_scorers,
    evaluate_findings,
    evaluate_gates,
    load_suite,
    score_records,
    write_outputs,
)
from citelab.evals._stats import wilson_interval
from citelab.evals.results import failed_gates, required_findings

from .._builders import record

GOOD = "Tuition fees are due in May [1]. Permits cost 30 euros per term [2]."
HALF = "Tuition fees are due in May [1]. The library opens at noon [2]."


def _result(other: str = HALF, cases: int = 8):  # type: ignore[no-untyped-def]
    """``baseline`` answers every case with GOOD (recall 1); ``other`` with ``other``."""
    gold = {("d", f"c{i}"): Case(id=f"c{i}", turns=[GoldTurn(question="q")]) for i in range(cases)}
    records = [
        CaseRecord(
            key=f"{variant}{i}",
            variant=variant,
            model="m",
            dataset="d",
            case_id=f"c{i}",
            turns=[record(text, ("fees", "parking"), question="q")],
        )
        for i in range(cases)
        for variant, text in (("baseline", GOOD), ("other", other))
    ]
    scorers = build_scorers(["citation_recall", "dangling_markers"])
    return score_records(records, gold, scorers, config={"suite": {"name": "g"}}, seed=3)


def test_a_threshold_is_min_or_max_and_bad_gates_say_why() -> None:
    gate = Gate.model_validate({"metric": "citation_recall", "min": 0.9, "variant": "baseline"})
    assert (gate.metric, gate.min, gate.max, gate.kind) == (
        "citation_recall",
        0.9,
        None,
        "threshold",
    )
    assert Gate.model_validate(gate.model_dump()) == gate  # run.json rebuilds it
    for bad, why in [
        ({"metric": "citation_recall"}, "needs min, max, or not_worse_than"),
        ({"metric": "citation_recall", "not_worse_than": "baseline", "variant": "o"}, "margin"),
        ({"metric": "citation_recall", "not_worse_than": "baseline", "margin": 0.1}, "named"),
        ({"metric": "citation_recall", "min": 0.5, "margin": 0.1}, "margin belongs"),
        ({"metric": "citation_recall", "min": 0.5, "wat": 1}, "Extra inputs"),
    ]:
        with pytest.raises(ValidationError, match=why):
            Gate.model_validate(bad)


@pytest.mark.parametrize(
    ("old", "instead"),
    [
        ({"check": "citation_recall >= 0.9"},
         "check = 'citation_recall >= 0.9' is no longer read: "
         'write metric = "citation_recall" and min = 0.9'),
        ({"check": "dangling_markers <= 0", "variant": "b"},
         'write metric = "dangling_markers" and max = 0'),
        ({"check": "citation_recall > 0.9"},
         'write metric = "<metric>" with min = <number> (at least) or max = <number> (at most)'),
        ({"metric": "citation_recall", "threshold": 0.5},
         "threshold = 0.5 is no longer read: write min = 0.5 (at least) or max = 0.5 (at most)"),
    ],
)  # fmt: skip
def test_a_gate_written_the_old_way_is_refused_with_the_new_form(
    old: dict[str, object], instead: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        Gate.model_validate(old)
    assert instead in str(caught.value)


def test_thresholds_by_value_and_by_interval() -> None:
    result = _result()
    gates = [
        Gate(metric="citation_recall", min=0.9, variant="baseline"),
        Gate(metric="citation_recall", min=0.9),  # every variant: other has 0.5
        Gate(metric="citation_recall", min=0.25, variant="other", by="interval"),
        Gate(metric="dangling_markers", max=0),
        # other is 0.5 in every case: the resampled interval would be [0.5, 0.5]; on 16
        # units its interval is Wilson's, whose lower end is under 0.5.
        Gate(metric="citation_recall", min=0.5, variant="other", by="interval"),
    ]
    checked = evaluate_gates(result, gates)
    assert [g.verdict for g in checked] == ["holds", "fails", "holds", "holds", "fails"]
    assert [g.passed for g in checked] == [True, False, True, True, False]
    low, _ = wilson_interval(8, 16)
    assert f"other 0.500 [{low:.3f}, " in checked[4].sentence
    assert "(too few units: Wilson)" in checked[0].sentence
    assert "[1.000, 1.000]" not in checked[0].sentence
    assert checked[1].sentence.endswith("— FAILED.")
    assert checked[0].name == "citation_recall >= 0.9 for baseline"


def test_a_gate_skips_the_models_it_names() -> None:
    """A perturbing model's faults are on purpose: the demo's gates skip it by name."""
    good, faulty = _result(), _result(other=HALF)
    moved = [r.model_copy(update={"model": "faulty"}) for r in faulty.records]
    gold = {("d", f"c{i}"): Case(id=f"c{i}", turns=[GoldTurn(question="q")]) for i in range(8)}
    both = score_records(
        [*good.records, *(r for r in moved if r.variant == "other")],
        gold,
        build_scorers(["citation_recall"]),
        seed=3,
    )
    gate = Gate(metric="citation_recall", min=0.9)
    (checked,) = evaluate_gates(both, [gate])
    assert checked.verdict == "fails"
    assert "[faulty]" in checked.sentence
    (skipping,) = evaluate_gates(both, [gate.model_copy(update={"skip_models": ["faulty"]})])
    assert skipping.verdict == "fails"  # m's own "other" variant still fails
    only = Gate(metric="citation_recall", min=0.9, variant="baseline", skip_models=["faulty"])
    (baseline,) = evaluate_gates(both, [only])
    assert baseline.verdict == "holds"
    assert "faulty" not in baseline.sentence
    (unskipped,) = evaluate_gates(both, [only.model_copy(update={"skip_models": []})])
    assert unskipped.verdict == "untestable"  # faulty ran no baseline
    # A name the run lacks is no error (--model may have replaced the suite's models).
    (absent,) = evaluate_gates(good, [only.model_copy(update={"skip_models": ["gone"]})])
    assert absent.verdict == "holds"


def test_a_finding_skips_a_model_that_did_not_run_its_variants() -> None:
    """A suite's model may run only some variants: a finding comparing two is checked on the
    models that ran both, and is not testable only when none did."""
    result = _result()
    extra = [
        r.model_copy(update={"model": "sampled"}) for r in result.records if r.variant == "other"
    ]
    gold = {("d", f"c{i}"): Case(id=f"c{i}", turns=[GoldTurn(question="q")]) for i in range(8)}
    both = score_records(
        [*result.records, *extra], gold, build_scorers(["citation_recall"]), seed=3
    )
    finding = Finding(
        title="other recalls less", metric="citation_recall", baseline="baseline",
        variant="other", expect="lower",
    )  # fmt: skip
    (checked,) = evaluate_findings(both, [finding])
    assert checked.verdict == "holds"
    assert "sampled" not in checked.sentence
    (nobody,) = evaluate_findings(both, [finding.model_copy(update={"baseline": "gone"})])
    assert nobody.verdict == "untestable"


def test_a_threshold_by_interval_fails_where_the_value_passes() -> None:
    # Half the cases recall 1, half 0.5: the value is 0.75, its interval reaches below 0.7.
    by_value = Gate(metric="citation_recall", min=0.7, variant="other")
    spread = _mixed()
    (value, interval) = evaluate_gates(
        spread, [by_value, by_value.model_copy(update={"by": "interval"})]
    )
    assert value.passed
    assert not interval.passed


def _mixed():  # type: ignore[no-untyped-def]
    gold = {("d", f"c{i}"): Case(id=f"c{i}", turns=[GoldTurn(question="q")]) for i in range(8)}
    records = [
        CaseRecord(
            key=f"{variant}{i}",
            variant=variant,
            model="m",
            dataset="d",
            case_id=f"c{i}",
            turns=[record(GOOD if variant == "baseline" or i % 2 else HALF, ("fees", "parking"))],
        )
        for i in range(8)
        for variant in ("baseline", "other")
    ]
    scorers = build_scorers(["citation_recall"])
    return score_records(records, gold, scorers, config={}, seed=3)


def test_non_inferiority_reads_the_paired_interval() -> None:
    worse = _result()  # other loses 0.5 recall on every case
    same = _result(other="Permits cost 30 euros per term [2]. Tuition fees are due in May [1].")
    gate = Gate(metric="citation_recall", variant="other", not_worse_than="baseline", margin=0.02)
    (failed,) = evaluate_gates(worse, [gate])
    (passed,) = evaluate_gates(same, [gate])
    assert (failed.verdict, passed.verdict) == ("fails", "holds")
    assert "other − baseline = -0.500 [-0.500, -0.500] on 8 paired cases" in failed.sentence
    assert "needed: lower end ≥ -0.02" in failed.sentence
    generous = gate.model_copy(update={"margin": 0.6})
    assert evaluate_gates(worse, [generous])[0].passed
    # Lower is better: the interval's upper end must stay within the margin.
    dangling = gate.model_copy(update={"metric": "dangling_markers"})
    (lower,) = evaluate_gates(worse, [dangling])
    assert lower.passed
    assert "upper end ≤ +0.02" in lower.sentence


def test_a_gate_on_identical_answers_is_not_informative_never_passed() -> None:
    same = _result(other=GOOD)  # other's answers are the baseline's, word for word
    gate = Gate(metric="citation_recall", variant="other", not_worse_than="baseline", margin=0.02)
    (required,) = evaluate_gates(same, [gate])
    assert (required.verdict, required.passed, required.fails_run) == ("uninformative", None, True)
    assert "identical to baseline's, so the difference is 0 by construction" in required.sentence
    assert "it fails the run" in required.sentence
    (optional,) = evaluate_gates(same, [gate.model_copy(update={"required": False})])
    assert (optional.verdict, optional.passed, optional.fails_run) == ("uninformative", None, False)
    assert "not informative (neither passed nor failed)" in optional.sentence
    assert failed_gates([required, optional]) == [required]
    # A finding comparing the same two variants is not informative either, never "as predicted".
    finding = Finding(
        title="same", metric="citation_recall", baseline="baseline", variant="other", expect="same"
    )
    (checked,) = evaluate_findings(same, [finding])
    assert (checked.verdict, checked.holds) == ("uninformative", False)
    assert checked.sentence.endswith("— not informative.")
    (gated,) = required_findings([checked.model_copy(update={"finding": finding.model_copy(
        update={"required": True})})])  # fmt: skip
    assert (gated.passed, gated.fails_run) == (None, True)


def test_a_gate_with_nothing_to_check_is_not_testable_and_does_not_pass() -> None:
    result = _result()
    gates = [
        Gate(metric="citation_recall", min=0.5, subset="tag:multi_turn"),
        Gate(metric="claim_recall", min=0.5),
    ]
    subset, metric = evaluate_gates(result, gates)
    assert (subset.verdict, subset.passed) == ("untestable", False)
    assert "no tag:multi_turn turns in these results" in subset.sentence
    assert "not testable here" in subset.sentence
    assert metric.verdict == "untestable"


def test_required_findings_are_gates_and_everything_reaches_run_json_and_report(
    tmp_path: Path,
) -> None:
    result = _result()
    finding = Finding(
        title="other recalls as much",
        metric="citation_recall",
        baseline="baseline",
        variant="other",
        expect="same",
        required=True,
    )
    gates = [Gate(metric="citation_recall", min=0.9, variant="baseline")]
    written = write_outputs(result, tmp_path, [finding], gates=gates)
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert [g["verdict"] for g in run["gates"]] == ["holds", "fails"]
    assert run["gates"][1]["name"] == "required finding: other recalls as much"
    assert run["gates"][0]["gate"]["min"] == 0.9
    assert result.config["gates"] == run["gates"]
    page = written["report.html"].read_text(encoding="utf-8")
    assert "<h2>Gates</h2>" in page
    assert "1 of 2 gates did not pass" in page
    assert page.index("<h2>Gates</h2>") < page.index("<h2>Findings</h2>")
    # The notebook view shows the suite's gates too.
    result.config["suite"] = {
        "name": "g",
        "gates": [g.model_dump(mode="json") for g in gates],
        "findings": [finding.model_dump(mode="json")],
    }
    assert "1 of 2 gates did not pass" in result.report_html()
    assert [g.passed for g in required_findings([])] == []


def test_a_suite_states_gates_and_bad_ones_name_the_file_and_key(tmp_path: Path) -> None:
    suite = tmp_path / "gated.toml"
    suite.write_text(
        'name = "gated"\ndatasets = ["university"]\nscorers = ["citation_recall"]\n'
        '[[variants]]\nname = "baseline"\n'
        '[[gates]]\nmetric = "citation_recall"\nmin = 0.8\n',
        encoding="utf-8",
    )
    (gate,) = load_suite(suite).gates
    assert (gate.metric, gate.min, gate.variant, gate.by) == ("citation_recall", 0.8, "*", "value")
    suite.write_text(
        'name = "gated"\ndatasets = ["university"]\n[[gates]]\ncheck = "citation_recall >= 1"\n',
        encoding="utf-8",
    )
    instead = 'write metric = "citation_recall" and min = 1'
    with pytest.raises(ConfigError, match=r"gated\.toml: key gates\.0: .*" + instead):
        load_suite(suite)
    yaml_suite = tmp_path / "gated.yaml"
    yaml_suite.write_text(
        "name: gated\ndatasets: [university]\ngates:\n  - metric: citation_recall\n    max: x\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"gated\.yaml: key gates\.0\.max"):
        load_suite(yaml_suite)


def test_gates_naming_what_the_suite_does_not_run_fail_before_any_case(tmp_path: Path) -> None:
    from citelab.evals import plan_run

    suite = tmp_path / "gated.toml"
    head = 'name = "gated"\ndatasets = ["university"]\nscorers = ["citation_recall"]\n'
    suite.write_text(head + '[[gates]]\nmetric = "claim_recall"\nmin = 0.8\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"gates\.0\.metric: no scorer of the suite writes"):
        plan_run(load_suite(suite))
    suite.write_text(
        head
        + '[[gates]]\nmetric = "citation_recall"\nvariant = "nope"\n'
        + 'not_worse_than = "baseline"\nmargin = 0.1\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"gates\.0\.variant: no variant named 'nope'"):
        plan_run(load_suite(suite))


def _labelled(result, wrong: float, variants=("baseline", "other")):  # type: ignore[no-untyped-def]
    """Every pair of ``variants`` labelled: supported, except the library statement in a
    share ``wrong`` of the cases (the judge calls it unsupported in all) and the fees
    statement in every fifth case."""
    from citelab.evals import label_pairs
    from citelab.evals.labels import LabelledPair, LabelSet

    pairs = []
    for item in label_pairs(result).items:
        variant, _, _, case = item.id.split("/")[1:5]
        if variant not in variants:
            continue
        index = int(case.removeprefix("c"))
        label = index >= wrong * 40 if "library" in item.claim else True
        label = label and not ("fees" in item.claim and index % 5 == 0)
        pairs.append(
            LabelledPair(
                id=item.id, claim=item.claim, evidence=[p.text for p in item.passages], label=label
            )
        )
    return LabelSet.of(pairs)


def test_a_non_inferiority_gate_reads_the_ppi_difference_when_both_sides_have_labels() -> None:
    result = _result(cases=40)
    gate = Gate(metric="citation_recall", variant="other", not_worse_than="baseline", margin=0.2)
    # The judge calls the library statement unsupported: judged, other is 0.5 worse.
    (judged,) = evaluate_gates(result, [gate])
    assert judged.method == "judged"
    assert judged.verdict == "fails"
    assert "no labels of this run" in judged.sentence
    # People call it supported in 39 cases of 40: from both sides' labels, other is about
    # 0.01 worse, within the margin.
    result.labels = _labelled(result, wrong=1 / 40)
    (estimated,) = evaluate_gates(result, [gate])
    assert estimated.method == "ppi"
    assert estimated.verdict == "holds", estimated.sentence
    assert "ppi difference (both variants' labels and the judge" in estimated.sentence
    row = result.label_differences("baseline").set_index("metric").loc["citation_recall"]
    assert row["difference"] == pytest.approx(-0.5 / 40, abs=1e-9)
    assert row["ci_low"] >= -0.2
    assert estimated.model_dump(mode="json")["method"] == "ppi"


def test_a_gate_says_it_fell_back_when_one_side_has_no_labels() -> None:
    result = _result(cases=40)
    result.labels = _labelled(result, wrong=1 / 40, variants=("other",))
    gate = Gate(metric="citation_recall", variant="other", not_worse_than="baseline", margin=0.2)
    (checked,) = evaluate_gates(result, [gate])
    assert checked.method == "judged"
    assert "'other' or 'baseline' has no labels of citation_recall" in checked.sentence
    assert result.label_differences("baseline").empty


def test_a_gate_on_identical_answers_with_labels_is_still_not_informative() -> None:
    result = _result(other=GOOD, cases=40)
    result.labels = _labelled(result, wrong=0.5)
    gate = Gate(metric="citation_recall", variant="other", not_worse_than="baseline", margin=0.2)
    (checked,) = evaluate_gates(result, [gate])
    assert checked.method == "ppi"
    assert checked.verdict == "uninformative"
    assert checked.passed is None


def test_a_gate_on_enough_labels_without_spread_says_so_not_too_few_labels() -> None:
    from citelab.evals import label_pairs
    from citelab.evals.labels import LabelledPair, LabelSet

    result = _result(other=GOOD, cases=40)
    result.labels = LabelSet.of(
        [
            LabelledPair(id=i.id, claim=i.claim, evidence=[p.text for p in i.passages], label=True)
            for i in label_pairs(result).items
        ]
    )
    gate = Gate(metric="citation_recall", variant="other", not_worse_than="baseline", margin=0.2)
    (checked,) = evaluate_gates(result, [gate])
    row = result.label_differences("baseline").set_index("metric").loc["citation_recall"]
    assert row["too_few"]
    assert row["labels"] >= 30
    assert "no spread, a zero variance, with 80 labels a side at least" in row["note"]
    assert "no spread, a zero variance" in checked.sentence
    assert "fewer than 30" not in checked.sentence
