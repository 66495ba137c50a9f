"""Scorers of the citation pipeline itself: finalize, numbering, anchors, gates and access.

Each checks one promise of DESIGN.md parts 1 and 3–5 on a recorded turn:

``anchor_validity``        every ``_meta`` anchor's slice, sourceUri and marker are right
``uncited_dropping``       after finalize no uncited source remains and no cited one is lost
``first_citation_order``   final sources are numbered 1..k in first-citation order (at
                           conversation scope: kept numbers stay, new ones count on)
``numbering_stability``    every marker resolves to the entity its number meant when written
``cross_turn_stability``   across a conversation's turns: an entity keeps its number, and a
                           number names the entity it named in earlier turns
``dangling_markers``       share of cited numbers that pointed at no source (lower is better)
``no_answer``              the turn answers exactly when it should
``source_leakage``         restricted entities reaching the reader (must be zero)
``gold_sources``           required entities cited, forbidden ones (same-label twins) not
``required_searches``      multi-round scenarios really search as often as the gold says
``source_language``        cited sources are shown in the language the gold names
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from citelab._errors import ConfigError
from citelab.evals.dataset import GoldTurn
from citelab.evals.judges import Judge, LexicalJudge, build_judge
from citelab.evals.records import RoundRecord, TurnRecord
from citelab.evals.scorers._scoring import Aggregate, DetailLevel, Score, register_scorer
from citelab.evals.scorers._statements import split_statements
from citelab.sources import Marker, parse_markers

__all__ = [
    "AnchorValidity",
    "CrossTurnStability",
    "DanglingMarkers",
    "FirstCitationOrder",
    "GoldSources",
    "NoAnswer",
    "NumberingStability",
    "RequiredSearches",
    "SourceLanguage",
    "SourceLeakage",
    "UncitedDropping",
    "anchor_validity",
    "cross_turn_stability",
    "dangling_markers",
    "first_citation_order",
    "gold_sources",
    "no_answer",
    "numbering_stability",
    "required_searches",
    "source_language",
    "source_leakage",
    "uncited_dropping",
    "written_citations",
]


@dataclass(frozen=True)
class WrittenCitation:
    """One number the model wrote, in the round it wrote it."""

    round: int
    number: int
    start: int
    """Offset of its marker in that round's text."""


def written_citations(record: TurnRecord) -> Iterator[WrittenCitation]:
    """Every number in every marker the model wrote, round by round.

    A record without rounds is read as one round whose text is ``raw_text``.
    """
    rounds = record.rounds or [RoundRecord(index=0, text=record.raw_text)]
    for round_ in rounds:
        for marker in _markers(round_.text):
            for number in marker.numbers:
                yield WrittenCitation(round_.index, number, marker.start)


@lru_cache(maxsize=4096)  # several scorers read the same texts
def _markers(text: str) -> tuple[Marker, ...]:
    return tuple(parse_markers(text))


def _usable(record: TurnRecord) -> bool:
    return record.error is None and not record.no_answer


class _Base:
    name: str = ""
    aggregate: Aggregate = "micro"
    higher_is_better: bool = True
    level: DetailLevel = "citation"
    description: str = ""
    """What the metric measures (the report's glossary)."""
    unit: str = ""
    """What one detail row is."""

    @property
    def metric(self) -> str:
        return self.name

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


class AnchorValidity(_Base):
    """Share of anchors that are right: in bounds, exact slice, a sibling uri, a real marker.

    The marker check: the anchor's span, or the whitespace right after it, holds a marker
    citing the final source whose uri the anchor names.
    """

    name = "anchor_validity"
    description = (
        "Share of the _meta citation anchors that are right: in bounds, an exact slice of the "
        "answer text, naming a sibling source's URI, with a marker citing that source at the "
        "span."
    )
    unit = "_meta citation anchor"

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if record.error is not None:
            return Score.not_applicable(self.metric)
        block = record.text_block
        text = str(block.get("text", "")) if block else ""
        links = set(record.link_uris)
        cites = _marker_uris(text, {s.number: s.uri for s in record.sources})
        rows = []
        for index, anchor in enumerate(record.anchors):
            start, end = anchor.start_index, anchor.end_index
            problem = _anchor_problem(text, anchor.cited_text, start, end)
            if problem is None and anchor.source_uri not in links:
                problem = "uri_not_a_source"
            if problem is None and not _marker_near(text, cites, anchor.source_uri, start, end):
                problem = "no_marker"
            rows.append(
                {
                    "anchor": index,
                    "uri": anchor.source_uri,
                    "hit": problem is None,
                    "problem": problem,
                }
            )
        return Score.of(self.metric, rows)


