from hypothesis import given, settings
from hypothesis import strategies as st

from citelab.evals.scorers import split_statements, split_statements_alce


def test_sentences_lines_and_list_items_are_statements() -> None:
    text = "## Fees\n- Tuition is due in May [1].\n- Late fees apply [2]. See the office [3]."
    statements = split_statements(text)
    assert [s.claim for s in statements] == [
        "Fees",
        "Tuition is due in May.",
        "Late fees apply.",
        "See the office.",
    ]
    assert [s.citations for s in statements] == [(), (1,), (2,), (3,)]


def test_a_marker_opening_a_sentence_belongs_to_the_one_before() -> None:
    statements = split_statements("Fees are due in May. [1][2] The office opens at 9. [3]")
    assert [(s.claim, s.citations) for s in statements] == [
        ("Fees are due in May.", (1, 2)),
        ("The office opens at 9.", (3,)),
    ]


def test_markers_glued_to_the_full_stop_stay_with_their_sentence() -> None:
    statements = split_statements("Fees are due.[1] Rooms open at 9.[2, 3]")
    assert [s.citations for s in statements] == [(1,), (2, 3)]


def test_citations_follow_the_pipeline_grammar_and_are_deduplicated() -> None:
    (statement,) = split_statements("Fees are due [2-4][3] in `code [9]` May.")
    assert statement.citations == (2, 3, 4)
    assert statement.claim == "Fees are due in code [9] May."


def test_abbreviations_and_initials_do_not_end_sentences() -> None:
    statements = split_statements("Bring e.g. a passport. Ask Dr. Weber or J. Smith [1].")
    assert [s.claim for s in statements] == ["Bring e.g. a passport.", "Ask Dr. Weber or J. Smith."]


def test_offsets_point_into_the_answer() -> None:
    text = "Café 🎓 opens at 9 [1]. Fees are due [2]."
    for statement in split_statements(text):
        assert text[statement.start : statement.end] == statement.text


def test_alce_splitting_reads_the_first_line_with_alce_citation_rules() -> None:
    text = "\nFees are due [1, 2]. Rooms open [3][3].\nIgnored line [4]."
    statements = split_statements_alce(text)
    assert [(s.claim, s.citations) for s in statements] == [
        ("Fees are due, 2.", (1,)),
        ("Rooms open.", (3, 3)),
    ]
    assert text[statements[1].start : statements[1].end] == statements[1].text


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab .[]12\n-#"), max_size=60))
def test_statements_are_ordered_disjoint_spans_of_the_text(text: str) -> None:
    previous_end = 0
    for statement in split_statements(text):
        assert previous_end <= statement.start < statement.end <= len(text)
        assert text[statement.start : statement.end] == statement.text
        previous_end = statement.end
