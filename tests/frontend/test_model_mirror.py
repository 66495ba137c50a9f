"""``js/model.js`` mirrors the widgets' synced traits: a trait added on one side only fails."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

import citelab.answers
import citelab.events
from citelab.widget import Chat, Labeller, MessageView, SourcesPanel
from citelab.widget._display import StaticFallbackWidget

MODEL_JS = Path(__file__).resolve().parents[2] / "js" / "contract" / "model.js"


def declared(name: str) -> set[str]:
    """The keys of ``export const <name> = Object.freeze({...})`` in model.js."""
    found = re.search(
        rf"export const {name} = Object\.freeze\(\{{(.*?)\n\}}\);",
        MODEL_JS.read_text(encoding="utf-8"),
        re.S,
    )
    assert found is not None, f"model.js declares no {name}"
    return set(re.findall(r"^\s+(\w+):", found.group(1), re.M))


@pytest.mark.parametrize(
    ("constant", "widget"),
    [
        ("CHAT_TRAITS", Chat),
        ("SOURCES_TRAITS", SourcesPanel),
        ("MESSAGE_TRAITS", MessageView),
        ("LABEL_TRAITS", Labeller),
        ("COMMON_TRAITS", StaticFallbackWidget),
    ],
)
def test_each_widgets_synced_traits_are_declared(
    constant: str, widget: type[StaticFallbackWidget]
) -> None:
    assert declared(constant) == set(widget.class_own_traits(sync=True))


def test_the_parser_sees_a_missing_trait() -> None:
    assert "turns" in declared("CHAT_TRAITS")
    with pytest.raises(AssertionError, match="declares no NO_SUCH_TRAITS"):
        declared("NO_SUCH_TRAITS")


def typedef_properties(name: str) -> set[str]:
    """The ``@property`` names of the JSDoc ``@typedef {object} <name>`` in model.js."""
    text = MODEL_JS.read_text(encoding="utf-8")
    found = re.search(rf"@typedef \{{object\}} {name}\b(.*?)(?=@typedef|\*/)", text, re.S)
    assert found is not None, f"model.js has no typedef {name}"
    return set(re.findall(r"@property \{[^}]*\} \[?(\w+)", found.group(1)))


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("Reference", citelab.events.Reference),
        ("CitedSpan", citelab.events.CitedSpan),
        ("History", citelab.answers.History),
        ("HistoryTurn", citelab.answers.HistoryTurn),
        ("ConversationSummary", citelab.answers.ConversationSummary),
    ],
)
def test_the_server_shapes_are_mirrored_in_the_js_types(name: str, model: type[BaseModel]) -> None:
    """The JS types of a reference, its cited spans and a conversation shown again name
    every field the server sends, and no other."""
    assert typedef_properties(name) == set(model.model_fields)


def test_protocol_lists_every_field_of_a_reference() -> None:
    protocol = (MODEL_JS.parent.parent / "PROTOCOL.md").read_text(encoding="utf-8")
    shape = re.search(
        r"A \*\*reference\*\* \(`citelab\.events\.Reference`\): `\{(.*?)\}`", protocol, re.S
    )
    assert shape is not None, "PROTOCOL.md no longer describes a reference's shape"
    listed = {part.strip().rstrip("?") for part in shape.group(1).split(",")}
    assert listed == set(citelab.events.Reference.model_fields)


def test_the_labellers_payloads_are_mirrored_in_the_js_types(tmp_path: Path) -> None:
    """Every field the labeller's traits carry is named in model.js, and no other."""
    from citelab.evals import LexicalJudge
    from citelab.evals.labels import LabelItem

    item = LabelItem.of("Fees are due in May.", "Fees are due in May. Rent is due monthly.")
    labeller = Labeller([item], tmp_path / "labels.jsonl", judges=[LexicalJudge()])
    assert labeller.item is not None
    assert set(labeller.item) == typedef_properties("LabelPair")
    assert set(labeller.item["passages"][0]) == typedef_properties("LabelPassage")
    assert set(labeller.progress) == typedef_properties("LabelProgress")
    labeller.label("supported")
    assert labeller.last is not None
    assert set(labeller.last) == typedef_properties("LastLabel")
