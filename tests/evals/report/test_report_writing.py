"""Writing a run's outputs fast must not change them: each rewritten step equals a plain
reference computation (the straightforward way, written here), on a real run of the bundled
suite and on tables made to hit the edge cases."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from citelab.evals import (
    EvalResult,
    evaluate_findings,
    evaluate_gates,
    load_suite,
    run,
    write_outputs,
)
from citelab.evals.report import _case_browser as case_browser
from citelab.evals.report._report import _write_parquet, render_html, write_csv_rows
from citelab.evals.results import _results as results
from citelab.evals.results import fault_agreement, required_findings

KEYS = ("variant", "model", "dataset", "case_id", "turn")


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> EvalResult:
    """The bundled suite on the offline model, two cases a dataset: real scores, reasons,
    several variants and datasets."""
    return run("default", out_dir=tmp_path_factory.mktemp("run"), limit=2, progress=False)


# --- the case browser's rows ------------------------------------------------------------


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def reference_scores(scores: pd.DataFrame) -> dict[Any, Any]:
    """Row by row, as the case browser first read them."""
    out: dict[Any, Any] = {}
    for row in scores.to_dict("records"):
        key = (*(str(row[k]) for k in KEYS[:-1]), int(row["turn"]))
        value = None if _missing(row["value"]) else float(row["value"])
        out.setdefault(key, {})[str(row["metric"])] = (
            value,
            float(row["numerator"]),
            float(row["denominator"]),
        )
    return out


def reference_reasons(details: dict[str, pd.DataFrame]) -> tuple[dict[Any, Any], list[str]]:
    """Row by row, long strings numbered as they come."""
    texts = case_browser._TextTable()
    out: dict[Any, Any] = {}
    for frame in details.values():
        for row in frame.to_dict("records"):
            key = (*(str(row[k]) for k in KEYS[:-1]), int(row["turn"]))
            reason = {
                str(k): texts.ref(_plain(v))
                for k, v in row.items()
                if k not in {*KEYS, "metric"} and not _missing(v) and v != ""
            }
            out.setdefault(key, {}).setdefault(str(row["metric"]), []).append(reason)
    return out, texts.rows


def edge_details() -> dict[str, pd.DataFrame]:
    """Empty strings, None, NaN, numpy scalars in an object column, and long strings whose
    row order differs from their column order (row 0 has one in ``b``, row 1 in ``a``)."""
    long_a, long_b = "a long string of the first column", "a long string of the second column"
    keys = {"variant": ["v", "v", "w"], "model": "m", "dataset": "d", "case_id": ["c1", "c1", "c2"]}
    first = pd.DataFrame(
        {
            **keys,
            "turn": [0, 1, 0],
            "metric": ["x", "x", "y"],
            "a": pd.array(["", long_a, None], dtype="str"),
            "b": [long_b, "short", long_b],
            "n": [1.0, np.nan, -0.0],
            "o": pd.Series([np.int64(3), None, np.float64(np.nan)], dtype=object),
            "ok": [True, False, True],
        }
    )
    second = pd.DataFrame(
        {**keys, "turn": [0, 0, 0], "metric": ["z", "z", "z"], "c": [long_a, "", long_b]}
    )
    return {"citation": first, "statement": second, "empty": first.head(0)}


def test_scores_and_reasons_by_turn_equal_a_row_by_row_reading(bundled: EvalResult) -> None:
    for details in (bundled.details, edge_details()):
        texts = case_browser._TextTable()
        got = case_browser._reasons_by_turn(details, texts)
        expected, expected_texts = reference_reasons(details)
        assert got == expected
        assert texts.rows == expected_texts
        # Same key order too (the page's JSON follows it).
        assert [list(r) for v in got.values() for r in v] == [
            list(r) for v in expected.values() for r in v
        ]
    assert case_browser._scores_by_turn(bundled.scores) == reference_scores(bundled.scores)


def test_the_edge_reasons_are_what_a_turn_shows() -> None:
    texts = case_browser._TextTable()
    got = case_browser._reasons_by_turn(edge_details(), texts)
    assert texts.rows == [
        "a long string of the second column",
        "a long string of the first column",
    ]
    assert got["v", "m", "d", "c1", 0]["x"] == [{"b": [0], "n": 1.0, "o": 3, "ok": True}]
    assert got["v", "m", "d", "c1", 1]["x"] == [{"a": [1], "b": "short", "ok": False}]
    assert got["w", "m", "d", "c2", 0]["y"] == [{"b": [0], "n": -0.0, "ok": True}]
    assert type(got["v", "m", "d", "c1", 0]["x"][0]["o"]) is int


# --- paired differences and bootstraps ---------------------------------------------------


def reference_differences(result: EvalResult) -> pd.DataFrame:
    """A merge per variant and metric, as the paired differences were first computed."""
    kinds = {s.metric: s for s in result.scorers}
    baseline = result.baseline()
    per_case = results._per_case(result.scores, kinds, ["variant", "model", "metric"])
    out = []
    for (model, metric), part in per_case.groupby(["model", "metric"], sort=False):
        base = part[part["variant"] == baseline]
        for variant in dict.fromkeys(part["variant"]):
            if variant == baseline:
                continue
            paired = base.merge(
                part[part["variant"] == variant], on=["dataset", "case_id"], suffixes=("_b", "_v")
            )
            paired = paired[(paired["d_b"] > 0) & (paired["d_v"] > 0)]
            if paired.empty:
                continue
            columns = (paired[c].to_numpy(dtype=float) for c in ("n_b", "d_b", "n_v", "d_v"))
            base_n, base_d, n, d = columns
            rng = results._group_rng(result.seed, ("difference", baseline, variant, model, metric))
            diff, low, high = results.paired_bootstrap(
                (base_n, base_d), (n, d), rng, resamples=result.resamples
            )
            few = bool(d.sum() < 30 or low == high)  # too few units: no interval shown
            out.append(
                {
                    "variant": variant,
                    "model": model,
                    "metric": metric,
                    "baseline": baseline,
                    "difference": diff,
                    "ci_low": low,
                    "ci_high": high,
                    "cases": len(paired),
                    "units": float(d.sum()),
                    "excludes_zero": bool(low > 0 or high < 0) and not few,
                    "higher_is_better": kinds[str(metric)].higher_is_better,
                    "too_few": few,
                }
            )
    frame = pd.DataFrame(out, columns=results.DIFFERENCE_COLUMNS)
    return results._in_scorer_order(frame, list(kinds), ["variant", "model"])


def _uneven(result: EvalResult) -> EvalResult:
    """``result`` with some variants' cases missing and some denominators 0."""
    scores = result.scores.copy()
    variants = list(dict.fromkeys(scores["variant"]))
    first_case = scores["case_id"].iloc[0]
    drop = (scores["variant"] == variants[-1]) & (scores["case_id"] == first_case)
    scores = scores[~drop].reset_index(drop=True)
    zero = (scores["variant"] == variants[1]) & (scores.index % 3 == 0)
    scores.loc[zero, "denominator"] = 0.0
    return EvalResult(scores, result.turns, result.details, result.scorers, seed=result.seed)


