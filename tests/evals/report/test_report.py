import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from citelab import InvalidInput
from citelab.evals import (
    Case,
    CaseRecord,
    Finding,
    GoldTurn,
    ModelSpec,
    Variant,
    build_scorers,
    evaluate_findings,
    score_records,
    write_outputs,
)
from citelab.evals._stats import wilson_interval
from citelab.evals.records import RoundRecord
from citelab.evals.report import ReportView
from citelab.evals.report._case_browser import (
    DETAIL_BLOCK,
    case_browser_data,
    pack_details,
    unpack_details,
)
from citelab.evals.report._colors import PALETTE
from citelab.evals.report._glossary import metric_glossary
from citelab.evals.report._report import FEW_TITLE, MIN_UNITS, render_html
from citelab.evals.runner._variant_notes import variant_notes

from .._builders import record

EVIL = '<script>alert("x")</script>'
FEES, PARKING = "entity:page/fees", "entity:page/parking"
TEXT = "Tuition fees are due in May [1]. Permits cost 30 euros per term [2]."


def _rounds(second: dict[int, str]) -> list[RoundRecord]:
    return [
        RoundRecord(index=0, visible={1: FEES}, searches=1),
        RoundRecord(index=1, text=TEXT, visible=second),
    ]


def _result():  # type: ignore[no-untyped-def]
    cases = {("d", f"c{i}"): Case(id=f"c{i}", turns=[GoldTurn(question=EVIL)]) for i in range(6)}
    records = []
    for i in range(6):
        for variant, second in (("baseline", {1: FEES, 2: PARKING}), (EVIL, {1: PARKING, 2: FEES})):
            turn = record(TEXT, ("fees", "parking"), rounds=_rounds(second), question=EVIL)
            records.append(
                CaseRecord(
                    key=f"{variant}{i}",
                    variant=variant,
                    model="m",
                    dataset="d",
                    case_id=f"c{i}",
                    turns=[turn],
                )
            )
    scorers = build_scorers(["citation_recall", "numbering_stability", "dangling_markers"])
    return score_records(records, cases, scorers, config={"suite": {"name": EVIL}}, seed=1)


def test_findings_compare_intervals_in_the_predicted_direction() -> None:
    result = _result()
    falls = Finding(
        title="t",
        metric="numbering_stability",
        baseline="baseline",
        variant=EVIL,
        subset="multi_round",
        expect="lower",
    )
    rises = falls.model_copy(update={"expect": "higher"})
    missing = falls.model_copy(update={"variant": "nope"})
    checked = evaluate_findings(result, [falls, rises, missing])
    assert [c.holds for c in checked] == [True, False, False]
    assert checked[0].values["baseline · m"][0] == 1.0
    assert checked[0].values[f"{EVIL} · m"][0] == 0.0
    assert "as predicted" in checked[0].sentence
    assert "no value for 'nope'" in checked[2].sentence


def test_threshold_findings_check_one_or_every_variant() -> None:
    result = _result()
    holds = Finding(title="t", metric="numbering_stability", variant="baseline", min=1.0)
    every = Finding(title="t", metric="dangling_markers", variant="*", max=0.0)
    fails = Finding(title="t", metric="numbering_stability", variant="*", min=0.5)
    ranged = Finding(title="t", metric="numbering_stability", variant="baseline", min=0.5, max=1)
    outside = Finding(title="t", metric="dangling_markers", variant="*", min=0.5, max=1)
    checked = evaluate_findings(result, [holds, every, fails, ranged, outside])
    assert [c.holds for c in checked] == [True, True, False, True, False]
    assert "expected ≥ 1 — as predicted" in checked[0].sentence
    assert "expected ≤ 0 — as predicted" in checked[1].sentence
    assert "expected ≥ 0.5 and ≤ 1 — as predicted" in checked[3].sentence


def test_findings_must_be_complete() -> None:
    with pytest.raises(ValueError, match="give variant and baseline"):
        Finding(title="t", metric="m", variant="v", expect="lower")
    with pytest.raises(ValueError, match=r"give variant and baseline \(or min / max"):
        Finding(title="t", metric="m", variant="*")
    with pytest.raises(ValueError, match=r"a comparison .* or a threshold .*, not both"):
        Finding(title="t", metric="m", variant="v", baseline="b", expect="lower", min=0.5)


