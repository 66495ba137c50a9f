"""The case browser: every scored turn of a result, for ``js/report/`` to show.

``case_browser_data(result)`` returns its data, a :class:`ReportData` (the schema, every key
documented, is :mod:`citelab.evals.report._case_data`): the variants, the baseline, the
metrics, a table of sources and one entry per turn with its question, error, AnswerMessage,
held and cited sources, gold, scores, reasons, rounds, the metrics it missed and whether it
differs from the baseline.

``case_browser_parts(result)`` is the browser as HTML fragments: the mount point, the list's
data (``<`` written as ``\\u003c``, so no string in it can close the script element) and the
bundled script, inline (a report is one file and makes no request); then the details. The
list's fields are one JSON document; the rest of each entry is one JSON line, and the lines
are stored in gzip-compressed blocks of ``DETAIL_BLOCK`` lines, base64 text one block a line
(a big report's details shrink several times, and parsing the page's bytes was what its
opening time was made of: see docs/performance.md). The browser decompresses a block, with
its built-in ``DecompressionStream``, when a turn in it is first opened.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from citelab.evals.records import SourceRecord, TurnRecord
from citelab.evals.report._case_data import LIST_KEYS, CaseEntry, Gold, ReportData, Round
from citelab.evals.report._colors import variant_colors, variant_order
from citelab.evals.results import EvalResult

__all__ = [
    "DETAIL_BLOCK",
    "LIST_KEYS",
    "case_browser_data",
    "case_browser_parts",
    "inline_script",
    "pack_details",
    "static_text",
    "unpack_details",
]

_DETAIL_KEYS = {"variant", "model", "dataset", "case_id", "turn", "metric"}


def case_browser_data(result: EvalResult) -> ReportData:
    """See the module docs."""
    variants = variant_order(result)
    colors = variant_colors(variants)
    configured = result.config.get("variants") or {}
    better = {s.metric: s.higher_is_better for s in result.scorers}
    sources = _SourceTable()
    texts = _TextTable()
    scores = _scores_by_turn(result.scores)
    reasons = _reasons_by_turn(result.details, texts)
    index = {name: i for i, name in enumerate(variants)}
    entries: list[CaseEntry] = []
    for record in result.records:
        case = result.cases.get((record.dataset, record.case_id))
        for turn in record.turns:
            key = (record.variant, record.model, record.dataset, record.case_id, turn.turn)
            gold = (
                case.turns[turn.turn] if case is not None and turn.turn < len(case.turns) else None
            )
            turn_scores = scores.get(key, {})
            entries.append(
                {
                    "v": index.get(record.variant, 0),
                    "m": record.model,
                    "d": record.dataset,
                    "c": record.case_id,
                    "t": turn.turn,
                    "q": turn.question,
                    "e": turn.error,
                    "na": turn.no_answer,
                    "msg": turn.message or None,
                    "held": [(s.number, sources.add(s)) for s in turn.candidates],
                    "cited": [(s.number, sources.add(s)) for s in turn.sources],
                    "g": _gold(gold),
                    "s": turn_scores,
                    "r": reasons.get(key, {}),
                    "fs": turn.forced_searches,
                    "rounds": _rounds(turn, sources),
                    "fail": _failed(turn_scores, better),
                }
            )
    baseline = result.baseline()
    _mark_differences(entries, index.get(baseline) if baseline is not None else None)
    return {
        "variants": [
            {
                "name": name,
                "description": str((configured.get(name) or {}).get("description") or ""),
                "color": colors[name],
            }
            for name in variants
        ],
        "baseline": baseline,
        "metrics": [{"name": s.metric, "higher": s.higher_is_better} for s in result.scorers],
        "sources": sources.rows,
        "texts": texts.rows,
        "cases": entries,
    }


class _SourceTable:
    """Each distinct (uri, title, content) once; entries refer to it by index."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str]] = []
        self._index: dict[tuple[str, str, str], int] = {}

    def add(self, source: SourceRecord) -> int:
        key = (source.uri, source.title, source.content)
        if key not in self._index:
            self._index[key] = len(self.rows)
            self.rows.append(key)
        return self._index[key]

    def by_uri(self, uri: str, turn: TurnRecord) -> int:
        for source in (*turn.candidates, *turn.seen):
            if source.uri == uri:
                return self.add(source)
        return self.add(SourceRecord(number=0, uri=uri))


class _TextTable:
    """Long strings of the reasons once (a statement is quoted by several scorers and
    variants); a reason refers to one as ``[index]``."""

    LONG = 24

    def __init__(self) -> None:
        self.rows: list[str] = []
        self._index: dict[str, int] = {}

    def ref(self, value: Any) -> Any:
        if not isinstance(value, str) or len(value) < self.LONG:
            return value
        if value not in self._index:
            self._index[value] = len(self.rows)
            self.rows.append(value)
        return [self._index[value]]

    def refs(self, values: Sequence[str]) -> list[list[int]]:
        """:meth:`ref` of each of ``values`` (all long strings), in order."""
        index, rows = self._index, self.rows
        out = []
        for value in values:
            found = index.get(value)
            if found is None:
                found = index[value] = len(rows)
                rows.append(value)
            out.append([found])
        return out


