"""Reading labelled support data: WiCE's claim and oracle-chunk files, JSON Lines and CSV with
named columns, the labelling widget's lines, three-way labels and their mapping, bad rows.

WiCE's dev split is third-party data read from ``../shared/testdata/wice/`` (the tests that
need it skip when it is absent); the other files are written here, in WiCE's shape where a
test is about that shape, with text of our own.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from citelab import InvalidInput
from citelab.evals import LabelColumns, LabelSet, load_label_set
from citelab.evals.cards import load_labels
from citelab.evals.labels import LabelledPair, parse_label_map

ROOT = Path(__file__).resolve().parents[3]
WICE = ROOT.parent / "shared" / "testdata" / "wice"
needs_wice = pytest.mark.skipif(
    not (WICE / "oracle_claim_dev.jsonl").is_file(),
    reason=f"WiCE's dev split is not in {WICE} (third-party data kept outside the repository)",
)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def wice_claim(ident: str, label: str, claim: str = "The ferry leaves at noon.") -> dict[str, Any]:
    return {
        "label": label,
        "supporting_sentences": [[1]],
        "claim": claim,
        "evidence": ["Timetable", "The ferry leaves at noon.", "Tickets cost 5 euros."],
        "meta": {"id": ident, "claim_title": "Ferry", "claim_section": "", "claim_context": ""},
    }


def wice_chunk(ident: str, label: str, evidence: list[str], chunk: int) -> dict[str, Any]:
    return {
        "label": label,
        "claim": f"Claim {ident} holds.",
        "evidence": evidence,
        "meta": {"id": ident, "claim_title": "T", "claim_section": "", "chunk_idx": [chunk],
                 "oracle_idx": [chunk]},
    }  # fmt: skip


# --- WiCE ---------------------------------------------------------------------------------------


@needs_wice
def test_wice_oracle_chunks_are_read_as_chunks_of_claims() -> None:
    rows = read_jsonl(WICE / "oracle_claim_dev.jsonl")
    labelled = load_label_set(WICE / "oracle_claim_dev.jsonl", "wice")
    assert labelled.source.format == "wice-oracle-chunks"
    assert "best over its chunks" in labelled.source.description
    assert labelled.source.best_over_chunks
    assert labelled.source.pairs == len(rows)
    claims = {row["meta"]["id"] for row in rows}
    assert labelled.source.claims == len(claims) == len(labelled.units)
    # Every chunk is a pair of its claim, its sentences the passages, in the file's order.
    first = labelled.pairs[0]
    assert first.claim_id == rows[0]["meta"]["id"]
    assert first.id == f"{rows[0]['meta']['id']}#0"
    assert first.evidence == rows[0]["evidence"]
    assert first.claim == rows[0]["claim"]
    assert first.grade == rows[0]["label"]
    # Fully supported only: partially_supported counts as not (the default mapping).
    supported = {row["meta"]["id"] for row in rows if row["label"] == "supported"}
    assert {p.unit for p in labelled.pairs if p.label} == supported
    assert labelled.source.mapping["partially_supported"] == "no"
    assert "WiCE" in labelled.source.provenance
    assert "ODC-BY" in labelled.source.provenance
    # auto reads the same file the same way.
    assert load_label_set(WICE / "oracle_claim_dev.jsonl").pairs == labelled.pairs


@needs_wice
def test_wice_claim_files_are_one_pair_per_claim_against_the_whole_evidence() -> None:
    rows = read_jsonl(WICE / "claim_dev.jsonl")
    labelled = load_label_set(WICE / "claim_dev.jsonl")
    assert labelled.source.format == "wice-claims"
    assert not labelled.source.best_over_chunks
    assert labelled.source.pairs == labelled.source.claims == len(rows)
    by_id = {pair.id: pair for pair in labelled.pairs}
    for row in rows[:20]:
        pair = by_id[row["meta"]["id"]]
        assert pair.evidence == row["evidence"]
        assert pair.label == (row["label"] == "supported")
        assert pair.category == ""  # WiCE's claim files have no categories
    grades = {g: sum(r["label"] == g for r in rows) for g in {r["label"] for r in rows}}
    assert labelled.source.grades == dict(sorted(grades.items()))


@needs_wice
def test_partial_support_can_count_as_yes_or_be_left_out() -> None:
    rows = read_jsonl(WICE / "claim_dev.jsonl")
    partial = sum(row["label"] == "partially_supported" for row in rows)
    assert partial > 0
    as_yes = load_label_set(WICE / "claim_dev.jsonl", partial_as="yes")
    assert sum(p.label for p in as_yes.pairs) == sum(r["label"] != "not_supported" for r in rows)
    left_out = load_label_set(WICE / "claim_dev.jsonl", partial_as="skip")
    assert left_out.source.pairs == len(rows) - partial
    assert left_out.source.skipped == {"skip": 0, "partially_supported": partial}
    assert f"{partial} partially_supported" in left_out.source.mapping_text()
    assert "partially_supported → left out" in left_out.source.mapping_text()


def test_the_kind_of_a_wice_file_is_told_from_its_rows(tmp_path: Path) -> None:
    claims = write_jsonl(tmp_path / "claims.jsonl", [wice_claim("c1", "supported")])
    assert load_label_set(claims, "wice").source.format == "wice-claims"
    chunks = write_jsonl(
        tmp_path / "chunks.jsonl",
        [
            wice_chunk("c1", "supported", ["A.", "B."], 0),
            wice_chunk("c1", "supported", ["C."], 1),
            wice_chunk("c2", "not_supported", ["D."], 0),
        ],
    )
    labelled = load_label_set(chunks)
    assert labelled.source.format == "wice-oracle-chunks"
    assert [p.id for p in labelled.pairs] == ["c1#0", "c1#1", "c2#0"]
    assert labelled.units == ("c1", "c2")
    mixed = write_jsonl(
        tmp_path / "mixed.jsonl",
        [wice_claim("c1", "supported"), wice_chunk("c2", "supported", ["x"], 0)],
    )
    with pytest.raises(InvalidInput, match="mixes WiCE claim rows and oracle-chunk rows"):
        load_label_set(mixed, "wice")
    plain = write_jsonl(tmp_path / "plain.jsonl", [{"claim": "c", "evidence": "e", "label": 1}])
    with pytest.raises(InvalidInput, match=r"not a WiCE file: .*meta\.id"):
        load_label_set(plain, "wice")


def test_the_chunks_of_one_claim_must_share_its_label(tmp_path: Path) -> None:
    chunks = write_jsonl(
        tmp_path / "chunks.jsonl",
        [wice_chunk("c1", "supported", ["A."], 0), wice_chunk("c1", "not_supported", ["B."], 1)],
    )
    with pytest.raises(InvalidInput, match=r"claim 'c1' has pairs labelled both"):
        load_label_set(chunks)


def test_bad_wice_rows_name_the_file_line_and_field(tmp_path: Path) -> None:
    bad_label = wice_claim("c2", "mostly")
    no_evidence = {**wice_claim("c3", "supported"), "evidence": []}
    path = write_jsonl(
        tmp_path / "claims.jsonl", [wice_claim("c1", "supported"), bad_label, no_evidence]
    )
    with pytest.raises(InvalidInput) as caught:
        load_label_set(path)
    message = str(caught.value)
    assert 'claims.jsonl:2: field label: "mostly" is not a label' in message
    assert "claims.jsonl:3: field evidence: must be non-empty text or a list" in message


# --- JSON Lines and CSV -----------------------------------------------------------------------


def test_the_labelling_widgets_lines_are_read_as_written(tmp_path: Path) -> None:
    lines = [
        {"id": "r1", "claim": "Fees are due in May.", "evidence": ["Fees are due in May."],
         "label": "supported", "category": "dates", "origin": {"run": "x", "case": "c1"}},
        {"id": "r2", "claim": "Fees are due in June.", "evidence": ["Fees are due in May."],
         "label": "not_supported", "origin": {}},
        {"id": "r3", "claim": "Fees and rooms are due.", "evidence": ["Fees are due.", "Rooms."],
         "label": "partially_supported", "category": "partial", "origin": {}},
        {"id": "r4", "claim": "Skip me.", "evidence": ["?"], "label": "skip", "origin": {}},
    ]  # fmt: skip
    labelled = load_label_set(write_jsonl(tmp_path / "mine.jsonl", lines))
    assert labelled.source.format == "jsonl"
    assert [(p.id, p.label, p.grade, p.category) for p in labelled.pairs] == [
        ("r1", True, "supported", "dates"),
        ("r2", False, "not_supported", ""),
        ("r3", False, "partially_supported", "partial"),
    ]
    assert labelled.pairs[2].evidence == ["Fees are due.", "Rooms."]
    assert labelled.source.skipped == {"skip": 1}
    assert "1 skip" in labelled.source.mapping_text()
    assert len(labelled.source.sha256) == 64


@pytest.mark.parametrize(
    ("written", "label", "grade"),
    [
        (True, True, "supported"),
        (False, False, "not_supported"),
        (1, True, "supported"),
        (0, False, "not_supported"),
        ("Supported", True, "supported"),
        ("fully supported", True, "supported"),
        ("YES", True, "supported"),
        ("partially-supported", False, "partially_supported"),
        ("partial", False, "partially_supported"),
        ("Not Supported", False, "not_supported"),
        ("unsupported", False, "not_supported"),
        ("no", False, "not_supported"),
    ],
)
def test_label_spellings(tmp_path: Path, written: Any, label: bool, grade: str) -> None:
    row = {"id": "a", "claim": "c", "evidence": "e", "label": written}
    [pair] = load_label_set(write_jsonl(tmp_path / "l.jsonl", [row])).pairs
    assert (pair.label, pair.grade) == (label, grade)


def test_named_columns_and_dotted_fields(tmp_path: Path) -> None:
    rows = [
        {"sentence": "Rooms open at 9.", "passages": ["Rooms open at 9."], "gold": "yes",
         "info": {"key": 7, "kind": "times"}},
        {"sentence": "Rooms open at 8.", "passages": "Rooms open at 9.", "gold": "no",
         "info": {"key": 8, "kind": "times"}},
    ]  # fmt: skip
    columns = LabelColumns(
        claim="sentence", evidence="passages", label="gold", id="info.key", category="info.kind"
    )
    labelled = load_label_set(write_jsonl(tmp_path / "x.jsonl", rows), columns=columns)
    assert [(p.id, p.claim, p.evidence, p.label, p.category) for p in labelled.pairs] == [
        ("7", "Rooms open at 9.", ["Rooms open at 9."], True, "times"),
        ("8", "Rooms open at 8.", ["Rooms open at 9."], False, "times"),
    ]


def test_a_row_without_an_id_is_named_by_its_line(tmp_path: Path) -> None:
    rows = [
        {"claim": "a", "evidence": "e", "label": 1},
        {"claim": "b", "evidence": "e", "label": 0},
    ]
    path = tmp_path / "x.jsonl"
    path.write_text("\n" + "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [p.id for p in load_label_set(path).pairs] == ["line 2", "line 3"]


def test_csv_with_named_columns_and_passage_lists(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(
        "key,text,source,verdict,topic\n"
        "a,Rooms open at 9.,Rooms open at 9.,supported,times\n"
        'b,"Rooms open at 9, says the page.","[""Rooms open"", ""at 9.""]",partial,times\n'
        "c,Rooms close at 5.,[1] Rooms close at 6.,0,\n",
        encoding="utf-8",
    )
    columns = LabelColumns(
        claim="text", evidence="source", label="verdict", id="key", category="topic"
    )
    labelled = load_label_set(path, columns=columns, partial_as="yes")
    assert labelled.source.format == "csv"
    assert [(p.id, p.evidence, p.label, p.category) for p in labelled.pairs] == [
        ("a", ["Rooms open at 9."], True, "times"),
        ("b", ["Rooms open", "at 9."], True, "times"),  # a JSON array of passages
        ("c", ["[1] Rooms close at 6."], False, ""),  # not JSON: one passage as written
    ]
    assert labelled.source.mapping["partially_supported"] == "yes"
    tsv = tmp_path / "labels.tsv"
    tsv.write_text("claim\tevidence\tlabel\nA b.\tA b.\t1\n", encoding="utf-8")
    [pair] = load_label_set(tsv).pairs
    assert (pair.id, pair.claim, pair.label) == ("line 2", "A b.", True)


def test_a_csv_without_the_named_columns_says_which_option_names_them(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("text,evidence,label\nx,y,1\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"no column 'claim' .*columns: text, evidence, label"):
        load_label_set(path)
    with pytest.raises(InvalidInput, match="--claim-column"):
        load_label_set(path)
    (tmp_path / "empty.csv").write_text("", encoding="utf-8")
    with pytest.raises(InvalidInput, match="empty"):
        load_label_set(tmp_path / "empty.csv")


def test_bad_rows_name_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"id": "a", "claim": "c", "evidence": "e", "label": True}),
                json.dumps({"id": "b", "claim": "c", "evidence": "e", "label": "maybe"}),
                json.dumps({"id": "a", "claim": "c", "evidence": "e", "label": False}),
                "{not json",
                json.dumps({"id": "d", "claim": "", "evidence": "e", "label": 1}),
                json.dumps({"id": "e", "claim": "c", "evidence": [1, 2], "label": 1}),
                json.dumps({"id": "f", "claim": "c", "evidence": "e"}),
                json.dumps({"id": ["g"], "claim": "c", "evidence": "e", "label": 2}),
                json.dumps(["not", "an", "object"]),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InvalidInput) as caught:
        load_label_set(path)
    message = str(caught.value)
    assert "labels.jsonl:4: invalid JSON" in message
    # JSON problems are told first (the file is not read further while they stand).
    path.write_text(path.read_text(encoding="utf-8").replace("{not json\n", ""), "utf-8")
    with pytest.raises(InvalidInput) as caught:
        load_label_set(path)
    message = str(caught.value)
    for expected in (
        'labels.jsonl:2: field label: "maybe" is not a label',
        "labels.jsonl:3: id 'a' was already used on line 1",
        "labels.jsonl:4: field claim: must be non-empty text",
        "labels.jsonl:5: field evidence: must be non-empty text or a list of passages",
        "labels.jsonl:6: field label: missing",
        "labels.jsonl:7: field id: must be a string or an integer",
        "labels.jsonl:7: field label: 2 is not a label",
        "labels.jsonl:8: expected an object, got list",
    ):
        assert expected in message


def test_files_that_give_nothing_to_judge_are_refused(tmp_path: Path) -> None:
    only_skips = write_jsonl(
        tmp_path / "s.jsonl", [{"id": "a", "claim": "c", "evidence": "e", "label": "skip"}]
    )
    with pytest.raises(InvalidInput, match="no labelled pairs"):
        load_label_set(only_skips)
    with pytest.raises(InvalidInput, match="a folder"):
        load_label_set(tmp_path)
    with pytest.raises(InvalidInput, match="not a file"):
        load_label_set(tmp_path / "missing.jsonl")
    with pytest.raises(InvalidInput, match="partial_as must be one of no, yes, skip"):
        load_label_set(only_skips, partial_as="maybe")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="no labelled pairs"):
        LabelSet.of([])


def test_our_own_set_says_who_wrote_and_labelled_it() -> None:
    labelled = load_label_set()
    assert labelled.source.name == "citelab's own set"
    assert "written and labelled by citelab's developers" in labelled.source.provenance
    assert labelled.source.claims == labelled.source.pairs == len(load_labels())
    assert {p.category for p in labelled.pairs} >= {"paraphrase", "negation", "numbers"}


def test_pairs_in_memory_may_name_their_claim() -> None:
    pairs = [
        LabelledPair(id="x#0", claim="c", evidence=["a"], label=True, claim_id="x"),
        LabelledPair(id="x#1", claim="c", evidence=["b"], label=True, claim_id="x"),
        LabelledPair(id="y", claim="d", evidence="e", label=0),  # type: ignore[arg-type]
    ]
    labelled = LabelSet.of(pairs)
    assert labelled.units == ("x", "y")
    assert labelled.source.best_over_chunks
    assert labelled.source.claims == 2


# --- labels as their authors wrote them ------------------------------------------------------

# AttributionBench's shape (question, claim, evidence, attribution_label, src_dataset, id),
# with text of our own.
ATTRIBUTION_ROWS = [
    {"question": "When does the ferry leave?", "claim": "The ferry leaves at 9 am.",
     "evidence": "The ferry leaves at 9 am from pier 3.", "attribution_label": "attributable",
     "src_dataset": "ours", "id": "a1"},
    {"question": "When does the ferry leave?", "claim": "The ferry leaves at noon.",
     "evidence": "The ferry leaves at 9 am from pier 3.",
     "attribution_label": "not attributable", "src_dataset": "ours", "id": "a2"},
    {"question": "Where is the car park?", "claim": "The car park is on Quay Street.",
     "evidence": "Parking is on Quay Street.", "attribution_label": "Attributable",
     "src_dataset": "ours", "id": "a3"},
]  # fmt: skip
ATTRIBUTION_MAP = {"attributable": "supported", "not attributable": "not_supported"}


def write_attribution_file(tmp_path: Path) -> Path:
    path = tmp_path / "attribution.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ATTRIBUTION_ROWS), encoding="utf-8")
    return path


def test_a_files_own_label_spellings_are_read_through_a_label_map(tmp_path: Path) -> None:
    path = write_attribution_file(tmp_path)
    columns = LabelColumns(label="attribution_label")
    with pytest.raises(InvalidInput, match="--label-map 'not attributable=supported'"):
        load_label_set(path, columns=columns)
    labelled = load_label_set(path, columns=columns, label_map=ATTRIBUTION_MAP)
    assert [(p.id, p.label, p.grade) for p in labelled.pairs] == [
        ("a1", True, "supported"),
        ("a2", False, "not_supported"),
        ("a3", True, "supported"),
    ]
    assert labelled.source.label_map == ATTRIBUTION_MAP
    assert "read 'attributable' as supported" in labelled.source.mapping_text()


@pytest.mark.parametrize(
    ("label_map", "problem"),
    [
        ({"attributable": "maybe"}, "'maybe' is not a grade"),
        ({" ": "supported"}, "is not a label spelling"),
        ({"attributable": "supported", "Attributable": "not_supported"}, "mapped to both"),
    ],
)
def test_a_bad_label_map_is_refused_with_the_entry(
    tmp_path: Path, label_map: dict[str, str], problem: str
) -> None:
    path = write_attribution_file(tmp_path)
    with pytest.raises(InvalidInput, match=problem):
        load_label_set(path, columns=LabelColumns(label="attribution_label"), label_map=label_map)


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (["attributable=supported,not attributable=not_supported"], ATTRIBUTION_MAP),
        (["attributable=supported", "not attributable=not_supported"], ATTRIBUTION_MAP),
        (["dunno = skip"], {"dunno": "skip"}),
    ],
)
def test_label_map_options_are_parsed(entries: list[str], expected: dict[str, str]) -> None:
    assert parse_label_map(entries) == expected


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        (["attributable"], "'attributable' is not SPELLING=GRADE"),
        (["attributable=supported,"], "'' is not SPELLING=GRADE"),
        (["=supported"], "is not SPELLING=GRADE"),
        (["attributable=yes please"], "is not a grade"),
    ],
)
def test_bad_label_map_options_say_which_entry(entries: list[str], problem: str) -> None:
    with pytest.raises(InvalidInput, match=problem):
        parse_label_map(entries)


def test_csv_cells_of_any_size_are_read(tmp_path: Path) -> None:
    page = "The museum opens at ten. " * 8000  # 200,000 characters: a whole web page
    assert len(page) == 200_000
    path = tmp_path / "big.csv"
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["claim", "evidence", "label"])
        writer.writerow(["The museum opens at ten.", page, "supported"])
        writer.writerow(["The museum opens at nine.", "It opens at ten.", "not_supported"])
    labelled = load_label_set(path)
    assert [len(p.evidence[0]) for p in labelled.pairs] == [200_000, 16]
    assert [p.label for p in labelled.pairs] == [True, False]
