"""The _meta key registry: defaults, copies, variant contracts, refusals."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from citelab import InvalidInput
from citelab.contract import (
    CITATIONS_KEY,
    SOURCE_NUMBER_KEY,
    SOURCE_QUOTES_KEY,
    SOURCE_URL_KEY,
    SUGGESTED_REPLIES_KEY,
    Anchor,
    MetaRegistry,
    PayloadContext,
    Violation,
    build_message,
    check_citation_anchors,
    default_registry,
    validate_message,
)


class Footnote(BaseModel):
    """A prompt engineer's variant: footnotes by number instead of spans."""

    model_config = ConfigDict(extra="forbid")

    number: int
    source_uri: str


def footnote_check(
    footnotes: list[Footnote | None], path: str, context: PayloadContext
) -> Iterator[Violation]:
    for index, footnote in enumerate(footnotes):
        if footnote is not None and f"[{footnote.number}]" not in (context.text or ""):
            yield Violation(
                path=f"{path}[{index}].number",
                code="marker_missing",
                message=f"the text has no [{footnote.number}] marker",
            )


def test_default_registry_holds_the_contract_keys() -> None:
    registry = default_registry()
    assert registry.keys() == sorted(
        [SOURCE_NUMBER_KEY, SOURCE_QUOTES_KEY, SOURCE_URL_KEY, CITATIONS_KEY, SUGGESTED_REPLIES_KEY]
    )
    number = registry.get(SOURCE_NUMBER_KEY)
    quotes = registry.get(SOURCE_QUOTES_KEY)
    assert number is not None
    assert number.kinds == {"resource_link"}
    assert quotes is not None
    assert quotes.kinds == {"text"}
    citations = registry.get(CITATIONS_KEY)
    replies = registry.get(SUGGESTED_REPLIES_KEY)
    url = registry.get(SOURCE_URL_KEY)
    assert citations is not None
    assert replies is not None
    assert url is not None
    assert citations.kinds == {"text"}
    assert replies.kinds == {"message"}
    assert url.kinds == {"resource_link"}
    assert citations.check is check_citation_anchors
    assert not registry.strict


def test_default_registry_is_a_fresh_copy_each_time() -> None:
    first = default_registry()
    first.register("org.example/footnotes", list[Footnote], on="text")
    assert "org.example/footnotes" in first
    assert "org.example/footnotes" not in default_registry()


def test_copy_is_independent_and_can_change_strictness() -> None:
    registry = default_registry()
    strict = registry.copy(strict=True)
    strict.unregister(SUGGESTED_REPLIES_KEY)
    assert strict.strict
    assert SUGGESTED_REPLIES_KEY in registry
    assert len(strict) == len(registry) - 1
    assert [spec.key for spec in registry] == registry.keys()
    assert [spec.key for spec in strict] == sorted(set(registry.keys()) - {SUGGESTED_REPLIES_KEY})


def _variant_message(text: str, footnotes: list[dict[str, Any]]) -> dict[str, Any]:
    wire = build_message(text, [{"uri": "entity:node/1", "title": "One"}]).to_wire()
    wire["content"][0]["_meta"] = {"org.example/footnotes": footnotes}
    return wire


def test_a_variant_contract_validates_with_its_own_schema_and_check() -> None:
    registry = default_registry()
    registry.register(
        "org.example/footnotes",
        list[Footnote],
        on="text",
        description="Footnotes by number",
        check=footnote_check,
    )
    good = _variant_message("Fees are due [1].", [{"number": 1, "source_uri": "entity:node/1"}])
    bad = _variant_message("Fees are due [1].", [{"number": 2, "source_uri": "x"}, {"n": 1}])
    assert validate_message(good, registry=registry) == []
    found = [(v.path, v.code) for v in validate_message(bad, registry=registry)]
    path = 'content[0]._meta["org.example/footnotes"]'
    assert found == [
        (f"{path}[1].number", "missing_field"),
        (f"{path}[1].source_uri", "missing_field"),
        (f"{path}[1].n", "unknown_field"),
        (f"{path}[0].number", "marker_missing"),
    ]


def test_unknown_keys_are_reported_only_by_a_strict_registry() -> None:
    wire = _variant_message("Fees [1].", [{"number": 1, "source_uri": "x"}])
    assert validate_message(wire, registry=default_registry()) == []
    found = validate_message(wire, registry=default_registry(strict=True))
    assert [(v.path, v.code) for v in found] == [
        ('content[0]._meta["org.example/footnotes"]', "meta_key_unknown")
    ]


def test_a_variant_may_reuse_the_anchor_check() -> None:
    registry = default_registry()
    registry.register("org.example/claims", list[Anchor], on="text", check=check_citation_anchors)
    wire = build_message("Fees.", [{"uri": "u", "title": "U"}]).to_wire()
    anchor = {"sourceUri": "u", "citedText": "Fees", "startIndex": 0, "endIndex": 5}
    wire["content"][0]["_meta"] = {"org.example/claims": [anchor]}
    found = validate_message(wire, registry=registry)
    assert [(v.path, v.code) for v in found] == [
        ('content[0]._meta["org.example/claims"][0].citedText', "cited_text_mismatch")
    ]


def test_a_failing_check_is_reported_not_raised() -> None:
    def broken(payload: object, path: str, context: PayloadContext) -> list[Violation]:
        raise RuntimeError("boom")

    registry = default_registry()
    registry.register("org.example/x", dict[str, int], on="message", check=broken)
    wire = build_message("t", []).to_wire()
    wire["_meta"] = {"org.example/x": {"a": 1}}
    found = validate_message(wire, registry=registry)
    assert [(v.path, v.code) for v in found] == [('_meta["org.example/x"]', "check_error")]
    assert "RuntimeError: boom" in found[0].message


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("bad key", "cannot register _meta key 'bad key': name 'bad key' is not valid"),
        ("", "must not be empty"),
        ("io.modelcontextprotocol/x", "its prefix is reserved for MCP"),
        ("dev.mcp/citations", "its prefix is reserved for MCP"),
    ],
)
def test_registering_an_ill_named_key_is_invalid_input(key: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        MetaRegistry().register(key, list[Anchor], on="text")


def test_registering_twice_needs_replace() -> None:
    registry = default_registry()
    with pytest.raises(InvalidInput, match="already registered; pass replace=True"):
        registry.register(CITATIONS_KEY, list[Anchor], on="text")
    spec = registry.register(CITATIONS_KEY, list[Anchor], on=["text", "message"], replace=True)
    assert spec.kinds == {"text", "message"}
    assert spec.check is None


@pytest.mark.parametrize("on", [[], ["text", "video"], "paragraph"])
def test_registering_on_unknown_block_kinds_is_invalid_input(on: Any) -> None:
    with pytest.raises(InvalidInput, match="'on' must name block kinds"):
        MetaRegistry().register("org.example/x", list[Anchor], on=on)


def test_registering_an_unusable_schema_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="unusable schema"):
        MetaRegistry().register("org.example/x", object(), on="text")


def test_unregistering_an_unknown_key_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="is not registered"):
        MetaRegistry().unregister("org.example/x")
