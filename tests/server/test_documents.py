"""The page's part of issue #13 over real HTTP: ``POST /api/document`` (the local document
view of ``entity:`` sources, under the access rules), the agent picker and starter questions."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import httpx

from citelab.answers._documents import DocumentPayload
from citelab.corpus import load_corpus

from .conftest import Live


def test_a_document_is_served_as_the_asker_may_read_it(live: Live) -> None:
    client = live.client("alice")
    response = client.post(
        "/api/document", json={"agent": "university", "uri": "entity:page/semester-fee"}
    )
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    document = DocumentPayload.model_validate(response.json())
    assert document.uri == "entity:page/semester-fee"
    assert "312" in document.content


def test_a_restricted_document_is_not_found_for_who_may_not_read_it(live: Live) -> None:
    corpus = load_corpus(Path(__file__).parents[2] / "fixtures" / "corpora" / "intranet.jsonl")
    restricted = next(d for d in corpus if not d.access.public and d.access.roles & {"staff"})
    uri = restricted.uri
    allowed = "alice"  # a staff member
    refused = live.client("dave").post("/api/document", json={"agent": "intranet", "uri": uri})
    assert refused.status_code == 404
    assert "not found" in refused.json()["error"]["message"]
    shown = live.client(allowed).post("/api/document", json={"agent": "intranet", "uri": uri})
    assert shown.status_code == 200
    assert shown.json()["title"] == restricted.translations[restricted.default_langcode].title


def test_bad_document_requests_say_what_is_wrong(live: Live) -> None:
    client = live.client("alice")
    cases = [
        ({"agent": "university", "uri": "https://x.org/"}, 400, "not an entity:<type>/<id> URI"),
        ({"agent": "university"}, 400, "uri: Field required"),
        ({"agent": "nobody", "uri": "entity:page/semester-fee"}, 404, "nobody"),
        ({"agent": "university", "uri": "entity:page/none"}, 404, "not found"),
    ]
    for body, status, message in cases:
        response = client.post("/api/document", json=body)
        assert response.status_code == status, (body, response.text)
        assert message in response.json()["error"]["message"]
    assert live.client().post("/api/document", json=cases[0][0]).status_code == 401


def test_the_page_has_an_agent_picker_and_the_agents_starter_questions(live: Live) -> None:
    session = live.login("alice")
    page = httpx.get(f"{live.url}/", params={"agent": "helpcentre"}, cookies=session.cookies)
    assert page.status_code == 200
    picker = re.search(r'<nav class="citelab-agents"[^>]*>(.*?)</nav>', page.text, re.S)
    assert picker is not None
    names = re.findall(r'href="\?agent=([^"]+)"', picker.group(1))
    assert {"default", "university", "helpcentre", "intranet"} <= set(names)
    assert "disabled" not in names  # only agents that answer
    assert re.search(r'href="\?agent=helpcentre" aria-current="page"', picker.group(1))
    starters = re.search(r'data-starters="([^"]*)"', page.text)
    assert starters is not None
    assert json.loads(html.unescape(starters.group(1))) == [
        "How do I reset my password?",
        "How do I turn on two-factor authentication?",
    ]
