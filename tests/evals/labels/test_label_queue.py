"""The labelling order: fixed by a seed (and nothing else), disagreements first, resumption
skips what the file holds, and the spans a passage marks."""

from __future__ import annotations

from pathlib import Path

import pytest

from citelab import InvalidInput
from citelab.evals import LexicalJudge
from citelab.evals.labels import LabelFile, LabelItem, LabelPassage, label_queue, pending
from citelab.sources import supporting_span

PASSAGE = "Tuition fees are due in May. Late payment costs a fee of 50 euros."
CLAIMS = [
    "Tuition fees are due in May.",
    "Late payment costs a fee of 50 euros.",
    "Tuition fees are due in June.",
    "Late payment costs 50 euros.",
    "Fees are due in May and cost 50 euros.",
    "The library opens at 8 am.",
    "Late fees of 50 euros apply after May.",
    "Tuition is due in May.",
]


def items(count: int = len(CLAIMS)) -> list[LabelItem]:
    return [LabelItem.of(claim, PASSAGE, id=f"p{i}") for i, claim in enumerate(CLAIMS[:count])]


STRICT = LexicalJudge(threshold=1.0)
LENIENT = LexicalJudge(threshold=0.6)


def ids(found: list[LabelItem] | tuple[LabelItem, ...]) -> list[str]:
    return [item.id for item in found]


def test_the_order_is_fixed_by_the_seed_alone() -> None:
    first = ids(label_queue(items(), seed=3).items)
    assert sorted(first) == sorted(ids(items()))
    assert ids(label_queue(reversed(items()), seed=3).items) == first  # not the input order
    assert ids(label_queue(items(), seed=4).items) != first
    # Pairs added later take their places without moving the others.
    assert [i for i in ids(label_queue(items(), seed=3).items) if i in ids(items(5))] == ids(
        label_queue(items(5), seed=3).items
    )


def test_a_larger_sample_begins_with_the_smaller(tmp_path: Path) -> None:
    labels = LabelFile(tmp_path / "labels.jsonl")
    small = pending(label_queue(items(), sample=3, seed=1), labels)
    large = pending(label_queue(items(), sample=6, seed=1), labels)
    assert ids(large)[:3] == ids(small)[:3]


def test_disagreements_come_first_in_the_seeds_order() -> None:
    differ = {
        item.id
        for item in items()
        if STRICT.supports(item.claim, PASSAGE) != LENIENT.supports(item.claim, PASSAGE)
    }
    assert 0 < len(differ) < len(CLAIMS) - 1  # the set has both kinds
    queue = label_queue(items(), seed=0, disagree=[STRICT, LENIENT])
    assert queue.disagreements == len(differ)
    assert queue.judges == queue.disagree
    order = ids(queue.items)
    assert set(order[: len(differ)]) == differ
    # Each group keeps the plain seed order.
    plain = ids(label_queue(items(), seed=0).items)
    assert order[: len(differ)] == [i for i in plain if i in differ]
    assert order[len(differ) :] == [i for i in plain if i not in differ]
    strict, lenient = queue.judges
    for item in items():
        said = {
            strict: STRICT.supports(item.claim, PASSAGE),
            lenient: LENIENT.supports(item.claim, PASSAGE),
        }
        assert queue.verdicts[item.id] == said
        assert queue.disagreed(item.id) == (item.id in differ)


def test_judges_are_names_configurations_or_objects() -> None:
    queue = label_queue(
        items(3), disagree=["lexical", {"name": "lexical", "threshold": 0.5}], judges=[STRICT]
    )
    assert queue.judges[0] == "lexical"
    assert queue.judges[1].startswith("lexical {")
    assert '"threshold": 0.5' in queue.judges[1]
    assert queue.judges[2].startswith("lexical {")
    assert '"threshold": 1.0' in queue.judges[2]
    assert len(queue.judges) == 3
    assert queue.disagree == queue.judges[:2]
    assert set(queue.verdicts["p0"]) == set(queue.judges)


