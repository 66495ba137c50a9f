"""Labeller, the kernel side: front-end labels saved before the next pair shows, acks, undo,
resuming in a new labeller, judges' verdicts hidden until labelled, the static copy escaped."""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import citelab
from citelab import InvalidInput
from citelab.evals import LabelFile, LexicalJudge, read_label_file
from citelab.evals.labels import LabelItem, LabelPassage
from citelab.widget import Labeller

from .conftest import HOSTILE_TITLE, comm_of

pytestmark = pytest.mark.usefixtures("comms")

PASSAGE = "Tuition fees are due in May. Late payment costs a fee of 50 euros."
CLAIMS = [
    "Tuition fees are due in May.",
    "Late payment costs 50 euros.",
    "Tuition fees are due in June.",
    "Fees are due in May and cost 50 euros.",
    "The library opens at 8 am.",
    "Late fees of 50 euros apply after May.",
]
STRICT = LexicalJudge(threshold=1.0)
LENIENT = LexicalJudge(threshold=0.6)


def pairs() -> list[LabelItem]:
    return [
        LabelItem(
            id=f"run/case-{i}/citation-1",
            claim=claim,
            passages=(LabelPassage(text=PASSAGE, title="Fees", uri="entity:page/fees", number=1),),
            origin={"run": "run", "case": f"case-{i}"},
        )
        for i, claim in enumerate(CLAIMS)
    ]


def label_from_front_end(labeller: Labeller, label: str, request_id: str = "r1") -> dict[str, Any]:
    """Send a label of the pair shown, as the view does; returns the kernel's ack."""
    sent = comm_of(labeller)
    before = len(sent.custom)
    assert labeller.item is not None
    sent.from_front_end(
        {"type": "label", "request_id": request_id, "id": labeller.item["id"], "label": label}
    )
    [ack] = sent.custom[before:]
    return ack


def test_a_label_from_the_front_end_is_on_disk_before_the_next_pair_shows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "labels.jsonl"
    labeller = Labeller(pairs(), path, sample=4, seed=1)
    first = labeller.item
    assert first is not None
    assert labeller.progress["decided"] == 0
    assert labeller.progress["wanted"] == 4
    ack = label_from_front_end(labeller, "partially_supported")
    assert ack == {"type": "ack", "request_id": "r1"}
    [saved] = read_label_file(path)
    assert (saved.id, saved.label, saved.claim) == (
        first["id"],
        "partially_supported",
        first["claim"],
    )
    assert saved.evidence == [PASSAGE]
    assert saved.origin["run"] == "run"
    assert saved.origin["seed"] == 1
    # The traits moved on in one message, sent before the ack.
    sent = comm_of(labeller)
    updates = [data["state"] for kind, data in sent.published if data.get("method") == "update"]
    assert {"item", "progress", "last"} <= set(updates[-1])
    assert labeller.item is not None
    assert labeller.item["id"] != first["id"]
    assert labeller.progress["decided"] == 1
    assert labeller.last is not None
    assert labeller.last["label"] == "partially_supported"


def test_the_pair_payload_marks_the_supporting_sentence(tmp_path: Path) -> None:
    labeller = Labeller(pairs(), tmp_path / "labels.jsonl", seed=0)
    item = labeller.item
    assert item is not None
    [passage] = item["passages"]
    assert passage["text"] == PASSAGE
    assert passage["title"] == "Fees"
    assert passage["number"] == 1
    [span] = passage["cited_spans"]
    assert PASSAGE[span["start"] : span["end"]] == span["text"]
    assert span["text"] in item["claim"] or set(item["claim"].split()) & set(span["text"].split())
    assert ["case", item["id"].split("/")[1]] in item["context"]
    assert item["verdicts"] == []


