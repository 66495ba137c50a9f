"""Every table of the report and the judge card comes from the one table builder, and a
hostile variant, model, judge, category or reference name (markup, a quote that would end an
attribute) reaches each of them escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from citelab.evals import (
    Case,
    CaseRecord,
    GoldTurn,
    Reference,
    build_scorers,
    judge_card,
    score_records,
)
from citelab.evals.records import RoundRecord
from citelab.evals.report import render_html
from citelab.evals.report._judges import corrected_html, faults_html, judges_html, labelled_html
from citelab.evals.results import FAULT_COLUMNS, JudgedMetric

from .._builders import record

REPORT = Path(__file__).parents[3] / "src" / "citelab" / "evals" / "report"

EVIL = '<script>alert("x")</script>'
ESCAPED = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
ATTR = '" onmouseover="alert(1)'
"""Would end a ``title="…"`` and add an attribute if it were not escaped."""
ATTR_ESCAPED = "&quot; onmouseover=&quot;alert(1)"

FILE = '" onmouseover="x <b>'
FILE_ESCAPED = "&quot; onmouseover=&quot;x &lt;b&gt;"

_MARKUP = re.compile(r"<(table|tr|td|th)\b")


def test_no_table_markup_is_written_outside_the_builder() -> None:
    sources = sorted(REPORT.glob("*.py"))
    assert len(sources) > 5, f"no report sources found under {REPORT}"
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sources
        if path.name != "_html.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _MARKUP.search(line)
    ]
    assert found == [], "tables are built with citelab.evals.report._html.table:\n" + "\n".join(
        found
    )


def _tables(page: str, header: str) -> list[str]:
    """The page's tables whose first row names ``header``."""
    tables = re.findall(r"<table\b.*?</table>", page, re.S)
    chosen = [t for t in tables if header in t.split("</tr>", 1)[0]]
    assert chosen, f"no table headed {header!r}"
    return chosen


def _assert_escaped(page: str) -> None:
    assert EVIL not in page
    assert "<script>" not in page
    assert ATTR not in page
    assert 'onmouseover="' not in page


def _hostile_result() -> Any:
    fees, parking = "entity:page/fees", "entity:page/parking"
    text = "Tuition fees are due in May [1]. Permits cost 30 euros per term [2]."
    cases = {("d", f"c{i}"): Case(id=f"c{i}", turns=[GoldTurn(question="q")]) for i in range(6)}
    records = []
    for i in range(6):
        for variant, second in (("baseline", {1: fees, 2: parking}), (EVIL, {1: parking, 2: fees})):
            rounds = [
                RoundRecord(index=0, visible={1: fees}, searches=1),
                RoundRecord(index=1, text=text, visible=second),
            ]
            turn = record(text, ("fees", "parking"), rounds=rounds, question="q")
            records.append(
                CaseRecord(
                    key=f"{variant}{i}",
                    variant=variant,
                    model=EVIL + "'",
                    dataset="d",
                    case_id=f"c{i}",
                    turns=[turn],
                )
            )
    scorers = build_scorers(["citation_recall", "numbering_stability"])
    config = {"variants": {EVIL: {"description": ATTR}}}
    return score_records(records, cases, scorers, config=config, seed=1)


def test_the_report_tables_escape_variant_and_model_names_and_descriptions() -> None:
    page = render_html(_hostile_result(), [], EVIL)
    _assert_escaped(page)
    # The summaries (overall and by dataset): the variant · model header, its description
    # in the header's title attribute.
    summaries = _tables(page, "metric")
    headed = [t for t in summaries if f'title="{ATTR_ESCAPED}"' in t]
    assert len(headed) == 2  # overall and by dataset
    assert all(ESCAPED in t for t in headed)
    assert any(t.startswith("<table><tr><th>dataset</th>") for t in headed)
    # The differences from the baseline: the variant · model header.
    differences = [t for t in summaries if t not in headed and "units · " in t]
    assert differences
    assert all(ESCAPED in t.split("</tr>", 1)[0] for t in differences)
    # Numbering stability per round: a row per variant and model.
    (stability,) = _tables(page, "stability")
    assert f"{ESCAPED}</td><td>{ESCAPED}&#x27;</td>" in stability
    # Judged and corrected: the "variant · model" cell.
    corrected = [t for t in _tables(page, "variant · model") if "as judged" in t]
    assert corrected
    assert f"<td>{ESCAPED} · {ESCAPED}&#x27;</td>" in corrected[0]