def test_resuming_skips_labelled_pairs_and_stops_at_the_sample(tmp_path: Path) -> None:
    queue = label_queue(items(), sample=3, seed=2)
    labels = LabelFile(tmp_path / "labels.jsonl")
    order = ids(pending(queue, labels))
    assert order == ids(queue.items)  # nothing labelled: every pair, sample first
    labels.append(queue.items[0].line("supported"))
    labels.append(queue.items[1].line("skip"))  # a skip is no decision
    resumed = LabelFile(tmp_path / "labels.jsonl")
    assert ids(pending(queue, resumed)) == order[2:]
    labels.append(queue.items[2].line("not_supported"))
    assert ids(pending(queue, labels))[0] == order[3]  # the skipped pair's place goes on
    labels.append(queue.items[3].line("partially_supported"))
    assert pending(queue, labels) == []  # three decisions
    assert label_queue(items(), seed=2).wanted == len(CLAIMS)  # no sample: every pair


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"sample": 0}, "sample must be a positive number"),
        ({"sample": True}, "sample must be a positive number"),
        ({"seed": "x"}, "seed must be an integer"),
        ({"disagree": ["lexical"]}, "give two or more, got 1"),
        ({"disagree": ["lexical", "no-such-judge"]}, "unknown judge 'no-such-judge'"),
        ({"disagree": ["lexical", "lexical"]}, "judge lexical is given twice"),
    ],
)
def test_bad_arguments_are_clear_errors(arguments: dict[str, object], problem: str) -> None:
    with pytest.raises(Exception, match=problem) as caught:
        label_queue(items(3), **arguments)  # type: ignore[arg-type]
    assert isinstance(caught.value, InvalidInput) or "unknown judge" in problem


def test_ids_must_be_unique_and_items_items() -> None:
    twice = [LabelItem.of("a", "b", id="x"), LabelItem.of("c", "d", id="x")]
    with pytest.raises(InvalidInput, match="two pairs share the id 'x'"):
        label_queue(twice)
    with pytest.raises(InvalidInput, match="expected LabelItem pairs, got dict"):
        label_queue([{"claim": "a"}])  # type: ignore[list-item]


def test_an_item_of_plain_texts_has_a_stable_id_and_a_label_line() -> None:
    one = LabelItem.of("Fees are due in May.", ["Fees are due in May.", "Other."], topic="fees")
    assert one.id == LabelItem.of("Fees are due in May.", ["Fees are due in May.", "Other."]).id
    assert one.id != LabelItem.of("Fees are due in June.", ["Fees are due in May.", "Other."]).id
    written = one.line("supported", verdicts={"lexical": True})
    assert written.evidence == ["Fees are due in May.", "Other."]
    assert written.origin == {"topic": "fees", "verdicts": {"lexical": True}}


def test_the_marked_span_is_the_supporting_sentence() -> None:
    passage = LabelPassage(text=PASSAGE)
    claim = "Late payment costs 50 euros."
    assert passage.cited_span(claim) == supporting_span(claim, PASSAGE)
    start, end = passage.cited_span(claim) or (0, 0)
    assert PASSAGE[start:end] == "Late payment costs a fee of 50 euros."
    assert passage.cited_span("Nothing in common here.") is None  # the whole passage: no mark
    given = LabelPassage(text=PASSAGE, span=(0, 7))
    assert given.cited_span(claim) == (0, 7)
    with pytest.raises(ValueError, match="outside the text"):
        LabelPassage(text="short", span=(2, 40))
    # Code points, not UTF-16 units: an emoji before the sentence moves it by one.
    emoji = LabelPassage(text="😀 Fees are due. Late payment costs 50 euros.")
    start, end = emoji.cited_span(claim) or (0, 0)
    assert emoji.text[start:end] == "Late payment costs 50 euros."
