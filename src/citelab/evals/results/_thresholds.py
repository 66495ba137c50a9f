"""How a threshold is written, for findings and gates alike: ``min = 0.9`` and/or ``max = 0.1``.

One spelling for every bound a suite states (why: the README's "Gates for CI"): two numbers
a TOML or YAML parser reads as numbers, inclusive, both at once for a range. Findings and
gates check their values with :func:`within`; the spellings citelab read before
(``expect = "at_least"`` / ``"at_most"`` with ``threshold``, ``check = "m >= 0.9"``) are
refused by :func:`refuse_old_spellings` with the line to write instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["refuse_old_spellings", "within"]

_CHECK = re.compile(r"^\s*(?P<metric>[A-Za-z_][\w.]*)\s*(?P<op>>=|<=|>|<|==|=)\s*(?P<num>\S+)\s*$")
_OLD_EXPECT = {"at_least": "min", "at_most": "max"}


def within(low: float, high: float, minimum: float | None, maximum: float | None) -> bool:
    """Whether ``low`` is at least ``minimum`` and ``high`` at most ``maximum`` (None: no
    bound). ``low`` and ``high`` are the same number unless an interval's ends are checked."""
    return (minimum is None or low >= minimum) and (maximum is None or high <= maximum)


def refuse_old_spellings(data: Any) -> None:
    """Raise ``ValueError`` naming the new form when ``data`` (a finding's or a gate's
    mapping) states its bound the old way."""
    if not isinstance(data, Mapping):
        return
    if "check" in data:
        text = data["check"]
        raise ValueError(f"check = {text!r} is no longer read: write {_check_instead(text)}")
    expect = data.get("expect")
    if expect in _OLD_EXPECT or "threshold" in data:
        raise ValueError(f"{_old_words(data)} is no longer read: write {_bound_instead(data)}")


def _old_words(data: Mapping[str, Any]) -> str:
    expect = data.get("expect")
    words = [f'expect = "{expect}"'] if expect in _OLD_EXPECT else []
    words += [f"threshold = {data['threshold']!r}"] if "threshold" in data else []
    return " with ".join(words)


def _bound_instead(data: Mapping[str, Any]) -> str:
    number = repr(data["threshold"]) if "threshold" in data else "<number>"
    key = _OLD_EXPECT.get(str(data.get("expect")))
    if key is None:
        return f"min = {number} (at least) or max = {number} (at most)"
    return f"{key} = {number}, without expect (expect is for comparisons)"


def _check_instead(text: Any) -> str:
    match = _CHECK.match(text) if isinstance(text, str) else None
    if match is None or match["op"] not in (">=", "<="):
        return 'metric = "<metric>" with min = <number> (at least) or max = <number> (at most)'
    key = "min" if match["op"] == ">=" else "max"
    return f'metric = "{match["metric"]}" and {key} = {match["num"]}'