def test_the_judge_sections_escape_every_name() -> None:
    judge = JudgedMetric(metric=EVIL, judge=EVIL, judge_config={}, card=EVIL, card_source=ATTR,
                         kappa=0.5, kappa_low=0.4, kappa_high=0.6, weak_categories=[EVIL],
                         warnings=[ATTR])  # fmt: skip
    page = judges_html([judge])
    _assert_escaped(page)
    (table,) = _tables(page, "agreement with people")
    assert f"<td>{ESCAPED}</td><td>{ESCAPED}</td><td>{ESCAPED} " in table
    assert f"({ATTR_ESCAPED})" in table
    assert table.endswith(f"<td>{ESCAPED}</td></tr></table>")  # the weak categories

    page = faults_html(_fault_rows())
    _assert_escaped(page)
    (table,) = _tables(page, "on injected faults")
    assert table.count(f"<td>{ESCAPED} · perturbed</td><td>{ESCAPED}</td>") == 2
    assert table.count(f"<td>{ATTR_ESCAPED}</td></tr>") == 2

    corrected = _corrected_rows()
    page = corrected_html(corrected, [judge], suite=EVIL) + labelled_html(corrected)
    _assert_escaped(page)
    (judged,) = _tables(page, "as judged")
    (labelled,) = _tables(page, "estimate")
    for table in (judged, labelled):
        assert f"<td>{ESCAPED} · {ESCAPED}</td><td>citation_recall</td>" in table
    assert f"<td>{ESCAPED}</td>" in judged  # the judge
    assert labelled.endswith(f"<td>{ATTR_ESCAPED}</td></tr></table>")  # the note


def _fault_rows() -> pd.DataFrame:
    """Rows as ``fault_agreement`` gives them: sensitivity and specificity of one judge."""
    shared = {"variant": EVIL, "model": "perturbed", "judge": EVIL, "ci_low": 0.4,
              "ci_high": 0.6, "agreed": 30, "units": 60, "too_few": False, "card_value": 0.7,
              "card_low": 0.6, "card_high": 0.8, "card": ATTR}  # fmt: skip
    rows = [
        {**shared, "measure": measure, "value": 0.5} for measure in ("sensitivity", "specificity")
    ]
    frame = pd.DataFrame(rows)
    assert sorted(frame.columns) == sorted(FAULT_COLUMNS)
    return frame[FAULT_COLUMNS]


def _corrected_rows() -> pd.DataFrame:
    """Rows as ``EvalResult.corrected`` gives them: judged, card and labels, one metric."""
    shared = {"variant": EVIL, "model": EVIL, "metric": "citation_recall", "judge": EVIL,
              "ci_low": 0.5, "ci_high": 0.7, "card": "c", "sensitivity": 0.9,
              "specificity": 0.8, "judged_share": 1.0, "clipped": False, "labels": 40,
              "too_few": False, "width": 0.2, "note": ATTR}  # fmt: skip
    return pd.DataFrame(
        [
            {**shared, "method": "judged", "value": 0.6},
            {**shared, "method": "card", "value": 0.55},
            {**shared, "method": "labels", "value": 0.58},
        ]
    )


class _Hostile:
    """A judge whose name is markup."""

    name = EVIL

    def supports(self, statement: str, evidence: str) -> bool:
        return len(statement) % 2 == 0

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def test_the_card_tables_escape_label_set_category_judge_and_reference_names(
    tmp_path: Path,
) -> None:
    labels = tmp_path / f"{FILE}.jsonl"  # a file name can hold markup too (not a "/")
    rows = [
        {"id": f"p{i}", "claim": "x" * (i + 1), "evidence": ["e"], "label": i % 3 == 0,
         "category": EVIL if i % 2 else ATTR}
        for i in range(12)
    ]  # fmt: skip
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    outputs = tmp_path / f"{FILE}.json"
    outputs.write_text(json.dumps({f"p{i}": i / 12 for i in range(12)}), encoding="utf-8")
    card = judge_card(labels, _Hostile(), references=[Reference.load(EVIL, outputs)], resamples=20)
    page = card.to_html()
    _assert_escaped(page)
    assert FILE not in page
    (about,) = re.findall(r'<table class="about">.*?</table>', page)
    assert f"<tr><th>label set</th><td>{FILE_ESCAPED}" in about
    (categories,) = _tables(page, "category")
    assert f"<td>{ESCAPED}</td>" in categories
    assert f"<td>{ATTR_ESCAPED}</td>" in categories
    (references,) = _tables(page, "<th>judge</th><th>claims</th>")
    assert f"<td>{ESCAPED} (all claims)</td>" in references  # the judge
    assert f"<td>{ESCAPED} (published outputs, yes at ≥ 0.5)</td>" in references
    note = f'<td colspan="9" class="note">κ difference ({ESCAPED} − {ESCAPED}):'
    assert note in references
    assert f"outputs from {FILE_ESCAPED}.json, 0 of their ids" in references
