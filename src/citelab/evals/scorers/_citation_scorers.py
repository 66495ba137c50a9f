"""Citation recall and precision (ALCE, Gao et al. 2023) and the gold-claim scorers.

Definitions (every support decision is the judge's):

citation recall, per statement
    The statement cites at least one source, every cited number is a source of the answer,
    and the cited sources together (their passages concatenated) support it.
citation precision, per citation
    The citation's statement is supported by all its citations together, and the citation is
    not *irrelevant*: a citation is irrelevant when it alone does not support the statement
    AND the statement's other citations without it still do. So a redundant citation (one
    that supports the statement alone, beside another that does too) is not irrelevant.

Not judgeable (citelab's mode): a source without a passage (its ``content`` is blank: a
vendor's url_citation, an AnswerMessage's resource_link without source quotes) gives the
judge nothing to read. A statement is judged on the passages of the sources it cites that
have one; when some cited source has none, the statement is a unit only if those passages
support it (else the missing passage might have: no verdict), and a statement whose cited
sources all lack a passage is no unit. In precision a citation of a source without a
passage is no unit, nor are the other citations of a statement that is no verdict. What is
left out is a detail row with ``judgeable: False`` (reason ``no_passage``), counted as
*unjudgeable*, never as 0; a turn with nothing judgeable has no value.

Granularity (citelab's mode): ``sentence`` (the default) scores the answer's sentences with
their markers; ``span`` scores at the granularity a vendor cites (Anthropic's cited text
blocks): each span of the message's citation anchors is a statement with its sources, and
each sentence no span touches an uncited statement (see
:func:`~citelab.evals.scorers.split_statements_by_span`); the metric is then
``citation_recall_span`` / ``citation_precision_span``.

citelab's mode pools units over the whole variant (micro average), uses citelab's marker
grammar and statement splitter, caps citations first (``max_citations``), and judges every
distinct citation of a statement. ``alce_compat=True`` reproduces ALCE's ``compute_autoais``
exactly (see ``docs/alce-compat.md`` for the table of behaviours): ALCE's statement parsing
(first line, ``<|im_end|>`` removed, NLTK punkt sentences; see
:mod:`citelab.evals.scorers._statements`); citations are positions into the answer's sources in
number order, so ``[0]`` names the *last* source as ALCE's ``docs[-1]`` does; every citation's
range is checked before at most ``max_citations`` (3) are kept, in order and with repeats;
a statement citing beyond the sources is unsupported and its citations are not counted; in
the precision step a repeated citation is tested by removing the *first* equal citation;
an answer without countable citations has precision 0; figures are averaged per answer
(macro). ``qampari=True`` reads answers as ALCE's QAMPARI mode does (comma-separated items,
each prefixed with the question). Answers without statements are skipped, as ALCE skips them.

Turns whose gold expects no answer are not scored here (``no_answer`` judges them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal, get_args

from citelab._errors import ConfigError
from citelab.evals.dataset import GoldClaim, GoldTurn
from citelab.evals.judges import DEFAULT_JUDGE, Judge, build_judge
from citelab.evals.records import SourceRecord, TurnRecord
from citelab.evals.scorers._scoring import Aggregate, DetailLevel, Score, Scorer, register_scorer
from citelab.evals.scorers._statements import (
    Statement,
    split_statements,
    split_statements_alce,
    split_statements_by_span,
)

__all__ = [
    "CitationPrecision",
    "CitationRecall",
    "ClaimAttribution",
    "ClaimRecall",
    "citation_precision",
    "citation_recall",
    "claim_attribution",
    "claim_recall",
    "with_judge_scores",
]

_ALCE_MAX_CITATIONS = 3
Granularity = Literal["sentence", "span"]
"""What a statement is: a sentence of the answer, or a span its citation anchors mark."""
_NO_PASSAGE = "no_passage"


class _Support:
    """Memoized judge calls for one turn: a statement is judged once per evidence set.

    The verdict depends on nothing but the claim and the cited passages, so the scorers of a
    turn (recall, precision, in either mode) share one memo: see :func:`_support_for`.
    """

    __slots__ = ("judge", "memo", "ordered", "passages", "record", "scores", "separate", "sources")

    def __init__(self, judge: Judge, record: TurnRecord) -> None:
        self.judge = judge
        # The lexical judge reads the passages one by one, from its cache.
        self.separate: Callable[[str, list[str]], bool] | None = getattr(
            judge, "supports_passages", None
        )
        self.record = record
        self.sources: dict[int, SourceRecord] = {s.number: s for s in record.sources}
        self.memo: dict[tuple[str, tuple[int, ...]], bool] = {}
        self.scores: dict[tuple[str, tuple[int, ...]], float] = {}
        # ALCE's docs list, numbered from 1: its positions index this list. A turn under
        # conversation-wide numbering may cite [2] and [4] only; its list is then 1..4 with
        # holes (a hole is out of range), so [n] still means source n and [0] the last one.
        # Numbered 1..k, this is ALCE's plain list.
        self.ordered: list[int] = list(range(1, max(self.sources, default=0) + 1))
        # Each cited source's passage as the judge reads it, built once per turn.
        self.passages: dict[int, str] = {}

    def __call__(self, claim: str, numbers: tuple[int, ...]) -> bool:
        key = (claim, numbers)
        verdict = self.memo.get(key)
        if verdict is None:
            verdict = self.memo[key] = bool(numbers) and self._judge(claim, numbers)
        return verdict

    def _judge(self, claim: str, numbers: tuple[int, ...]) -> bool:
        """The judge on the cited passages joined by line breaks (the lexical judge reads
        them one by one, from its cache: the same verdict without joining them)."""
        passages = [self._passage(n) for n in numbers]
        if self.separate is not None:
            return bool(self.separate(claim, passages))
        return self.judge.supports(claim, "\n".join(passages))

    def score(self, claim: str, numbers: tuple[int, ...]) -> float | None:
        """The judge's score of the claim on the cited passages joined by line breaks (what
        its verdict on them thresholds), None for a judge without a ``score`` method."""
        scorer: Callable[[str, str], float] | None = getattr(self.judge, "score", None)
        if scorer is None:
            return None
        key = (claim, numbers)
        known = self.scores.get(key)
        if known is None:
            joined = "\n".join(self._passage(n) for n in numbers)
            known = self.scores[key] = float(scorer(claim, joined))
        return known

    def readable(self, numbers: tuple[int, ...]) -> tuple[int, ...]:
        """The numbers whose source has a passage to judge."""
        return tuple(n for n in numbers if self.sources[n].has_passage)

    def _passage(self, number: int) -> str:
        passage = self.passages.get(number)
        if passage is None:
            passage = self.passages[number] = self.sources[number].evidence
        return passage


_LAST = threading.local()


def _support_for(judge: Judge, record: TurnRecord) -> _Support:
    """The turn's memo: the one this thread used last when it was for this turn and judge
    (every scorer of a turn runs right after the other), else a new one."""
    last: _Support | None = getattr(_LAST, "support", None)
    if last is None or last.record is not record or last.judge is not judge:
        last = _LAST.support = _Support(judge, record)
    return last


def _statements(
    record: TurnRecord, alce_compat: bool, qampari: bool, granularity: Granularity
) -> list[Statement]:
    if alce_compat:
        return split_statements_alce(record.text, question=record.question, qampari=qampari)
    block = record.text_block
    if granularity == "span" and block is not None and isinstance(block.get("text"), str):
        return _span_statements(record, block["text"])
    return split_statements(record.text)


def _span_statements(record: TurnRecord, text: str) -> list[Statement]:
    """The message text's statements at span granularity: each anchor cites its source's
    number (0, out of range, for a uri that is no source of the turn)."""
    numbers: dict[str, int] = {}
    for source in record.sources:
        numbers.setdefault(source.uri, source.number)
    spans = [
        (anchor.start_index, anchor.end_index, (numbers.get(anchor.source_uri, 0),))
        for anchor in record.anchors
    ]
    return split_statements_by_span(text, spans)


def _unjudgeable(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` marked as no unit: a passage its verdict needs is missing."""
    return {**row, "hit": False, "judgeable": False}