def _rounds(turn: TurnRecord, sources: _SourceTable) -> list[Round]:
    return [
        {
            "text": r.text,
            "visible": [(n, sources.by_uri(uri, turn)) for n, uri in sorted(r.visible.items())],
            "searches": r.searches,
            "added": [(n, sources.by_uri(uri, turn)) for n, uri in sorted(r.added.items())],
        }
        for r in turn.rounds
    ]


def _gold(gold: Any) -> Gold:
    if gold is None:
        return {}
    return {
        "expect": gold.expect_answer,
        "claims": [(claim.text, list(claim.supported_by)) for claim in gold.claims],
        "must_cite": list(gold.must_cite),
        "must_not_cite": list(gold.must_not_cite),
        "min_searches": gold.min_searches,
    }


_Key = tuple[str, str, str, str, int]


def _turn_keys(frame: pd.DataFrame) -> list[_Key]:
    """Each row's (variant, model, dataset, case_id, turn), read column by column."""
    return list(
        zip(
            *(_strings(frame[column]) for column in _KEY_COLUMNS[:-1]),
            frame["turn"].astype(int).tolist(),
            strict=True,
        )
    )


def _strings(column: pd.Series) -> list[str]:
    """The column's values as ``str`` (as ``str(value)`` gives them)."""
    if isinstance(column.dtype, pd.StringDtype) and not column.hasnans:
        return list(column.tolist())
    return list(column.astype(str).tolist())


_KEY_COLUMNS = ("variant", "model", "dataset", "case_id", "turn")


_Scores = dict[str, tuple[float | None, float, float]]


def _scores_by_turn(scores: pd.DataFrame) -> dict[_Key, _Scores]:
    out: dict[_Key, _Scores] = {}
    if scores.empty:
        return out
    cells = zip(
        _turn_keys(scores),
        _strings(scores["metric"]),
        [None if math.isnan(v) else v for v in scores["value"].astype(float).tolist()],
        scores["numerator"].astype(float).tolist(),
        scores["denominator"].astype(float).tolist(),
        strict=True,
    )
    for key, metric, value, numerator, denominator in cells:
        out.setdefault(key, {})[metric] = (value, numerator, denominator)
    return out


def _reasons_by_turn(
    details: Mapping[str, pd.DataFrame], texts: _TextTable
) -> dict[_Key, dict[str, list[Any]]]:
    """Per turn and metric, each detail row's present fields (not missing, not ``""``).

    Read column by column (a big run has hundreds of thousands of detail rows): each
    column's present values are put in their rows' reasons, in the columns' order, and the
    long strings then go to ``texts`` in row order, as one reason after the other."""
    out: dict[_Key, dict[str, list[Any]]] = {}
    for frame in details.values():
        if frame.empty:
            continue
        reasons: list[dict[str, Any]] = [{} for _ in range(len(frame))]
        fields = [str(c) for c in frame.columns if c not in _DETAIL_KEYS]
        long_rows: list[np.ndarray] = []
        long_fields: list[np.ndarray] = []
        for position, name in enumerate(fields):
            column = frame[name]
            present = column.notna().to_numpy(dtype=bool)
            textual = column.dtype == object or pd.api.types.is_string_dtype(column.dtype)
            if textual:
                present = present & (column != "").to_numpy(dtype=bool, na_value=False)
            rows = np.flatnonzero(present)
            if rows.size == 0:
                continue
            picked = column.iloc[rows].tolist()
            if column.dtype == object:  # may hold numpy scalars
                picked = [_plain(v) for v in picked]
            for row, value in zip(rows.tolist(), picked, strict=True):
                reasons[row][name] = value
            long = (
                [
                    i
                    for i, value in enumerate(picked)
                    if isinstance(value, str) and len(value) >= texts.LONG
                ]
                if textual
                else []
            )
            if long:
                long_rows.append(rows[long])
                long_fields.append(np.full(len(long), position))
        if long_rows:
            at, where = np.concatenate(long_rows), np.concatenate(long_fields)
            order = np.lexsort((where, at))
            cells = [
                (reasons[row], fields[position])
                for row, position in zip(at[order].tolist(), where[order].tolist(), strict=True)
            ]
            refs = texts.refs([reason[name] for reason, name in cells])
            for (reason, name), ref in zip(cells, refs, strict=True):
                reason[name] = ref
        for key, metric, reason in zip(
            _turn_keys(frame), _strings(frame["metric"]), reasons, strict=True
        ):
            out.setdefault(key, {}).setdefault(metric, []).append(reason)
    return out


def _failed(scores: _Scores, better: Mapping[str, bool]) -> list[str]:
    """The metrics whose value is not the best possible (1 up, 0 down) for this turn."""
    failed = []
    for metric, (value, _, _) in scores.items():
        if value is None:
            continue
        if (value < 1.0) if better.get(metric, True) else (value > 0.0):
            failed.append(metric)
    return failed