def test_paired_differences_equal_a_merge_per_variant(bundled: EvalResult) -> None:
    for result in (bundled, _uneven(bundled)):
        got = result.differences()
        assert not got.empty
        pd.testing.assert_frame_equal(got, reference_differences(result), check_exact=True)


def test_bootstraps_on_threads_equal_the_plain_loop(
    bundled: EvalResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results, "_threads", lambda: 4)
    threaded = (bundled.summary(), bundled.summary(by=["dataset"]), bundled.differences())
    monkeypatch.setattr(results, "_threads", lambda: 1)
    plain = (bundled.summary(), bundled.summary(by=["dataset"]), bundled.differences())
    for a, b in zip(threaded, plain, strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_in_threads_keeps_the_order_and_raises_what_a_call_raised() -> None:
    assert results.in_threads(lambda x: x * x, list(range(50))) == [x * x for x in range(50)]

    def fails(x: int) -> int:
        if x == 7:
            raise ValueError("seven")
        return x

    with pytest.raises(ValueError, match="seven"):
        results.in_threads(fails, list(range(20)))


def test_np_take_gathers_what_indexing_gathers() -> None:
    rng = np.random.default_rng(3)
    values = rng.random(101)
    draws = rng.integers(0, 101, size=(40, 101))
    assert np.array_equal(np.take(values, draws).sum(axis=1), values[draws].sum(axis=1))


# --- the tables ----------------------------------------------------------------------------


def tricky_frame() -> pd.DataFrame:
    floats = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-7, 123456789.0, 0.1 + 0.2, 1 / 3, 2.5]
    return pd.DataFrame(
        {
            "f": floats,
            "f32": np.arange(10, dtype=np.float32) / 3,
            "s": pd.array(["a", None, "b,c", 'q"x', "", "two\nlines", "é", " ", "nan", "x"]),
            "o": [None, 1, "x", True, np.nan, 2.5, "", "a,b", pd.NA, 1 / 3],
            "i": range(10),
            "b": [True, False] * 5,
            "I": pd.array([1, None] * 5, dtype="Int64"),
        }
    )