def test_skips_do_not_count_and_the_sample_ends(tmp_path: Path) -> None:
    labeller = Labeller(pairs(), tmp_path / "labels.jsonl", sample=2)
    labeller.label("skip")
    assert labeller.progress["decided"] == 0
    assert labeller.progress["skipped"] == 1
    labeller.label("supported")
    assert labeller.remaining == 1
    labeller.label("not_supported")
    assert labeller.item is None
    assert labeller.current is None
    assert labeller.remaining == 0
    with pytest.raises(InvalidInput, match="nothing left to label"):
        labeller.label("supported")
    assert [line.label for line in labeller.labels()] == ["skip", "supported", "not_supported"]
    assert "Nothing left to label" in labeller.static_html()


def test_a_new_labeller_resumes_after_the_last_label(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    first = Labeller(pairs(), path, sample=4, seed=5)
    order = []
    for label in ("supported", "not_supported"):
        assert first.current is not None
        order.append(first.current.id)
        first.label(label)  # type: ignore[arg-type]
    shown_next = first.current
    # The kernel restarts: the same cell runs again.
    again = Labeller(pairs(), path, sample=4, seed=5)
    assert again.current == shown_next
    assert again.progress["decided"] == 2
    assert again.last is not None
    assert again.last["id"] == order[-1]
    again.label("supported")
    ids = [line.id for line in read_label_file(path)]
    assert ids[:2] == order
    assert len(ids) == len(set(ids)) == 3


def test_undo_shows_the_pair_again_and_relabelling_writes_it_once(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    labeller = Labeller(pairs(), path)
    first = labeller.current
    assert first is not None
    labeller.label("supported")
    sent = comm_of(labeller)
    before = len(sent.custom)
    sent.from_front_end({"type": "undo", "request_id": "u1"})
    assert sent.custom[before:] == [{"type": "ack", "request_id": "u1"}]
    assert labeller.current == first
    assert labeller.last is None
    assert path.read_bytes() == b""
    labeller.label("not_supported")
    assert [(x.id, x.label) for x in read_label_file(path)] == [(first.id, "not_supported")]
    # Undo after a restart takes back the last label saved for these pairs too.
    again = Labeller(pairs(), path)
    assert again.undo().id == first.id
    assert again.current == first
    ack_nothing = label_undo(again, "u2")
    assert ack_nothing["error"].startswith("nothing to undo")


def label_undo(labeller: Labeller, request_id: str) -> dict[str, Any]:
    sent = comm_of(labeller)
    before = len(sent.custom)
    sent.from_front_end({"type": "undo", "request_id": request_id})
    [ack] = sent.custom[before:]
    return ack


def test_undo_leaves_another_labellers_label_alone(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    LabelFile(path).append(LabelItem.of("Other claim.", "Other passage.", id="other").line("skip"))
    labeller = Labeller(pairs(), path)
    with pytest.raises(InvalidInput, match="a pair this labeller does not show \\('other'\\)"):
        labeller.undo()
    assert [x.id for x in read_label_file(path)] == ["other"]


def test_stale_and_bad_front_end_messages_get_an_error_ack(tmp_path: Path) -> None:
    labeller = Labeller(pairs(), tmp_path / "labels.jsonl")
    sent = comm_of(labeller)
    assert labeller.item is not None
    shown = labeller.item["id"]
    messages = [
        {"type": "label", "request_id": "a", "id": "run/case-0/other", "label": "supported"},
        {"type": "label", "request_id": "b", "id": shown, "label": "maybe"},
        {"type": "label", "request_id": "c", "label": "supported"},
        {"type": "dance", "request_id": "d"},
        ["not", "an", "object"],
    ]
    for message in messages:
        sent.from_front_end(message)  # type: ignore[arg-type]
    acks = sent.custom[-len(messages) :]
    assert [ack["request_id"] for ack in acks] == ["a", "b", "c", "d", None]
    assert "is not the one shown" in acks[0]["error"]
    assert "label:" in acks[1]["error"]
    assert "id: Field required" in acks[2]["error"]
    assert "bad front-end message" in acks[3]["error"]
    assert "bad front-end message" in acks[4]["error"]
    assert labeller.item["id"] == shown  # nothing moved
    assert not (tmp_path / "labels.jsonl").exists()


def test_a_write_that_fails_keeps_the_pair_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    labeller = Labeller(pairs(), tmp_path / "a-file" / "labels.jsonl")
    shown = labeller.item
    ack = label_from_front_end(labeller, "supported")
    assert ack["error"].startswith("cannot write labels ")
    assert labeller.item == shown
    assert labeller.progress["decided"] == 0


class LengthScore:
    """A judge with a score: the claim's length over 100 (a probability here)."""

    name = "length"

    def score(self, statement: str, evidence: str) -> float:
        return len(statement) / 100

    def supports(self, statement: str, evidence: str) -> bool:
        return self.score(statement, evidence) >= 0.3

    def config(self) -> dict[str, object]:
        return {"name": self.name}


def test_a_label_keeps_the_scores_of_judges_that_give_one(tmp_path: Path) -> None:
    labeller = Labeller(pairs(), tmp_path / "a.jsonl", judges=[LengthScore(), STRICT])
    shown = labeller.current
    assert shown is not None
    labeller.label("supported")
    [line] = read_label_file(tmp_path / "a.jsonl")
    assert line.origin["scores"] == {"length": len(shown.claim) / 100}  # the lexical has none
    assert line.origin["verdicts"] == {
        "length": len(shown.claim) >= 30,
        "lexical": STRICT.supports(shown.claim, PASSAGE),
    }
    verdicts_only = Labeller(pairs(), tmp_path / "b.jsonl", judges=[STRICT])
    verdicts_only.label("supported")
    [line] = read_label_file(tmp_path / "b.jsonl")
    assert "scores" not in line.origin
    assert set(line.origin) == {
        "run", "case", "verdicts", "verdicts_shown_before", "seed", "labelled_at", "sampling"
    }  # fmt: skip


def test_verdicts_show_after_the_label_unless_asked_before(tmp_path: Path) -> None:
    after = Labeller(pairs(), tmp_path / "a.jsonl", disagree=[STRICT, LENIENT])
    assert after.show_verdicts == "after"
    assert after.item is not None
    assert after.item["verdicts"] == []
    shown = after.current
    assert shown is not None
    after.label("supported")
    assert after.last is not None
    names = [v["judge"] for v in after.last["verdicts"]]
    assert len(names) == 2
    said = [STRICT.supports(shown.claim, PASSAGE), LENIENT.supports(shown.claim, PASSAGE)]
    assert [v["verdict"] for v in after.last["verdicts"]] == said
    [line] = read_label_file(tmp_path / "a.jsonl")
    assert list(line.origin["verdicts"].values()) == said
    assert line.origin["verdicts_shown_before"] is False
    assert line.origin["disagree"] == names
    # Disagreements first: the first pair shown is one the two judges disagree on.
    assert said[0] != said[1]
    assert after.progress["disagreements"] >= 1

    before = Labeller(pairs(), tmp_path / "b.jsonl", judges=[STRICT], show_verdicts="before")
    assert before.item is not None
    assert len(before.item["verdicts"]) == 1
    before.label("supported")
    assert read_label_file(tmp_path / "b.jsonl")[0].origin["verdicts_shown_before"] is True
    never = Labeller(pairs(), tmp_path / "c.jsonl", judges=[STRICT], show_verdicts="never")
    never.label("supported")
    assert never.last is not None
    assert never.last["verdicts"] == []
    with pytest.raises(InvalidInput, match="show_verdicts must be one of"):
        Labeller(pairs(), tmp_path / "d.jsonl", show_verdicts="sometimes")  # type: ignore[arg-type]


def test_a_run_folder_and_a_repaired_file_are_told_in_notices(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(LabelItem.of("a", "b", id="x").line("skip").to_bytes()[:20])
    labeller = Labeller(pairs(), path)
    assert len(labeller.notices) == 1
    assert "cut off" in labeller.notices[0]
    with pytest.raises(InvalidInput, match="no such run folder"):
        Labeller(tmp_path / "nowhere", tmp_path / "l.jsonl")
    with pytest.raises(InvalidInput, match="no cited statements"):
        Labeller([], tmp_path / "l.jsonl")


def test_the_static_copy_escapes_untrusted_text(tmp_path: Path) -> None:
    hostile = LabelItem(
        id="x",
        claim=HOSTILE_TITLE,
        passages=(LabelPassage(text=f"{HOSTILE_TITLE} passage"),),
    )
    labeller = Labeller([hostile], tmp_path / "labels.jsonl")
    page = labeller.static_copy_html()
    assert element_names(page) <= {"div", "p", "strong", "code"}
    assert HOSTILE_TITLE in html.unescape(page)  # shown as text
    # The trait holds the text as it is: the front end shows it as text.
    assert labeller.item is not None
    assert labeller.item["claim"] == HOSTILE_TITLE


def test_the_widget_is_public_and_loads_its_own_bundle() -> None:
    assert citelab.Labeller is Labeller
    assert "initialize" in str(Labeller._esm)
    assert str(Labeller._esm) != str(citelab.Chat._esm)
    assert ".citelab-labeller" in str(Labeller._css)
    traits = Labeller.class_own_traits(sync=True)
    assert set(traits) == {
        "item", "progress", "last", "notices", "file_name", "show_verdicts", "_kernel_session",
    }  # fmt: skip


def test_the_labels_become_pairs_for_calibration(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    labeller = Labeller(pairs(), path, sample=3)
    for label in ("supported", "partially_supported", "skip", "not_supported"):
        labeller.label(label)  # type: ignore[arg-type]
    decided = labeller.pairs()
    assert [p.label for p in decided] == [True, False, False]
    assert json.loads(path.read_text().splitlines()[2])["label"] == "skip"


def element_names(page: str) -> set[str]:
    """The elements an HTML page makes (what a browser would build)."""
    found: set[str] = set()

    class Collector(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.add(tag)

    Collector().feed(page)
    return found


KILLED_KERNEL = """
import os, signal, sys
from citelab.evals.labels import LabelItem, LabelPassage
from citelab.widget import Labeller

items = [
    LabelItem(
        id=f"run/case-{i}/citation-1", claim=claim, origin={"run": "run", "case": f"case-{i}"},
        passages=(LabelPassage(text=sys.argv[2], title="Fees", uri="entity:page/fees", number=1),),
    )
    for i, claim in enumerate(sys.argv[3:])
]
labeller = Labeller(items, sys.argv[1], sample=None, seed=5)
labeller.label("supported")
labeller.label("partially_supported")
print(labeller.current.id, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # as a kernel killed at once: no exit handler runs
"""


def test_a_process_killed_right_after_labelling_loses_nothing(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "labels.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", KILLED_KERNEL, str(path), PASSAGE, *CLAIMS],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -9, done.stderr
    shown_next = done.stdout.strip()
    assert [line.label for line in read_label_file(path)] == ["supported", "partially_supported"]
    again = Labeller(pairs(), path, sample=None, seed=5)
    assert again.current is not None
    assert again.current.id == shown_next
    assert again.progress["decided"] == 2


def test_after_each_label_the_estimate_and_the_labels_still_needed_show(tmp_path: Path) -> None:
    labeller = Labeller(pairs(), tmp_path / "labels.jsonl", sample=6, judges=[STRICT])
    assert labeller.progress["estimate"] is None
    labeller.label("supported")
    labeller.label("not_supported")
    shown = labeller.progress["estimate"]
    assert shown["labels"] == 2
    assert shown["too_few"]  # two labels: Wilson's interval, never a zero-width one
    assert shown["low"] < shown["value"] < shown["high"]
    [line, *_] = read_label_file(tmp_path / "labels.jsonl")
    assert line.origin["sampling"] == {"design": "uniform", "probability": 1.0}