def _applicable(record: TurnRecord, gold: GoldTurn) -> bool:
    """Scored unless the turn failed or should not be answered (``no_answer`` judges those).

    A substituted no-answer message on an answerable question is scored as written: its
    statements cite nothing, so they count against recall.
    """
    return record.error is None and gold.expect_answer


@dataclass(frozen=True)
class _CitationScorer:
    """What recall and precision share: the judge, ALCE mode, and the walk over statements.

    A subclass says how one statement becomes detail rows (:meth:`_rows`).
    """

    judge: Judge
    alce_compat: bool = False
    max_citations: int | None = None
    qampari: bool = False
    granularity: Granularity = "sentence"
    name: str = ""
    higher_is_better: bool = True
    level: DetailLevel = "statement"
    summary: ClassVar[str] = ""
    """What the metric measures, before the configuration's modes."""
    unit: ClassVar[str] = ""

    @property
    def metric(self) -> str:
        if self.alce_compat:
            return f"{self.name}_alce"
        return self.name + ("_span" if self.granularity == "span" else "")

    @property
    def description(self) -> str:
        """What the metric measures in this configuration (the report's glossary)."""
        parts = [self.summary]
        if self.alce_compat:
            parts.append(
                "Scored as ALCE's compute_autoais scores it: ALCE's statement split, citations "
                "read as positions into the sources, the mean of the answers' values."
            )
        if self.max_citations is not None:
            parts.append(f"Only the first {self.max_citations} citations of a statement count.")
        if self.qampari:
            parts.append("List answers are read as ALCE's QAMPARI mode reads them.")
        return " ".join(parts)

    @property
    def aggregate(self) -> Aggregate:
        return "macro" if self.alce_compat else "micro"

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "judge": self.judge.config(),
            "alce_compat": self.alce_compat,
            "max_citations": self.max_citations,
            "qampari": self.qampari,
            "granularity": self.granularity,
        }

    def statements(self, record: TurnRecord) -> list[Statement]:
        """The turn's statements as this metric splits them: the units it scores, and the
        ones a label of this metric must name (``label_pairs(..., statements=...)``)."""
        return _statements(record, self.alce_compat, self.qampari, self.granularity)

    def cited_numbers(self, record: TurnRecord, statement: Statement) -> tuple[int, ...] | None:
        """The source numbers this metric scores for ``statement`` of ``record``: its
        citations after the cap (and, ALCE-compatible, read as positions into the sources);
        None when one names no source (the metric scores no citation of it). A label of this
        metric names these numbers (``label_pairs``)."""
        return self._cited(statement, _support_for(self.judge, record))

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if not _applicable(record, gold):
            return Score.not_applicable(self.metric)
        statements = self.statements(record)
        if not statements:
            return Score.not_applicable(self.metric)
        support = _support_for(self.judge, record)
        rows = [row for statement in statements for row in self._rows(statement, support)]
        return self._score(rows)

    def _cited(self, statement: Statement, support: _Support) -> tuple[int, ...] | None:
        """The source numbers the statement cites, after the cap; None when one is out of range.

        citelab caps first and then checks the kept numbers. ALCE reads ``[n]`` as position
        ``n - 1`` of the sources in number order (Python indexing, so ``[0]`` is the last
        one), checks every position, and caps afterwards.
        """
        if self.alce_compat:
            return self._cited_alce(statement, support)
        numbers = statement.citations
        if self.max_citations is not None:
            numbers = numbers[: self.max_citations]
        return None if any(n not in support.sources for n in numbers) else numbers

    def _cited_alce(self, statement: Statement, support: _Support) -> tuple[int, ...] | None:
        ordered, sources = support.ordered, support.sources
        count = len(ordered)
        numbers = []
        for cited in statement.citations:
            # Position cited - 1 must lie in [-count, count) and name a source (not a hole).
            if not -count < cited <= count or ordered[cited - 1] not in sources:
                return None
            numbers.append(ordered[cited - 1])
        kept = tuple(numbers)
        return kept[: self.max_citations] if self.max_citations is not None else kept

    def _rows(self, statement: Statement, support: _Support) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _score(self, rows: list[dict[str, Any]]) -> Score:
        """The share of judgeable rows that are a hit (rows marked ``judgeable: False`` are
        kept as details but are no unit)."""
        judged = [row for row in rows if row.get("judgeable", True)]
        good = sum(1 for row in judged if row["hit"])
        total = len(judged)
        return Score(self.metric, good, total, good / total if total else None, tuple(rows))