def _anchor_problem(text: str, cited: str, start: int, end: int) -> str | None:
    if not 0 <= start <= end <= len(text):
        return "out_of_bounds"
    if text[start:end] != cited:
        return "slice_mismatch"
    return None


def _marker_uris(text: str, uris: dict[int, str]) -> list[tuple[int, int, set[str]]]:
    return [(m.start, m.end, {uris[n] for n in m.numbers if n in uris}) for m in _markers(text)]


def _marker_near(
    text: str, markers: list[tuple[int, int, set[str]]], uri: str, start: int, end: int
) -> bool:
    """A marker citing ``uri`` lies in the span or in the marker chain right after it."""
    reach = _skip_blanks(text, end)
    for m_start, m_end, _ in markers:  # markers separated by blanks form one chain
        if m_start == reach:
            reach = _skip_blanks(text, m_end)
    return any(
        uri in cited and m_start < reach and m_end > start for m_start, m_end, cited in markers
    )


def _skip_blanks(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t":
        position += 1
    return position


class UncitedDropping(_Base):
    """Per held source: kept after finalize exactly when the model cited it.

    "Cited" means a number the model wrote resolves to the source under the turn's held
    numbering (what finalize reads); a final source that was never held is an error too.
    """

    name = "uncited_dropping"
    description = (
        "Share of the sources a turn held that finalize handled right: kept exactly when the "
        "model cited them (a final source that was never held counts as wrong)."
    )
    unit = "source the turn held"

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if not _usable(record) or not record.candidates:
            return Score.not_applicable(self.metric)
        held = {s.number: s.uri for s in record.candidates}
        cited = {held[c.number] for c in written_citations(record) if c.number in held}
        kept = {s.uri for s in record.sources}
        rows = [
            {
                "number": s.number,
                "uri": s.uri,
                "cited": s.uri in cited,
                "kept": s.uri in kept,
                "hit": (s.uri in cited) == (s.uri in kept),
            }
            for s in record.candidates
        ]
        rows += [
            {"number": None, "uri": uri, "cited": False, "kept": True, "hit": False}
            for uri in sorted(kept - set(held.values()))
        ]
        return Score.of(self.metric, rows)


class FirstCitationOrder(_Base):
    """Per final source: it is listed in first-citation order with falling priorities, and
    its number is its rank of first citation. At conversation scope (``record.keep``) a
    number up to ``keep`` is the conversation's and stays; the turn's new sources are
    numbered ``keep + 1``... by their rank of first citation among the new ones."""

    name = "first_citation_order"
    description = (
        "Share of final sources listed in first-citation order, with falling priorities, numbered "
        "by their rank of first citation (under conversation-wide numbering, numbers earlier "
        "turns gave stay and new sources count on from them)."
    )
    unit = "final source"

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if not _usable(record) or not record.sources:
            return Score.not_applicable(self.metric)
        first = list(dict.fromkeys(n for m in _markers(record.text) for n in m.numbers))
        keep = record.keep
        fresh = {n: keep + rank for rank, n in enumerate((n for n in first if n > keep), 1)}
        priorities = _priorities(record.message)
        rows = []
        for position, source in enumerate(record.sources):
            number = source.number
            expected = number if 0 < number <= keep else fresh.get(number)
            listed = position < len(first) and first[position] == number
            in_order = listed and number == expected
            falling = _falls(priorities, source.uri, position)
            rows.append(
                {
                    "number": source.number,
                    "uri": source.uri,
                    "expected_number": expected,
                    "hit": in_order and falling,
                }
            )
        return Score.of(self.metric, rows)


def _priorities(message: dict[str, Any]) -> list[tuple[str, float | None]]:
    out = []
    for block in message.get("content", []):
        if isinstance(block, dict) and block.get("type") == "resource_link":
            priority = (block.get("annotations") or {}).get("priority")
            out.append((str(block.get("uri")), priority))
    return out


def _falls(priorities: list[tuple[str, float | None]], uri: str, position: int) -> bool:
    """The source's link sits at ``position`` and has a priority below the one before it."""
    if position >= len(priorities) or priorities[position][0] != uri:
        return False
    mine = priorities[position][1]
    if mine is None:
        return False
    return position == 0 or (priorities[position - 1][1] or 0.0) > mine


class NumberingStability(_Base):
    """Per written citation: after finalize it resolves to the entity it meant when written.

    Where a number resolves is finalize's mapping (held number → final number) into the final
    sources. What it *meant* depends on ``meaning``:

    ``"visible"`` (default)
        the entity the round's visible numbering gave that number (what the model could see
        when it wrote the round). This measures the pipeline: a model that cites what it sees
        is never unstable unless the pipeline renumbers behind its back (the seed's bug:
        tool results shown by position, the prompt one round behind).
    ``"content"``
        any visible source of that round whose passage supports the citing statement (by the
        judge). This also catches a model citing a number that never meant the source it
        quoted (a wrong or stale number), so it recovers injected ``wrong`` + ``stale`` rates.

    Numbers the model could not see are dangling, not unstable: ``dangling_markers`` counts
    them.
    """

    name = "numbering_stability"
    unit = "citation the model wrote, in its round"

    def __init__(
        self, meaning: Literal["visible", "content"] = "visible", judge: Judge | None = None
    ) -> None:
        if meaning not in ("visible", "content"):
            raise ConfigError(
                f"numbering_stability: meaning must be visible or content, got {meaning!r}"
            )
        self.meaning = meaning
        self.judge = judge if judge is not None else LexicalJudge()
        self.description = _STABILITY[meaning]

    @property
    def metric(self) -> str:
        return self.name if self.meaning == "visible" else f"{self.name}_content"

    def config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"name": self.name, "meaning": self.meaning}
        if self.meaning == "content":
            config["judge"] = self.judge.config()
        return config

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if not _usable(record):
            return Score.not_applicable(self.metric)
        visible = _visible_by_round(record)
        final = {s.number: s.uri for s in record.sources}
        rows = []
        for cite, claim in self._citations(record):
            view = visible.get(cite.round, {})
            if cite.number not in view:
                continue
            resolved = final.get(record.mapping.get(cite.number, -1))
            meant = self._meant(record, view, cite.number, claim)
            rows.append(
                {
                    "round": cite.round,
                    "number": cite.number,
                    "meant": view[cite.number],
                    "resolved": resolved,
                    "hit": resolved in meant,
                }
            )
        return Score.of(self.metric, rows)

    def _citations(self, record: TurnRecord) -> Iterator[tuple[WrittenCitation, str]]:
        if self.meaning == "visible":
            yield from ((cite, "") for cite in written_citations(record))
            return
        for round_ in record.rounds or [RoundRecord(index=0, text=record.raw_text)]:
            for statement in split_statements(round_.text):
                for number in statement.citations:
                    yield WrittenCitation(round_.index, number, statement.start), statement.claim

    def _meant(self, record: TurnRecord, view: dict[int, str], number: int, claim: str) -> set[str]:
        if self.meaning == "visible":
            return {view[number]}
        passages = {s.uri: s.evidence for s in [*record.seen, *record.candidates]}
        return {
            uri
            for uri in view.values()
            if uri in passages and self.judge.supports(claim, passages[uri])
        }


