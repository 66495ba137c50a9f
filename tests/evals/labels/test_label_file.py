"""Labels files: the agreed line format, one synced append per label, resuming, a torn last
line after a crash, undo, two sessions on one file, and bad files named by line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from citelab import Conflict, InvalidInput
from citelab.evals import judge_card
from citelab.evals.cards import load_labels
from citelab.evals.labels import LabelFile, LabelLine, read_label_file


def line(pair_id: str, label: str = "supported", **fields: object) -> LabelLine:
    return LabelLine.model_validate(
        {
            "id": pair_id,
            "claim": f"claim of {pair_id}",
            "evidence": [f"passage of {pair_id}", "second passage"],
            "label": label,
            **fields,
        }
    )


def test_a_line_is_exactly_the_agreed_format() -> None:
    plain = json.loads(line("a", origin={"run": "r", "verdicts": {"lexical": True}}).to_bytes())
    assert list(plain) == ["id", "claim", "evidence", "label", "origin"]  # no category: None
    assert plain == {
        "id": "a",
        "claim": "claim of a",
        "evidence": ["passage of a", "second passage"],
        "label": "supported",
        "origin": {"run": "r", "verdicts": {"lexical": True}},
    }
    with_category = json.loads(line("b", "skip", category="numbers").to_bytes())
    assert list(with_category) == ["id", "claim", "evidence", "label", "category", "origin"]
    raw = line("c", claim="Zürich ✓ 😀").to_bytes()
    assert raw.endswith(b"\n")
    assert raw.count(b"\n") == 1
    assert "Zürich ✓ 😀".encode() in raw  # UTF-8 as written, not \u escapes


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"label": "yes"}, "label"),
        ({"id": ""}, "id"),
        ({"evidence": "one passage"}, "evidence"),
        ({"extra": 1}, "extra"),
    ],
)
def test_a_bad_line_is_refused(fields: dict[str, object], problem: str) -> None:
    data = {"id": "a", "claim": "c", "evidence": ["e"], "label": "supported", **fields}
    with pytest.raises(ValueError, match=problem):
        LabelLine.model_validate(data)


def test_an_origin_that_is_not_json_is_a_clear_error() -> None:
    with pytest.raises(InvalidInput, match="label 'a': its origin is not JSON"):
        line("a", origin={"when": object()}).to_bytes()
    with pytest.raises(InvalidInput, match="not JSON"):
        line("a", origin={"score": float("nan")}).to_bytes()


def test_each_label_is_appended_and_synced_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "sub" / "labels.jsonl"  # the folder is made on the first label
    labels = LabelFile(path)
    assert not path.exists()
    assert labels.append(line("a"))
    assert len(synced) == 2  # the file, and the folder that now lists it
    # On disk before anything is closed or flushed by anyone else: another reader sees it.
    assert [json.loads(text)["id"] for text in path.read_text().splitlines()] == ["a"]
    assert labels.append(line("b", "not_supported"))
    assert len(synced) == 3
    assert path.read_bytes() == line("a").to_bytes() + line("b", "not_supported").to_bytes()
    assert labels.counts() == {"supported": 1, "not_supported": 1}


def test_a_second_session_resumes_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    first = LabelFile(path)
    for pair_id, label in [("a", "supported"), ("b", "skip"), ("c", "partially_supported")]:
        first.append(line(pair_id, label))
    again = LabelFile(path)
    assert [(x.id, x.label) for x in again.labels] == [
        ("a", "supported"),
        ("b", "skip"),
        ("c", "partially_supported"),
    ]
    assert "b" in again
    assert "z" not in again
    assert again.get("c") == line("c", "partially_supported")
    assert again.notices == []
    assert read_label_file(path) == again.labels


def test_a_pair_labelled_twice_is_written_once(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    mine, theirs = LabelFile(path), LabelFile(path)  # two sessions on one file
    assert mine.append(line("a"))
    assert not theirs.append(line("a", "not_supported"))  # it reads mine first
    assert theirs.get("a") == line("a")
    assert theirs.append(line("b"))
    assert not mine.append(line("b"))
    assert [x.id for x in read_label_file(path)] == ["a", "b"]


def test_a_torn_last_line_is_set_aside_and_its_pair_asked_again(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    labels = LabelFile(path)
    labels.append(line("a"))
    whole = line("b", "not_supported").to_bytes()
    with path.open("ab") as out:  # a crash in the middle of the second label's write
        out.write(whole[:30])
    with pytest.raises(InvalidInput, match="last line is cut off"):
        read_label_file(path)

    again = LabelFile(path)
    [notice] = again.notices
    assert "labels.jsonl: its last line was cut off (30 bytes" in notice
    assert "moved to labels.jsonl.torn" in notice
    assert "its pair is asked again" in notice
    assert [x.id for x in again.labels] == ["a"]  # b is not labelled
    assert path.read_bytes() == line("a").to_bytes()  # the fragment is out of the file...
    assert (tmp_path / "labels.jsonl.torn").read_bytes() == whole[:30] + b"\n"  # ...kept here
    assert again.append(line("b", "not_supported"))  # asked again, written once
    assert [x.id for x in read_label_file(path)] == ["a", "b"]
    assert LabelFile(path).notices == []  # nothing left to repair


def test_a_whole_last_line_without_its_line_end_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(line("a").to_bytes() + line("b").to_bytes()[:-1])
    labels = LabelFile(path)
    assert [x.id for x in labels.labels] == ["a", "b"]
    assert "line end was added" in labels.notices[0]
    assert path.read_bytes().endswith(b"\n")
    assert labels.append(line("c"))
    assert [x.id for x in read_label_file(path)] == ["a", "b", "c"]
    assert not (tmp_path / "labels.jsonl.torn").exists()


def test_undo_takes_the_last_line_out(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    labels = LabelFile(path)
    labels.append(line("a"))
    labels.append(line("b", "skip"))
    with pytest.raises(Conflict, match="its last label is for 'b', not 'a'"):
        labels.undo("a")
    assert labels.undo("b") == line("b", "skip")
    assert path.read_bytes() == line("a").to_bytes()
    assert "b" not in labels
    assert labels.append(line("b", "supported"))  # labelled again: once in the file
    assert [(x.id, x.label) for x in LabelFile(path).labels] == [
        ("a", "supported"),
        ("b", "supported"),
    ]
    labels.undo()
    labels.undo()
    assert path.read_bytes() == b""
    with pytest.raises(InvalidInput, match="nothing to undo"):
        labels.undo()
    with pytest.raises(InvalidInput, match="nothing to undo \\(no file yet\\)"):
        LabelFile(tmp_path / "new.jsonl").undo()


def test_a_bad_file_names_every_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    good = line("a").to_bytes().decode()
    path.write_text(
        good
        + "\n"  # a blank line is fine
        + "{not json\n"
        + json.dumps({"id": "x", "claim": "c", "evidence": ["e"], "label": "maybe"})
        + "\n"
        + good,
        encoding="utf-8",
    )
    with pytest.raises(InvalidInput) as caught:
        LabelFile(path)
    message = str(caught.value)
    assert "has 3 problem(s)" in message
    assert "labels.jsonl:3: invalid JSON" in message
    assert "labels.jsonl:4: field label:" in message
    assert "labels.jsonl:5: id 'a' is labelled already on line 1" in message


def test_a_folder_is_not_a_labels_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="is a folder"):
        LabelFile(tmp_path)
    with pytest.raises(InvalidInput, match="is a folder"):
        read_label_file(tmp_path)


def test_the_file_feeds_calibration_after_mapping(tmp_path: Path) -> None:
    """The judge card's own reader is another helper's work; until it is merged the file is
    checked through the existing reader (``load_labels``) and ``judge_card``: partly means
    "not fully supported" and skips are left out."""
    path = tmp_path / "labels.jsonl"
    labels = LabelFile(path)
    labels.append(
        line("a", "supported", claim="Fees are due in May.", evidence=["Fees are due in May."])
    )
    labels.append(
        line("b", "not_supported", claim="Fees are due in June.", evidence=["Fees are due in May."])
    )
    labels.append(line("c", "partially_supported", category="partial"))
    labels.append(line("d", "skip"))
    pairs = labels.pairs()
    assert [(p.id, p.label) for p in pairs] == [("a", True), ("b", False), ("c", False)]
    assert [p.id for p in labels.pairs("skip")] == ["a", "b"]
    assert [p.label for p in labels.pairs("yes")] == [True, False, True]
    mapped = tmp_path / "mapped.jsonl"
    mapped.write_text("".join(p.model_dump_json() + "\n" for p in pairs), encoding="utf-8")
    # Compared on the fields every reader has (main's reader adds the written grade).
    fields = ("id", "claim", "evidence", "label", "category")
    assert [p.model_dump(include=set(fields)) for p in load_labels(mapped)] == [
        p.model_dump(include=set(fields)) for p in pairs
    ]
    assert judge_card(pairs, "lexical", resamples=50).labels.pairs == 3
    with pytest.raises(InvalidInput, match="partial_as"):
        labels.pairs("maybe")  # type: ignore[arg-type]


def test_a_failed_write_leaves_no_cut_off_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk cannot be made here: os.write writes part of the line, then fails as a
    full disk does."""
    path = tmp_path / "labels.jsonl"
    labels = LabelFile(path)
    labels.append(line("a"))
    real_write = os.write

    def half_then_full(fd: int, data: bytes | memoryview) -> int:
        real_write(fd, bytes(data)[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(InvalidInput, match="No space left on device; the label was not saved"):
        labels.append(line("b"))
    monkeypatch.setattr(os, "write", real_write)
    assert path.read_bytes() == line("a").to_bytes()
    assert "b" not in labels
    assert labels.append(line("b"))
    assert [x.id for x in read_label_file(path)] == ["a", "b"]