@dataclass(frozen=True)
class CitationRecall(_CitationScorer):
    """Share of statements that cite sources which together support them. In citelab's mode
    a statement whose cited sources have no passage to judge (or whose readable passages do
    not support it while another cited source has none) is left out, as not judgeable."""

    name: str = "citation_recall"
    level: DetailLevel = "statement"
    judge_scores: bool = False
    """Record the judge's score (``judge_score``, with a judge that has a ``score`` method)
    beside each judged statement's verdict, for the estimates from labels: set when a run
    has labels (:func:`with_judge_scores`); off, the judge may skip what its verdict does
    not need (the lexical judge's costly features)."""
    summary: ClassVar[str] = (
        "Share of the answer's statements that cite sources which together support them "
        "(the judge decides support)."
    )
    unit: ClassVar[str] = "statement of the answer"

    def config(self) -> dict[str, Any]:
        # Only when set: a worker process rebuilds the scorer from this, and a run without
        # labels keeps the configuration it always had.
        config = super().config()
        return {**config, "judge_scores": True} if self.judge_scores else config

    def _rows(self, statement: Statement, support: _Support) -> list[dict[str, Any]]:
        cited = self._cited(statement, support)
        readable = cited
        if cited is None:
            verdict, reason = False, "out_of_range"
        elif not cited:
            verdict, reason = False, "uncited"
        else:
            # citelab's mode judges the cited sources that have a passage (module docs).
            readable = cited if self.alce_compat else support.readable(cited)
            verdict = bool(readable) and support(statement.claim, readable)
            reason = "supported" if verdict else "unsupported"
        row: dict[str, Any] = {
            "statement": statement.index,
            "claim": statement.claim,
            "citations": list(statement.citations if cited is None else cited),
            "hit": verdict,
            "reason": reason,
        }
        if cited and not verdict and readable != cited:
            return [_unjudgeable({**row, "reason": _NO_PASSAGE})]
        if self.judge_scores and cited and readable:
            score = support.score(statement.claim, readable)
            if score is not None:
                row["judge_score"] = score
        return [row]


