"""The report's "Judged and corrected" section shows no number that means nothing (#32,
item 2): a clipped correction (the judged value lies outside what the card's rates can
produce) reads "— the card does not fit these answers" with the step that fixes it, never a
bold figure; a zero-width corrected interval is no figure either."""

from __future__ import annotations

import math
import re

import pandas as pd

from citelab.evals.report._judges import DOES_NOT_FIT, corrected_cell, corrected_html

NAN = math.nan


def _row(**changes: object) -> dict[str, object]:
    row: dict[str, object] = {
        "variant": "baseline", "model": "extractive", "metric": "citation_precision",
        "judge": "lexical_trained (threshold=0.412513)", "value": 0.975, "ci_low": 0.932,
        "ci_high": 1.0, "corrected": 1.0, "corrected_low": 1.0, "corrected_high": 1.0,
        "judged_share": 1.0, "sensitivity": 0.70, "specificity": 0.78, "clipped": True,
        "card": "lexical_trained on 349 claims of WiCE",
    }  # fmt: skip
    row.update(changes)
    return row


def test_a_clipped_correction_is_no_figure_and_says_how_to_fix_it() -> None:
    clipped = _row()
    fits = _row(metric="citation_recall", corrected=0.9, corrected_low=0.85,
                corrected_high=0.95, clipped=False)  # fmt: skip
    page = corrected_html(pd.DataFrame([clipped, fits]), [], suite="default")
    assert "1.000 [1.000, 1.000]" not in page  # the demo's corrected precision everywhere
    assert DOES_NOT_FIT in page
    assert not re.search(r"<b>\d\.\d{3}", page)  # no bold number
    assert "0.900 [0.850, 0.950]" in page  # a correction that fits is shown, plainly
    assert "1 of 2 corrections: the card does not fit these answers" in page
    assert "label 100 of this run&#x27;s pairs" in page
    assert "citelab.Labeller(&quot;evaluations/reports/default&quot;" in page
    assert "citelab eval --suite default --rescore --labels labels.jsonl" in page


def test_a_zero_width_corrected_interval_says_too_few_units() -> None:
    assert corrected_cell(_row(clipped=False)) == "— too few units (a zero-width interval)"
    assert corrected_cell(_row(clipped=False, card=None, corrected=NAN)).startswith("— (the judge")


def test_marks_have_one_meaning_and_the_judges_say_agreement_varies_by_domain() -> None:
    from citelab.evals.report._judges import DOMAIN_LINE, WARNING_MARK, judge_line, judges_html
    from citelab.evals.results import JudgedMetric

    judge = JudgedMetric(
        metric="citation_recall_alce", judge="lexical_trained", judge_config={}, card="c",
        card_source="shipped", kappa=0.46, warnings=["NOT COMPARABLE: not ALCE's judge"],
    )  # fmt: skip
    # ⚠ means "few units" only; a judge's warning has its own mark.
    assert "⚠" not in judge_line(judge)
    assert WARNING_MARK in judge_line(judge)
    section = judges_html([judge])
    assert "⚠" not in section
    assert "Agreement varies by domain" in section
    assert "label 100 of its pairs" in section
    assert "κ 0.15, 0.44 and 0.59" in DOMAIN_LINE
    assert "κ ≈ 0.20 / 0.44 / 0.67" in DOMAIN_LINE
    assert "Agreement varies by domain" not in judges_html([judge], has_labels=True)