@pytest.mark.parametrize(
    ("old", "instead"),
    [
        ({"expect": "at_least", "threshold": 1.0},
         'expect = "at_least" with threshold = 1.0 is no longer read: write min = 1.0, '
         "without expect"),
        ({"expect": "at_most", "threshold": 0},
         'expect = "at_most" with threshold = 0 is no longer read: write max = 0'),
        ({"expect": "at_most"}, 'expect = "at_most" is no longer read: write max = <number>'),
        ({"threshold": 0.5, "baseline": "b"},
         "threshold = 0.5 is no longer read: write min = 0.5 (at least) or max = 0.5 (at most)"),
    ],
)  # fmt: skip
def test_a_finding_written_the_old_way_is_refused_with_the_new_form(
    old: dict[str, object], instead: str
) -> None:
    with pytest.raises(ValueError, match="no longer read") as caught:
        Finding.model_validate({"title": "t", "metric": "m", "variant": "*", **old})
    assert instead in str(caught.value)


def test_outputs_are_written_and_the_report_is_self_contained_and_escaped(tmp_path: Path) -> None:
    finding = Finding(
        title=EVIL,
        metric="numbering_stability",
        baseline="baseline",
        variant=EVIL,
        subset="multi_round",
    )
    written = write_outputs(_result(), tmp_path, [finding])
    for name in ("summary", "cases", "statements", "citations"):
        assert (tmp_path / f"{name}.csv").is_file()
        assert (tmp_path / f"{name}.parquet").is_file()
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert set(summary["metric"]) == {"citation_recall", "numbering_stability", "dangling_markers"}
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "cases.parquet")[["case_id"]],
        pd.read_csv(tmp_path / "cases.csv")[["case_id"]],
    )
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["findings"][0]["holds"] is True
    assert run["findings"][0]["finding"]["title"] == EVIL
    page = written["report.html"].read_text()
    # The only scripts are the report's own: the case data (JSON) and the case browser.
    scripts = re.findall(r"<script\b[^>]*>", page)
    # The details come last: the list is drawn (async module) before the parser reads them.
    assert scripts == [
        '<script type="application/json" id="citelab-cases-data">',
        '<script type="module" async>',
        '<script type="application/octet-stream" id="citelab-cases-details" '
        f'data-encoding="gzip+base64" data-block="{DETAIL_BLOCK}">',
    ]
    assert page.index("Metric glossary") < page.index('id="citelab-cases-details"')
    assert page.endswith("</script>\n</body></html>\n")
    details = re.search(r'id="citelab-cases-details"[^>]*>(.*?)</script>', page, re.S)
    assert details is not None
    assert re.fullmatch(r"[A-Za-z0-9+/=\n]+", details.group(1))  # base64 blocks only
    lines = unpack_details(details.group(1))
    assert len(lines) == 12  # one JSON line per listed turn
    assert json.loads(lines[0])["msg"]["content"][0]["text"] == TEXT
    assert EVIL not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    data = re.search(r'id="citelab-cases-data">(.*?)</script>', page, re.S)
    assert data is not None
    assert "<" not in data.group(1)  # no string in the data can end its script element
    assert json.loads(data.group(1))["cases"][0]["q"] == EVIL
    plots = r'<img alt="[^"]*" loading="lazy" decoding="async" src="data:image/svg\+xml;base64,'
    assert len(re.findall(plots, page)) == 3
    markup = re.sub(r"<script\b.*?</script>", "", page, flags=re.S)
    assert not re.search(r'(src|href)="(?!data:)', markup)  # no external assets
    assert "Numbering stability per round" in page
    cases = pd.read_csv(tmp_path / "cases.csv")
    assert (cases["answer"] == TEXT).all()
    assert {"differences.csv", "scores.csv"} <= {p.name for p in tmp_path.iterdir()}