@dataclass(frozen=True)
class CitationPrecision(_CitationScorer):
    """Share of citations that are needed: their statement is supported and they are relevant.
    In citelab's mode a citation of a source without a passage, or of a statement that cannot
    be judged, is left out, as not judgeable."""

    name: str = "citation_precision"
    level: DetailLevel = "citation"
    summary: ClassVar[str] = (
        "Share of citations that are needed: the statement is supported by its citations "
        "together, and this one is relevant (it supports the statement alone, or the others "
        "do not without it)."
    )
    unit: ClassVar[str] = "citation (a number in a marker)"

    def _score(self, rows: list[dict[str, Any]]) -> Score:
        if self.alce_compat and not rows:
            return Score(self.metric, 0, 0, 0.0, ())  # ALCE: no citations at all is precision 0
        return super()._score(rows)

    def _rows(self, statement: Statement, support: _Support) -> list[dict[str, Any]]:
        cited = self._cited(statement, support)
        if cited is None and self.alce_compat:
            return []  # ALCE rejects the statement before counting its citations
        numbers = statement.citations[: self.max_citations] if cited is None else cited
        # citelab's mode judges the citations whose source has a passage (see the module
        # docs); ALCE's judges every citation, on its title when there is no passage.
        judged = numbers if cited is None or self.alce_compat else support.readable(cited)
        together = cited is not None and bool(judged) and support(statement.claim, judged)
        verdictless = judged != numbers and not together
        rows = []
        for number in numbers:
            row = {
                "statement": statement.index,
                "claim": statement.claim,
                "number": number,
                "uri": support.sources[number].uri if number in support.sources else None,
                "hit": together
                and number in judged
                and self._relevant(statement.claim, judged, judged.index(number), support),
                "statement_supported": together,
            }
            missing = number not in judged or verdictless
            rows.append(_unjudgeable({**row, "reason": _NO_PASSAGE}) if missing else row)
        return rows

    def _relevant(
        self, claim: str, cited: tuple[int, ...], position: int, support: _Support
    ) -> bool:
        if len(cited) == 1 or support(claim, (cited[position],)):
            return True
        return not support(claim, self._others(cited, position))

    def _others(self, cited: tuple[int, ...], position: int) -> tuple[int, ...]:
        """The statement's other citations: ALCE removes the first equal one (``list.remove``),
        citelab the one at ``position`` (they differ only for repeats, in passage order)."""
        if self.alce_compat:
            first = cited.index(cited[position])
            return cited[:first] + cited[first + 1 :]
        return cited[:position] + cited[position + 1 :]


