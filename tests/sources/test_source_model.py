import pytest
from pydantic import ValidationError

from citelab import InvalidInput
from citelab.sources import RetrievalSettings, Source, parse_sources_block, sources_block


def test_entity_source_needs_only_type_id_and_title() -> None:
    source = Source(entity_type="node", entity_id="5", title="Admissions")
    assert source.uri == "entity:node/5"
    assert source.number is None
    assert source.key == ("node", "5")
    assert source.tool == "rag_search"
    assert (source.content, source.fields, source.chunk_ids) == ("", {}, ())


def test_non_entity_sources_fall_back_to_url_then_title() -> None:
    by_url = Source(url="https://uni.example/fees", title="Fees")
    by_title = Source(title="Fees & grants")
    assert by_url.uri == "https://uni.example/fees"
    assert by_url.key == ("url:", "https://uni.example/fees")
    assert by_title.uri == "urn:citelab:title:Fees%20%26%20grants"
    assert by_title.key == ("title:", "Fees & grants")
    # A fallback key can never equal an entity key: entity types contain no colon.
    assert Source(entity_type="url", entity_id="x", title="t").key == ("url", "x")


def test_explicit_uri_is_kept() -> None:
    source = Source(entity_type="node", entity_id="5", uri="entity:node/5?rev=2", title="A")
    assert source.uri == "entity:node/5?rev=2"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"entity_type": "node", "title": "A"}, "entity_type and entity_id must be given together"),
        ({"content": "text only"}, "a source needs an entity, a url or a title"),
        ({"title": "A", "number": 0}, "greater than or equal to 1"),
        ({"title": "A", "colour": "red"}, "Extra inputs are not permitted"),
        ({"entity_type": "url:", "entity_id": "x"}, "String should match pattern"),
    ],
)
def test_invalid_sources_are_rejected(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Source.model_validate(kwargs)


def test_to_reference_carries_the_card_fields() -> None:
    source = Source(
        number=2,
        entity_type="node",
        entity_id="5",
        title="Admissions",
        url="https://uni.example/5",
        langcode="de",
        content="Apply   by\nMarch. " + "word " * 100,
    )
    reference = source.to_reference()
    assert (reference.number, reference.uri, reference.title) == (2, "entity:node/5", "Admissions")
    assert (reference.url, reference.langcode) == ("https://uni.example/5", "de")
    assert reference.snippet.startswith("Apply by March. word")
    assert len(reference.snippet) <= 240
    assert reference.snippet.endswith("…")


def test_to_reference_needs_a_number() -> None:
    with pytest.raises(InvalidInput, match="entity:node/5 has no number yet"):
        Source(entity_type="node", entity_id="5", title="A").to_reference()


def test_to_reference_without_title_shows_the_uri() -> None:
    source = Source(number=1, url="https://uni.example/x")
    assert source.to_reference().title == "https://uni.example/x"


def test_sources_block_writes_numbered_sources_and_reads_back() -> None:
    sources = [
        Source(number=1, entity_type="node", entity_id="5", title='Fees "2025"', content="300 €"),
        Source(entity_type="node", entity_id="6", title="Unnumbered", content="hidden"),
        Source(number=2, url="https://uni.example/x", title="<b>x</b>", content="a </source> b"),
    ]
    block = sources_block(sources)
    assert "Unnumbered" not in block
    assert "<b>" not in block
    read = parse_sources_block(block)
    assert [(s.number, s.uri, s.title, s.content) for s in read] == [
        (1, "entity:node/5", 'Fees "2025"', "300 €"),
        (2, "https://uni.example/x", "<b>x</b>", "a </source> b"),
    ]


def test_retrieval_settings_defaults_and_limits() -> None:
    settings = RetrievalSettings()
    assert (settings.threshold, settings.entity_cap, settings.reranker) == (None, None, None)
    assert (settings.view_mode, settings.max_results, settings.index) == ("chunk", 10, "default")
    with pytest.raises(ValidationError, match="view_mode"):
        RetrievalSettings.model_validate({"view_mode": "card"})
    with pytest.raises(ValidationError, match="entity_cap"):
        RetrievalSettings(entity_cap=0)
    with pytest.raises(ValidationError, match="max_results"):
        RetrievalSettings(max_results=0)
