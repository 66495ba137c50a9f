"""The case browser's data has one schema (``evals/report/_case_data.py``): a real report's
data holds to it, and ``js/report/data.js`` names the same keys in typedefs of the same names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from pydantic import TypeAdapter, ValidationError

from citelab.evals.report._case_browser import case_browser_data, case_browser_parts, unpack_details
from citelab.evals.report._case_data import (
    LIST_KEYS,
    CaseEntry,
    Gold,
    Metric,
    ReportData,
    Round,
    Variant,
)

from .test_report import _result

ROOT = Path(__file__).resolve().parents[3]
DATA_JS = ROOT / "js" / "report" / "data.js"
FIXTURE = ROOT / "js" / "tests" / "report" / "report_data.json"
"""A report's data as the front end's tests read it; rewritten by running this module
(``python -m tests.evals.report.test_case_data``) when the data changes."""
SCHEMA = [ReportData, Variant, Metric, CaseEntry, Gold, Round]
ADAPTER: TypeAdapter[ReportData] = TypeAdapter(ReportData)


def typedef_keys(name: str) -> set[str]:
    """The ``@property`` names of ``@typedef {object} <name>`` in data.js."""
    text = DATA_JS.read_text(encoding="utf-8")
    found = re.search(rf"@typedef \{{object\}} {name}\n(.*?)\*/", text, re.S)
    assert found is not None, f"data.js declares no object typedef {name}"
    return set(re.findall(r"@property\s+\{.*?\}\s+\[?(\w+)", found.group(1)))


@pytest.mark.parametrize("schema", SCHEMA, ids=[s.__name__ for s in SCHEMA])
def test_the_front_end_names_the_keys_python_writes(schema: type) -> None:
    assert typedef_keys(schema.__name__) == set(get_type_hints(schema))


def test_the_parser_sees_a_missing_typedef_and_its_keys() -> None:
    assert {"v", "q", "rounds"} <= typedef_keys("CaseEntry")
    with pytest.raises(AssertionError, match="declares no object typedef Nothing"):
        typedef_keys("Nothing")


def test_a_reports_data_holds_to_the_schema() -> None:
    data = case_browser_data(_result())
    ADAPTER.validate_python(data)
    assert all(set(entry) == set(get_type_hints(CaseEntry)) for entry in data["cases"])
    with pytest.raises(ValidationError, match="note"):
        ADAPTER.validate_python({**data, "variants": [{**data["variants"][0], "note": ""}]})
    with pytest.raises(ValidationError, match=r"cases\.0\.s"):
        ADAPTER.validate_python({**data, "cases": [{**data["cases"][0], "s": {"m": [1]}}]})


def test_the_page_splits_each_entry_into_its_list_keys_and_its_details() -> None:
    browser, details = case_browser_parts(_result())
    listed: dict[str, Any] = json.loads(
        browser.split('id="citelab-cases-data">', 1)[1].split("</script>", 1)[0]
    )
    lines = unpack_details(details.split(">", 1)[1].rsplit("</script>", 1)[0])
    assert len(lines) == len(listed["cases"])
    for entry, line in zip(listed["cases"], lines, strict=True):
        assert list(entry) == list(LIST_KEYS)
        whole = {**entry, **json.loads(line)}
        assert set(whole) == set(get_type_hints(CaseEntry))
    ADAPTER.validate_python(
        {
            **listed,
            "cases": [
                {**e, **json.loads(line)} for e, line in zip(listed["cases"], lines, strict=True)
            ],
        }
    )


def fixture_text() -> str:
    return json.dumps(case_browser_data(_result()), indent=1, ensure_ascii=False) + "\n"


def test_the_front_ends_fixture_is_what_a_report_writes_now() -> None:
    committed = FIXTURE.read_text(encoding="utf-8")
    ADAPTER.validate_json(committed)
    assert committed == fixture_text(), (
        f"{FIXTURE.name} is not the data a report writes now: "
        "rewrite it with python -m tests.evals.report.test_case_data"
    )


if __name__ == "__main__":
    FIXTURE.write_text(fixture_text(), encoding="utf-8")