_STABILITY = {
    "visible": (
        "Share of the citations the model wrote that, after finalize, resolve to the source "
        "their number showed the model in that round (the pipeline renumbering behind the "
        "model's back lowers it)."
    ),
    "content": (
        "Share of the citations the model wrote that, after finalize, resolve to a source of "
        "that round whose passage supports the citing statement (judged): this also catches "
        "the model citing a wrong or stale number."
    ),
}


def _visible_by_round(record: TurnRecord) -> dict[int, dict[int, str]]:
    if record.rounds:
        return {r.index: r.visible for r in record.rounds}
    return {0: {s.number: s.uri for s in record.candidates}}


class DanglingMarkers(_Base):
    """Share of written citations whose number points at no held source (lower is better)."""

    name = "dangling_markers"
    description = (
        "Share of the citations the model wrote whose number points at no source the turn held."
    )
    unit = "citation the model wrote"
    higher_is_better = False

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if record.error is not None:
            return Score.not_applicable(self.metric)
        held = {s.number for s in record.candidates}
        rows = [
            {"round": c.round, "number": c.number, "at": c.start, "hit": c.number not in held}
            for c in written_citations(record)
        ]
        return Score.of(self.metric, rows)


class NoAnswer(_Base):
    """Per turn: the turn declines exactly when the gold says nothing in reach answers it.

    A turn *declines* when the service substituted its no-answer message or the answer cites
    no source at all (a model's own "I could not find that" carries no citation); anything
    else is a grounded answer.
    """

    name = "no_answer"
    description = (
        "Share of turns that decline exactly when the gold says nothing in reach answers them (a "
        "turn declines with the no-answer message, or with an answer that cites nothing)."
    )
    unit = "turn"

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if record.error is not None:
            return Score.not_applicable(self.metric)
        expected = not gold.expect_answer
        declined = record.no_answer or not record.sources
        outcome = {
            (True, True): "correct_no_answer",
            (False, False): "answered",
            (False, True): "wrongly_declined",
            (True, False): "answered_without_grounds",
        }[(expected, declined)]
        row = {
            "expected_no_answer": expected,
            "substituted": record.no_answer,
            "outcome": outcome,
            "hit": expected == declined,
        }
        return Score.of(self.metric, [row])


