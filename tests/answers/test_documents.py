"""The local document view's access rules: :meth:`AnswerService.document` and
:func:`read_document` (what a source card's ``entity:`` link opens)."""

from __future__ import annotations

import pytest

from citelab._errors import Conflict, InvalidInput, NotFound
from citelab._paths import fixtures_dir
from citelab.answers import AnswerService
from citelab.answers._documents import read_document
from citelab.corpus import Document, Reader, load_corpus

from .conftest import ServiceFactory, scripted_agent

pytestmark = pytest.mark.anyio


async def _restricted(service: AnswerService) -> Document:
    """A document of the intranet corpus (the ``intranet`` agent's) only some roles may read."""
    assert service.agents["intranet"].corpus == "intranet"
    corpus = load_corpus(fixtures_dir() / "corpora" / "intranet.jsonl")
    return next(
        doc
        for doc in corpus
        if doc.entity_type == "node" and not doc.access.public and doc.access.roles
    )


def _allowed(document: Document) -> Reader:
    return Reader(user_id="staff-member", roles=frozenset(document.access.roles))


async def _refusal(service: AnswerService, entity_id: str, reader: Reader) -> str:
    with pytest.raises(NotFound) as refused:
        await service.document("intranet", "node", entity_id, reader)
    return str(refused.value).replace(entity_id, "<id>")


async def test_a_restricted_entity_is_not_found_like_an_unknown_one(
    make_service: ServiceFactory,
) -> None:
    service = make_service()
    restricted = await _restricted(service)
    for reader in (Reader.anonymous(), Reader(user_id="visitor", roles=frozenset({"guest"}))):
        assert not restricted.readable_by(reader)
        hidden = await _refusal(service, restricted.entity_id, reader)
        unknown = await _refusal(service, "no-such-node", reader)
        assert hidden == unknown  # nothing tells that the restricted one exists
        assert "not found in agent 'intranet'" in hidden


async def test_a_reader_with_access_gets_the_document(make_service: ServiceFactory) -> None:
    service = make_service()
    restricted = await _restricted(service)
    shown = await service.document(
        "intranet", restricted.entity_type, restricted.entity_id, _allowed(restricted)
    )
    assert shown == restricted
    payload = await read_document(service, "intranet", restricted.uri, _allowed(restricted))
    langcode, translation = restricted.translation("en")
    assert (payload.uri, payload.langcode, payload.title) == (
        restricted.uri,
        langcode,
        translation.title,
    )
    assert payload.content == translation.content


async def test_read_document_refuses_a_restricted_uri_as_an_unknown_one(
    make_service: ServiceFactory,
) -> None:
    service = make_service()
    restricted = await _restricted(service)
    messages = []
    for uri in (restricted.uri, "entity:node/no-such-node"):
        with pytest.raises(NotFound) as refused:
            await read_document(service, "intranet", uri)  # no reader: anonymous
        messages.append(str(refused.value).replace(uri, "<uri>"))
    assert messages[0] == messages[1]


async def test_public_documents_need_no_reader(make_service: ServiceFactory) -> None:
    service = make_service()
    document = await service.document("university", "page", "semester-fee")
    assert document.uri == "entity:page/semester-fee"
    assert "312" in document.translation("en")[1].content


async def test_the_agent_must_be_one_that_answers(make_service: ServiceFactory) -> None:
    service = make_service(scripted_agent("off", enabled=False))
    with pytest.raises(NotFound, match="agent 'nobody' not found"):
        await service.document("nobody", "page", "semester-fee")
    with pytest.raises(Conflict, match="agent 'off' is not enabled"):
        await service.document("off", "page", "semester-fee")


async def test_a_uri_that_names_no_entity_is_invalid_input(make_service: ServiceFactory) -> None:
    service = make_service()
    for uri in ("https://example.org/fees", "entity:page", "entity:/x", "entity:page/a b"):
        with pytest.raises(InvalidInput, match="not an entity:<type>/<id> URI"):
            await read_document(service, "university", uri)