@dataclass(frozen=True)
class _GoldClaimScorer:
    """What the gold-claim scorers share: a judge, and turns that have gold claims."""

    judge: Judge
    name: str = ""
    metric: str = ""
    aggregate: Aggregate = "micro"
    higher_is_better: bool = True
    level: DetailLevel = "statement"

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "judge": self.judge.config()}

    def __call__(self, record: TurnRecord, gold: GoldTurn) -> Score:
        if record.error is not None or not gold.claims:
            return Score.not_applicable(self.metric)
        return Score.of(self.metric, self._rows(record, gold.claims))

    def _rows(self, record: TurnRecord, claims: list[GoldClaim]) -> list[dict[str, Any]]:
        raise NotImplementedError


@dataclass(frozen=True)
class ClaimRecall(_GoldClaimScorer):
    """Share of the gold claims the answer states (judged against the answer's statements)."""

    name: str = "claim_recall"
    metric: str = "claim_recall"
    description: ClassVar[str] = (
        "Share of the gold claims the answer states (the judge reads the claim against the "
        "answer's statements)."
    )
    unit: ClassVar[str] = "gold claim"

    def _rows(self, record: TurnRecord, claims: list[GoldClaim]) -> list[dict[str, Any]]:
        answer = " ".join(s.claim for s in split_statements(record.text))
        return [
            {
                "claim": claim.text,
                "hit": not record.no_answer and self.judge.supports(claim.text, answer),
            }
            for claim in claims
        ]


@dataclass(frozen=True)
class ClaimAttribution(_GoldClaimScorer):
    """Share of gold claims stated by a statement that cites one of the claim's entities.

    This is where same-label twins show: a claim about the MSc programme attributed to the
    BSc programme of the same name is stated but not attributed.
    """

    name: str = "claim_attribution"
    metric: str = "claim_attribution"
    description: ClassVar[str] = (
        "Share of the gold claims stated by a statement that cites one of the claim's "
        "supporting entities (a claim cited to a same-label twin is stated, not attributed)."
    )
    unit: ClassVar[str] = "gold claim"

    def _rows(self, record: TurnRecord, claims: list[GoldClaim]) -> list[dict[str, Any]]:
        statements = [] if record.no_answer else split_statements(record.text)
        uris = {s.number: s.uri for s in record.sources}
        rows = []
        for claim in claims:
            stating = [s for s in statements if self.judge.supports(claim.text, s.claim)]
            cited = {uris.get(n) for s in stating for n in s.citations}
            attributed = bool(cited & set(claim.supported_by))
            rows.append({"claim": claim.text, "hit": attributed, "stated": bool(stating)})
        return rows