class SourceLeakage(_Base):
    """Leaks of entities the reader may not read; the metric is the share of turns leaking.

    Looked for in the provisional references (held sources), the final sources, the message's
    resource_links and anchors, and the answer text: the entity's URI, its titles and
    phrases, and the case's canaries (words only restricted documents contain). Must be zero.
    """

    name = "source_leakage"
    description = (
        "Share of turns in which an entity the reader may not read reaches them: in the "
        "references, the final sources, the resource links, the anchors or the answer text (its "
        "URI, titles, phrases, or the case's canaries). Must be zero."
    )
    unit = "turn"
    higher_is_better = False

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if record.error is not None:
            return Score.not_applicable(self.metric)
        leaks = list(_leaks(record))
        rows = [
            {"uri": uri, "where": where, "hit": True} for uri, where in leaks
        ]  # a hit is a leak
        leaked = 1.0 if leaks else 0.0
        return Score(self.metric, leaked, 1.0, leaked, tuple(rows))


def _leaks(record: TurnRecord) -> Iterator[tuple[str, str]]:
    for canary in record.canaries:
        if _mentions(record.text, canary):
            yield f"canary:{canary}", "text"
    restricted = {r.uri: r for r in record.restricted}
    places = {
        "references": [s.uri for s in record.candidates],
        "sources": [s.uri for s in record.sources],
        "resource_links": record.link_uris,
        "anchors": [a.source_uri for a in record.anchors],
    }
    for where, uris in places.items():
        for uri in dict.fromkeys(uris):
            if uri in restricted:
                yield uri, where
    for entity in restricted.values():
        needles = [entity.uri, *entity.titles, *entity.phrases]
        if any(_mentions(record.text, needle) for needle in needles):
            yield entity.uri, "text"


def _mentions(text: str, needle: str) -> bool:
    """``needle`` occurs in ``text`` as whole words, ignoring case."""
    if not needle.strip():
        return False
    pattern = rf"(?<!\w){re.escape(needle.strip())}(?!\w)"
    return re.search(pattern, text, re.IGNORECASE) is not None


class GoldSources(_Base):
    """Per listed entity: a ``must_cite`` one is a final source, a ``must_not_cite`` one is not."""

    name = "gold_sources"
    description = (
        "Share of the entities the gold lists that are handled right: a must-cite entity is a "
        "final source, a must-not-cite one (such as a same-label twin) is not."
    )
    unit = "entity the gold lists (must / must not cite)"

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if record.error is not None or not (gold.must_cite or gold.must_not_cite):
            return Score.not_applicable(self.metric)
        final = {s.uri for s in record.sources}
        rows = [{"uri": u, "rule": "must_cite", "hit": u in final} for u in gold.must_cite]
        rows += [
            {"uri": u, "rule": "must_not_cite", "hit": u not in final} for u in gold.must_not_cite
        ]
        return Score.of(self.metric, rows)


class RequiredSearches(_Base):
    """Per turn that names ``min_searches``: the turn searched at least that often.

    Counts the service's forced search and the model's own calls; this is how a dataset checks
    that its multi-round scenarios really take several rounds.
    """

    name = "required_searches"
    description = (
        "Share of the turns that name min_searches which searched at least that often (the "
        "service's forced search and the model's own calls)."
    )
    unit = "turn that names min_searches"

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if record.error is not None or gold.min_searches == 0:
            return Score.not_applicable(self.metric)
        row = {
            "searches": record.searches,
            "required": gold.min_searches,
            "hit": record.searches >= gold.min_searches,
        }
        return Score.of(self.metric, [row])


