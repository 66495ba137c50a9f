"""Property tests: the pipeline's own finalize, anchors and message always pass the scorers."""

from hypothesis import given, settings
from hypothesis import strategies as st

from citelab.contract import build_message
from citelab.evals import GoldTurn
from citelab.evals.records import (
    RoundRecord,
    SourceRecord,
    TurnRecord,
)
from citelab.evals.scorers import (
    anchor_validity,
    citation_precision,
    citation_recall,
    dangling_markers,
    first_citation_order,
    numbering_stability,
    uncited_dropping,
)
from citelab.sources import Source, build_anchors, finalize_citations

GOLD = GoldTurn(question="q")
SENTENCES = [
    "Fees are due in May",
    "Rooms open at nine",
    "The library lends laptops",
    "Parking costs ten euros",
    "Badges are blue",
]


@st.composite
def answers(draw: st.DrawFn) -> tuple[str, list[Source]]:
    count = draw(st.integers(min_value=1, max_value=5))
    sources = [
        Source(
            number=n,
            entity_type="page",
            entity_id=f"p{n}",
            title=f"P{n}",
            content=SENTENCES[n - 1] + ".",
        )
        for n in range(1, count + 1)
    ]
    parts = []
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        numbers = draw(st.lists(st.integers(min_value=1, max_value=8), min_size=0, max_size=3))
        style = draw(st.sampled_from(["chain", "group"]))
        marker = (
            "".join(f"[{n}]" for n in numbers)
            if style == "chain"
            else (f"[{', '.join(map(str, numbers))}]" if numbers else "")
        )
        parts.append(f"{draw(st.sampled_from(SENTENCES))} {marker}.")
    return " ".join(parts), sources


def _record(raw: str, held: list[Source]) -> tuple[TurnRecord, set[tuple[int, int]]]:
    finalized = finalize_citations(raw, held)
    anchors = build_anchors(finalized)
    final = list(finalized.sources)
    message = build_message(finalized.text, final, anchors).to_wire()
    as_record = [
        SourceRecord(number=s.number or 0, uri=s.uri, title=s.title, content=s.content)
        for s in final
    ]
    record = TurnRecord(
        text=finalized.text,
        raw_text=raw,
        sources=as_record,
        candidates=[
            SourceRecord(number=s.number or 0, uri=s.uri, title=s.title, content=s.content)
            for s in held
        ],
        message=message,
        rounds=[RoundRecord(index=0, text=raw, visible={s.number or 0: s.uri for s in held})],
        mapping=dict(finalized.renumbering),
        dangling=len(finalized.dangling),
    )
    return record, {(d.start, d.number) for d in finalized.dangling}


@settings(max_examples=80, deadline=None)
@given(answers())
def test_finalized_answers_keep_every_pipeline_promise(answer: tuple[str, list[Source]]) -> None:
    raw, held = answer
    record, dangling = _record(raw, held)
    for scorer in (
        uncited_dropping(),
        first_citation_order(),
        anchor_validity(),
        numbering_stability(),
    ):
        value = scorer(record, GOLD).value
        assert value in (None, 1.0), (scorer.metric, raw)
    found = dangling_markers()(record, GOLD)
    assert {(row["at"], row["number"]) for row in found.rows if row["hit"]} == dangling
    for scorer in (citation_recall(), citation_precision()):
        score = scorer(record, GOLD)
        assert score.value is None or 0.0 <= score.value <= 1.0
        assert score.numerator <= score.denominator