def _mark_differences(entries: list[CaseEntry], baseline: int | None) -> None:
    """``diff``: the turn's scores or answer differ from the baseline's same turn."""
    if baseline is None:
        return
    base = {(e["m"], e["d"], e["c"], e["t"]): e for e in entries if e["v"] == baseline}
    for entry in entries:
        other = base.get((entry["m"], entry["d"], entry["c"], entry["t"]))
        if entry["v"] == baseline or other is None:
            entry["diff"] = False
            continue
        entry["diff"] = entry["s"] != other["s"] or _text(entry) != _text(other)


def _text(entry: CaseEntry) -> str:
    message = entry["msg"] or {}
    return "".join(
        str(block.get("text", ""))
        for block in message.get("content", [])
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


# --- HTML -----------------------------------------------------------------------------------


def static_text(name: str) -> str:
    """A file of the built front end (``citelab/static/<name>``)."""
    return resources.files("citelab").joinpath("static", name).read_text(encoding="utf-8")


def inline_script(code: str) -> str:
    """``code`` made safe inside an inline ``<script>`` element."""
    return code.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def json_for_script(data: Any) -> str:
    """JSON that no string can break out of a ``<script>`` element (``<``, ``>``, ``&``
    and the JavaScript line separators escaped)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


DETAIL_BLOCK = 200
"""Detail lines per compressed block: opening a turn decompresses its block only."""


COMPRESS_LEVEL = 6
"""gzip level of the detail blocks: zlib's default (level 9 compressed little more, much
slower: docs/performance.md)."""


def pack_details(lines: Sequence[str], block: int = DETAIL_BLOCK) -> str:
    """``lines`` (one JSON document each, no newline in them) as gzip-compressed blocks of
    ``block`` lines, one base64 line per block: text that cannot end a script element.
    Deterministic (no timestamp in the gzip header), so the same run writes the same page."""
    if block < 1:
        raise ValueError(f"a block holds at least one line, not {block}")
    return "\n".join(_packed(lines[at : at + block]) for at in range(0, len(lines), block))


def _packed(lines: Sequence[str]) -> str:
    """One block of :func:`pack_details`."""
    data = "\n".join(lines).encode("utf-8")
    return base64.b64encode(gzip.compress(data, compresslevel=COMPRESS_LEVEL, mtime=0)).decode(
        "ascii"
    )


def unpack_details(packed: str) -> list[str]:
    """The lines :func:`pack_details` packed (what the page's script reads, for tests and
    for anyone reading a report's data outside a browser)."""
    if not packed:
        return []
    return [
        line
        for block in packed.split("\n")
        for line in gzip.decompress(base64.b64decode(block, validate=True))
        .decode("utf-8")
        .split("\n")
    ]


def case_browser_parts(result: EvalResult, element_id: str = "citelab-cases") -> tuple[str, str]:
    """The case browser as two HTML fragments: the mount point, the list's data and the
    script; and the details script, best put at the end of the page.

    The list's fields are one JSON document; the rest of each entry (answer, sources, gold,
    scores, reasons, rounds) is one JSON line per entry, packed by :func:`pack_details` into
    a data script that the page decompresses only for the block of the turn opened. The
    script is an ``async`` module: it draws the list as soon as the parser has read it,
    while the (much larger) details are still being read, so a 10,000-turn report's list is
    on screen before the page is parsed to its end; a turn opened before then waits for it.
    """
    data = case_browser_data(result)
    entries = data["cases"]
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
    listed = frozenset(LIST_KEYS)
    # As pack_details(lines, DETAIL_BLOCK) packs them, each block compressed on another
    # thread (zlib runs without the GIL) while this one encodes the next.
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocks = [
            pool.submit(
                _packed,
                [
                    encode({k: v for k, v in entry.items() if k not in listed})
                    for entry in entries[at : at + DETAIL_BLOCK]
                ],
            )
            for at in range(0, len(entries), DETAIL_BLOCK)
        ]
        details = "\n".join(block.result() for block in blocks)
    listed_data = {**data, "cases": [{k: entry.get(k) for k in LIST_KEYS} for entry in entries]}
    browser = (
        f'<div id="{element_id}-root" data-citelab-cases="{element_id}-data" '
        f'data-citelab-case-details="{element_id}-details">'
        "<noscript>The case browser needs JavaScript; the same data is in cases.csv, "
        "statements.csv, citations.csv and records.jsonl.</noscript></div>\n"
        f'<script type="application/json" id="{element_id}-data">{json_for_script(listed_data)}'
        "</script>\n"
        f'<script type="module" async>{inline_script(static_text("report.js"))}</script>'
    )
    script = (
        f'<script type="application/octet-stream" id="{element_id}-details" '
        f'data-encoding="gzip+base64" data-block="{DETAIL_BLOCK}">{details}</script>'
    )
    return browser, script