def _judge(spec: str | Mapping[str, Any] | Judge) -> Judge:
    return build_judge(spec if isinstance(spec, str | Judge) else dict(spec))


def _cap(alce_compat: bool, max_citations: int | None, qampari: bool) -> int | None:
    if qampari and not alce_compat:
        raise ConfigError("qampari=True is ALCE's list mode: it needs alce_compat=True")
    if max_citations is not None and max_citations < 1:
        raise ConfigError(f"max_citations must be at least 1, got {max_citations}")
    if max_citations is not None or not alce_compat:
        return max_citations
    return _ALCE_MAX_CITATIONS


def _granularity(granularity: str, alce_compat: bool) -> Granularity:
    if granularity not in get_args(Granularity):
        raise ConfigError(f"granularity must be sentence or span, got {granularity!r}")
    if granularity == "span" and alce_compat:
        raise ConfigError("granularity='span' is citelab's mode: ALCE's scores sentences")
    return "span" if granularity == "span" else "sentence"


@register_scorer("citation_recall")
def citation_recall(
    judge: str | Mapping[str, Any] | Judge = DEFAULT_JUDGE,
    alce_compat: bool = False,
    max_citations: int | None = None,
    qampari: bool = False,
    granularity: Granularity = "sentence",
    *,
    judge_scores: bool = False,
) -> CitationRecall:
    """Statements whose citations together support them (ALCE's citation recall).

    ``alce_compat`` scores as ALCE does and caps citations at 3 unless told otherwise;
    ``qampari`` (ALCE mode only) scores list answers as ALCE's QAMPARI mode does;
    ``granularity="span"`` (citelab's mode only) scores the spans a vendor cites;
    ``judge_scores`` records the judge's score of each judged statement (``judge_score``).
    """
    return CitationRecall(
        _judge(judge),
        alce_compat,
        _cap(alce_compat, max_citations, qampari),
        qampari,
        _granularity(granularity, alce_compat),
        judge_scores=judge_scores,
    )


def with_judge_scores(scorers: Sequence[Scorer]) -> list[Scorer]:
    """``scorers`` with each citation recall whose judge has a ``score`` method set to record
    it (``judge_scores=True``): what a run with labels scores with, so PPI++ reads the
    judge's score rather than its 0/1 verdict. The other scorers are kept as they are."""
    return [
        replace(scorer, judge_scores=True)
        if isinstance(scorer, CitationRecall) and callable(getattr(scorer.judge, "score", None))
        else scorer
        for scorer in scorers
    ]


@register_scorer("citation_precision")
def citation_precision(
    judge: str | Mapping[str, Any] | Judge = DEFAULT_JUDGE,
    alce_compat: bool = False,
    max_citations: int | None = None,
    qampari: bool = False,
    granularity: Granularity = "sentence",
) -> CitationPrecision:
    """Citations that are needed: supported and relevant (ALCE's citation precision).

    ``alce_compat`` scores as ALCE does and caps citations at 3 unless told otherwise;
    ``qampari`` (ALCE mode only) scores list answers as ALCE's QAMPARI mode does;
    ``granularity="span"`` (citelab's mode only) scores the spans a vendor cites.
    """
    return CitationPrecision(
        _judge(judge),
        alce_compat,
        _cap(alce_compat, max_citations, qampari),
        qampari,
        _granularity(granularity, alce_compat),
    )


@register_scorer("claim_recall")
def claim_recall(judge: str | Mapping[str, Any] | Judge = DEFAULT_JUDGE) -> ClaimRecall:
    """Gold claims the answer states."""
    return ClaimRecall(_judge(judge))


@register_scorer("claim_attribution")
def claim_attribution(judge: str | Mapping[str, Any] | Judge = DEFAULT_JUDGE) -> ClaimAttribution:
    """Gold claims stated and cited to one of their supporting entities."""
    return ClaimAttribution(_judge(judge))