class SourceLanguage(_Base):
    """Per final source of a turn that names ``source_langcode``: shown in that language."""

    name = "source_language"
    description = (
        "Share of final sources shown in the language the gold names, on turns that name one."
    )
    unit = "final source of a turn that names a language"

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if record.error is not None or gold.source_langcode is None or not record.sources:
            return Score.not_applicable(self.metric)
        rows = [
            {
                "uri": s.uri,
                "langcode": s.langcode,
                "expected": gold.source_langcode,
                "hit": s.langcode == gold.source_langcode,
            }
            for s in record.sources
        ]
        return Score.of(self.metric, rows)


class CrossTurnStability(_Base):
    """Per citation of a follow-up turn's final text: the number means what it meant before.

    A hit when both hold: the cited entity has the number it had in the conversation's
    earlier turns (if it was cited there), and the number names the entity it named there
    (if it was used there). What earlier turns used is ``record.earlier`` (first use of a
    number wins), so this is what a shared source list shows against what the text says.
    First turns, and follow-ups whose earlier turns cited nothing, are not applicable.
    """

    name = "cross_turn_stability"
    description = (
        "Share of a follow-up turn's citations whose number means what it meant in the "
        "conversation's earlier turns: the entity keeps its number, and the number keeps its "
        "entity."
    )
    unit = "citation in a follow-up turn's final text"

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if not _usable(record) or not record.earlier:
            return Score.not_applicable(self.metric)
        earlier = record.earlier
        earlier_number: dict[str, int] = {}
        for number, earlier_uri in earlier.items():
            earlier_number.setdefault(earlier_uri, number)
        final = {s.number: s.uri for s in record.sources}
        rows = []
        for marker in _markers(record.text):
            for number in marker.numbers:
                uri = final.get(number)
                if uri is None:
                    continue
                kept = earlier_number.get(uri, number) == number
                same = earlier.get(number, uri) == uri
                rows.append(
                    {
                        "number": number,
                        "uri": uri,
                        "earlier_number": earlier_number.get(uri),
                        "earlier_uri": earlier.get(number),
                        "hit": kept and same,
                    }
                )
        return Score.of(self.metric, rows) if rows else Score.not_applicable(self.metric)


@register_scorer("anchor_validity")
def anchor_validity() -> AnchorValidity:
    """Anchors that are right: in bounds, an exact slice, a sibling source, a marker."""
    return AnchorValidity()


@register_scorer("uncited_dropping")
def uncited_dropping() -> UncitedDropping:
    """Held sources kept after finalize exactly when the model cited them."""
    return UncitedDropping()


@register_scorer("first_citation_order")
def first_citation_order() -> FirstCitationOrder:
    """Final sources numbered and listed in first-citation order."""
    return FirstCitationOrder()


@register_scorer("numbering_stability")
def numbering_stability(
    meaning: Literal["visible", "content"] = "visible",
    judge: str | Mapping[str, Any] | Judge = "lexical",
) -> NumberingStability:
    """Stability of numbers across rounds; ``meaning="content"`` judges intent by content."""
    built = build_judge(judge if isinstance(judge, str | Judge) else dict(judge))
    return NumberingStability(meaning, built)


@register_scorer("cross_turn_stability")
def cross_turn_stability() -> CrossTurnStability:
    """An entity keeps its number across turns, and a number keeps its entity."""
    return CrossTurnStability()


@register_scorer("dangling_markers")
def dangling_markers() -> DanglingMarkers:
    """Citations whose number points at no held source (lower is better)."""
    return DanglingMarkers()


@register_scorer("no_answer")
def no_answer() -> NoAnswer:
    """Turns that decline exactly when the gold expects no answer."""
    return NoAnswer()


@register_scorer("source_leakage")
def source_leakage() -> SourceLeakage:
    """Turns leaking an entity the reader may not read (must be zero)."""
    return SourceLeakage()


@register_scorer("required_searches")
def required_searches() -> RequiredSearches:
    """Turns that search at least as often as the gold's min_searches."""
    return RequiredSearches()


@register_scorer("source_language")
def source_language() -> SourceLanguage:
    """Final sources shown in the language the gold names."""
    return SourceLanguage()


@register_scorer("gold_sources")
def gold_sources() -> GoldSources:
    """Must-cite entities cited, must-not-cite ones (same-label twins) not."""
    return GoldSources()