def test_writing_a_report_leaves_the_matplotlib_backend_alone(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("svg")  # a backend the report must not replace with Agg
    before = (matplotlib.get_backend(), matplotlib.rcParams["svg.hashsalt"])
    written = write_outputs(_result(), tmp_path, [])
    assert "data:image/svg+xml;base64," in written["report.html"].read_text()
    assert (matplotlib.get_backend(), matplotlib.rcParams["svg.hashsalt"]) == before


def test_summary_cells_give_units_and_cases_and_flag_few_units() -> None:
    result = _result()
    summary = result.summary()
    recall = summary[(summary["metric"] == "citation_recall") & (summary["variant"] == "baseline")]
    assert int(recall["cases"].iloc[0]) == 6
    assert int(recall["units"].iloc[0]) == 12  # two statements per answer
    page = render_html(result, [], "t")
    assert "12 units · 6 cases" in page
    # 12 units: too few for a resampled interval. Each value says so, with Wilson's
    # interval (never a zero-width one), as does each difference that is not 0 by
    # construction.
    assert bool(summary["too_few"].all())
    differences = result.differences()
    flagged = len(summary) + len(result.summary(by=["dataset"])) + len(differences)
    assert page.count(f'title="{FEW_TITLE}"') == flagged
    assert f"too few units: under {MIN_UNITS} units, or every resample the same" in page
    assert "[1.000, 1.000]" not in page
    low, high = wilson_interval(12, 12)
    assert f"1.000 [{low:.3f}, {high:.3f}]" in page


def test_differences_are_paired_on_the_cases_both_variants_have() -> None:
    result = _result()
    diffs = result.differences()
    assert set(diffs["baseline"]) == {"baseline"}
    assert set(diffs["variant"]) == {EVIL}
    stable = diffs[diffs["metric"] == "numbering_stability"].iloc[0]
    # Every multi-round citation of the other variant resolves elsewhere: -1 in every case.
    assert stable["difference"] == pytest.approx(-1.0)
    assert (stable["ci_low"], stable["ci_high"]) == pytest.approx((-1.0, -1.0))
    # A zero-width interval on 6 cases is too few units: it excludes 0 by no evidence.
    assert bool(stable["too_few"]) is True
    assert bool(stable["excludes_zero"]) is False
    same = diffs[diffs["metric"] == "citation_recall"].iloc[0]
    assert same["difference"] == 0.0
    assert bool(same["excludes_zero"]) is False
    assert int(same["cases"]) == 6


def test_a_paired_interval_is_narrower_than_two_unpaired_ones() -> None:
    from citelab.evals.results._results import bootstrap_interval, paired_bootstrap

    # Cases differ a lot from each other; the variant adds 1 unit of 10 in every one.
    base_n = np.array([0.0, 9.0, 1.0, 8.0, 0.0, 9.0, 2.0, 7.0])
    other_n = base_n + 1.0
    d = np.full(8, 10.0)
    diff, low, high = paired_bootstrap((base_n, d), (other_n, d), np.random.default_rng(0))
    assert (diff, low, high) == pytest.approx((0.1, 0.1, 0.1))
    _, base_high = bootstrap_interval(base_n, d, np.random.default_rng(0))
    other_low, _ = bootstrap_interval(other_n, d, np.random.default_rng(1))
    assert other_low < base_high  # unpaired, the two intervals overlap: no difference shown


def test_the_glossary_defines_every_metric() -> None:
    scorers = build_scorers(["citation_recall", "dangling_markers", "no_answer"])
    glossary = metric_glossary(scorers).set_index("metric")
    assert list(glossary.index) == ["citation_recall", "dangling_markers", "no_answer"]
    definition = glossary.loc["citation_recall", "definition"]
    assert definition.startswith("Share of the answer's statements")
    assert glossary.loc["citation_recall", "unit"] == "statement of the answer"
    assert glossary.loc["dangling_markers", "better"] == "lower"
    assert glossary.loc["no_answer", "pooled"].startswith("macro") or glossary.loc[
        "no_answer", "pooled"
    ].startswith("micro")
    page = render_html(_result(), [], "t")
    assert "Metric glossary" in page
    assert "statement of the answer" in page


def test_a_variant_that_only_rewords_the_prompt_is_noted_for_a_model_that_ignores_it() -> None:
    terse = Variant(name="terse", set={"contract_template": "terse"})
    merge = Variant(name="replace", set={"merge_strategy": "replace"})
    mixed = Variant(name="mixed", set={"contract_template": "terse", "max_rounds": 2})
    extractive = [ModelSpec(spec="extractive")]
    notes = variant_notes([terse, merge, mixed, Variant(name="baseline")], extractive)
    assert list(notes) == ["terse"]
    assert "extractive does not read" in notes["terse"]
    served = [ModelSpec(spec="openai:gpt-4o", options={"base_url": "http://127.0.0.1:1/v1"})]
    assert variant_notes([terse], served) == {}


def test_identical_answers_are_called_identical_and_variants_described() -> None:
    result = _result()
    result.config["variants"] = {
        "baseline": {"set": {}, "description": "as shipped"},
        EVIL: {"set": {"contract_template": "terse"}, "description": "terse <b>wording</b>"},
    }
    page = render_html(result, [], "t")
    assert "terse &lt;b&gt;wording&lt;/b&gt;" in page
    assert "Every one of its 6 answers is identical to baseline" in page


def test_the_case_browser_data_holds_what_a_case_shows() -> None:
    data = case_browser_data(_result())
    assert [v["name"] for v in data["variants"]] == ["baseline", EVIL]
    assert [v["color"] for v in data["variants"]] == list(PALETTE[:2])
    assert data["baseline"] == "baseline"
    entry = next(e for e in data["cases"] if e["v"] == 1)
    assert entry["msg"]["content"][0]["text"] == TEXT
    assert [data["sources"][i][0] for _, i in entry["cited"]] == [FEES, PARKING]
    assert entry["s"]["numbering_stability"][0] == 0.0
    assert "numbering_stability" in entry["fail"]
    assert entry["diff"] is True
    reasons = entry["r"]["numbering_stability"]
    assert reasons
    assert all(r["hit"] is False for r in reasons)
    visible = entry["rounds"][1]["visible"]
    assert [data["sources"][i][0] for _, i in visible] == [PARKING, FEES]
    base = next(e for e in data["cases"] if e["v"] == 0)
    assert base["diff"] is False
    assert base["fail"] == []


def test_packed_details_come_back_line_for_line_in_blocks() -> None:
    lines = [json.dumps({"n": i, "text": f"answer {i} ✓ </script> [1]"}) for i in range(7)]
    packed = pack_details(lines, block=3)
    blocks = packed.split("\n")
    assert len(blocks) == 3  # 3 + 3 + 1 lines
    assert "<" not in packed
    assert unpack_details(packed) == lines
    assert pack_details(lines, block=3) == packed  # no timestamp: the same page each time
    assert pack_details([]) == ""
    assert unpack_details("") == []
    with pytest.raises(ValueError, match="at least one line, not 0"):
        pack_details(lines, block=0)


def test_a_big_report_stores_its_details_several_times_smaller() -> None:
    result = _result()
    page = render_html(result, [], "size")
    details = re.search(r'id="citelab-cases-details"[^>]*>(.*?)</script>', page, re.S)
    assert details is not None
    lines = unpack_details(details.group(1))
    plain = sum(len(line.encode()) for line in lines) + len(lines) - 1
    assert len(details.group(1)) * 2 < plain  # compressed even at 12 turns


def test_a_report_in_a_notebook_is_an_isolated_frame() -> None:
    result = _result()
    view = result.show(height=600)
    assert isinstance(view, ReportView)
    frame = view._repr_html_()
    # In a wrapper JupyterLab's math typesetting skips (answers may hold "$5 or $7").
    assert frame.startswith('<div class="mathjax_ignore"><iframe class="citelab-report-frame"')
    assert 'sandbox="allow-scripts allow-popups allow-popups-to-escape-sandbox"' in frame
    assert "height:600px" in frame
    srcdoc = re.search(r'srcdoc="([^"]*)"', frame)
    assert srcdoc is not None
    import html

    assert html.unescape(srcdoc.group(1)) == view.html
    assert "<style>" not in frame  # every style is inside the frame's document


def test_plots_give_each_variant_one_colour() -> None:
    from matplotlib.colors import to_hex

    result = _result()
    colors = {}
    for kind in ("differences", "values", "stability"):
        figure = result.plot(kind)
        axis = figure.axes[0]
        legend = axis.get_legend()
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            color = handle.get_color() if hasattr(handle, "get_color") else None
            if color is None or isinstance(color, list):
                color = handle.lines[0].get_color()
            colors.setdefault(text.get_text(), set()).add(to_hex(color))
    assert colors["baseline"] == {PALETTE[0]}
    assert colors[EVIL] == {PALETTE[1]}
    with pytest.raises(InvalidInput, match="unknown plot 'bars'"):
        result.plot("bars")