def _csv(frame: pd.DataFrame) -> str:
    sink = io.StringIO(newline="")
    write_csv_rows(frame, sink)
    return sink.getvalue()


def test_the_csv_writer_writes_what_pandas_writes(bundled: EvalResult) -> None:
    frames = {
        "tricky": tricky_frame(),
        "one column": pd.DataFrame({"x": ["", "a", None]}),
        "no rows": bundled.scores.head(0),
        "scores": bundled.scores,
        "cases": bundled.to_pandas("case"),
        "statements": bundled.to_pandas("statement"),
        "citations": bundled.to_pandas("citation"),
        "summary": bundled.summary(),
        "differences": bundled.differences(),
    }
    for name, frame in frames.items():
        assert _csv(frame) == frame.to_csv(index=False, float_format="%.6g"), name


def test_parquet_tables_hold_object_columns_as_text(tmp_path: Path) -> None:
    frame = tricky_frame()
    _write_parquet(frame, tmp_path / "t.parquet")
    back = pd.read_parquet(tmp_path / "t.parquet")
    expected = [None if _missing(v) else str(v) for v in frame["o"]]
    assert [None if _missing(v) else v for v in back["o"]] == expected
    pd.testing.assert_series_equal(back["f"], frame["f"])


def test_written_outputs_equal_the_plain_computations(bundled: EvalResult, tmp_path: Path) -> None:
    suite = load_suite("default")
    findings, gates = suite.findings, suite.gates
    written = write_outputs(bundled, tmp_path, findings, title="plain", gates=gates)
    assert list(written) == [
        name
        for table in (
            "summary", "differences", "corrected", "usage",
            "scores", "cases", "statements", "citations",
        )
        for name in (f"{table}.csv", f"{table}.parquet")
    ] + [  # the default suite has a perturbing model: the judge's agreement on its faults
        "fault_agreement.csv", "fault_agreement.parquet", "gold.json", "run.json", "report.html"
    ]  # fmt: skip
    plain = {
        "fault_agreement": fault_agreement(bundled),
        "summary": bundled.summary(),
        "differences": bundled.differences(),
        "corrected": bundled.corrected(),
        "usage": bundled.usage(),
        "scores": bundled.scores,
        "cases": bundled.to_pandas("case"),
        "statements": bundled.to_pandas("statement"),
        "citations": bundled.to_pandas("citation"),
    }
    for name, frame in plain.items():
        text = (tmp_path / f"{name}.csv").read_text(encoding="utf-8")
        assert text == frame.to_csv(index=False, float_format="%.6g"), name
    run_json = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert [row["measure"] for row in run_json["fault_agreement"]] == [
        "sensitivity",
        "specificity",
    ]
    # The report: the statistics, findings, plots and case browser each computed the
    # plain way (render_html alone, findings checked one by one).
    checked = evaluate_findings(bundled, findings)
    gated = [*evaluate_gates(bundled, gates), *required_findings(checked)]
    page = render_html(bundled, checked, "plain", gates=gated)
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == page
