"""The case browser's data: what a report carries for ``js/report/`` to show its cases.

This is the one schema of that data: :mod:`citelab.evals.report._case_browser` builds it
(``case_browser_data``), ``js/report/data.js`` mirrors it in JSDoc typedefs of the same names
(a test checks that each names the same keys), and pydantic validates it
(``TypeAdapter(ReportData)``: no key missing, none other, each of its type).

Keys that repeat per turn are short: a 10,000-turn report carries them once per turn. Sources
and long texts are stored once, in tables that entries point into by index. In the page, each
entry's :data:`LIST_KEYS` go into the list's JSON document and the rest of it into the
compressed details, read when the turn is opened.
"""

from __future__ import annotations

from typing import Any, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic reads this one on Python 3.11

__all__ = [
    "LIST_KEYS",
    "CaseEntry",
    "Gold",
    "Metric",
    "ReportData",
    "Round",
    "Variant",
]

_CLOSED = ConfigDict(extra="forbid")

NumberedSource = tuple[int, int]
"""``[number, index]``: the number the turn showed or gave, and the source's index into
:attr:`ReportData.sources`."""


@with_config(_CLOSED)
class Variant(TypedDict):
    """One variant of the run, in the report's order."""

    name: str
    description: str
    """What the suite says of it (``""`` when nothing)."""
    color: str
    """Its colour in every plot, table and list of the report (``#rrggbb``)."""


@with_config(_CLOSED)
class Metric(TypedDict):
    """One metric the run scored (a scorer's ``metric``)."""

    name: str
    higher: bool
    """A higher value is better."""


@with_config(_CLOSED)
class Gold(TypedDict, total=False):
    """What the dataset expects of the turn (empty when the case is unknown)."""

    expect: bool
    """An answer is expected (``False``: the no-answer message is)."""
    claims: list[tuple[str, list[str]]]
    """``[claim, [uri, ...]]``: each gold claim and the entities that support it."""
    must_cite: list[str]
    must_not_cite: list[str]
    min_searches: int


@with_config(_CLOSED)
class Round(TypedDict):
    """One round of the agent loop."""

    text: str
    """What the model wrote in the round."""
    visible: list[NumberedSource]
    """The sources the model could see, under the numbers it saw."""
    searches: int
    added: list[NumberedSource]
    """The sources the round's searches added."""


@with_config(_CLOSED)
class CaseEntry(TypedDict):
    """One scored turn: the list's keys (:data:`LIST_KEYS`), then its details."""

    v: int
    """Variant: an index into :attr:`ReportData.variants`."""
    m: str
    """Model."""
    d: str
    """Dataset."""
    c: str
    """Case id."""
    t: int
    """Turn index in the case."""
    q: str
    """Question."""
    e: str | None
    """Why the turn failed or could not be read (``None`` when it did not)."""
    fail: list[str]
    """The metrics whose value is not the best possible for this turn."""
    diff: NotRequired[bool]
    """Its scores or answer differ from the baseline's same turn (absent: no baseline)."""
    na: bool
    """The answer is the no-answer message."""
    fs: int
    """Searches the service forced before the model's first round."""
    msg: dict[str, Any] | None
    """The AnswerMessage in its wire shape (the front end renders it, cited spans marked)."""
    held: list[NumberedSource]
    """The sources the turn held, under their held numbers."""
    cited: list[NumberedSource]
    """The final sources (the cited ones), under their final numbers."""
    g: Gold
    s: dict[str, tuple[float | None, float, float]]
    """Per metric: ``[value, numerator, denominator]`` (value ``None``: not applicable)."""
    r: dict[str, list[dict[str, Any]]]
    """Per metric: the scorer's detail rows (its reasons), their present fields only; a long
    string in them is ``[i]``, the i-th entry of :attr:`ReportData.texts`."""
    rounds: list[Round]


@with_config(_CLOSED)
class ReportData(TypedDict):
    """Everything the case browser of one report shows."""

    variants: list[Variant]
    baseline: str | None
    """The variant differences are taken against (``None`` when nothing ran)."""
    metrics: list[Metric]
    sources: list[tuple[str, str, str]]
    """``[uri, title, content]``: each distinct source once; entries refer to it by index."""
    texts: list[str]
    """Long strings of the reasons, once each."""
    cases: list[CaseEntry]


LIST_KEYS = ("v", "m", "d", "c", "t", "q", "e", "fail", "diff")
"""What the list needs of an entry; the rest of it is read only when the turn is opened."""
