"""Shared builders for the evals tests: records and messages from a few words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from citelab.contract import CITATIONS_KEY
from citelab.evals.records import RoundRecord, SourceRecord, TurnRecord

PAGES = {
    "fees": ("Fees", "Tuition fees are due in May. Late payment costs a fee of 50 euros."),
    "library": ("Library", "The library opens at 8 am on weekdays."),
    "fees-copy": ("Fees again", "Tuition fees are due in May."),
    "parking": ("Parking", "Parking permits cost 30 euros per term."),
}


def source(number: int, page: str) -> SourceRecord:
    title, content = PAGES[page]
    return SourceRecord(number=number, uri=f"entity:page/{page}", title=title, content=content)


def message(
    text: str, sources: Sequence[SourceRecord], anchors: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if anchors:
        block["_meta"] = {CITATIONS_KEY: list(anchors)}
    links = [
        {
            "type": "resource_link",
            "uri": s.uri,
            "name": s.title,
            "annotations": {"audience": ["user"], "priority": (len(sources) - i) / len(sources)},
        }
        for i, s in enumerate(sources)
    ]
    return {"role": "assistant", "content": [block, *links]}


def record(
    text: str,
    pages: Sequence[str] = ("fees", "library"),
    *,
    raw_text: str | None = None,
    candidates: Sequence[str] | None = None,
    rounds: Sequence[RoundRecord] = (),
    mapping: dict[int, int] | None = None,
    anchors: Sequence[dict[str, Any]] = (),
    **fields: Any,
) -> TurnRecord:
    """A turn whose final sources are ``pages`` numbered 1..k (held the same unless told)."""
    final = [source(i, page) for i, page in enumerate(pages, start=1)]
    held = (
        final
        if candidates is None
        else [source(i, page) for i, page in enumerate(candidates, start=1)]
    )
    if mapping is None:
        mapping = {s.number: s.number for s in held if s.uri in {f.uri for f in final}}
    return TurnRecord(
        text=text,
        raw_text=text if raw_text is None else raw_text,
        sources=final,
        candidates=held,
        message=message(text, final, anchors),
        rounds=list(rounds),
        mapping=mapping,
        **fields,
    )
