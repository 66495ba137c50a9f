"""The allowlists: one JSON-able definition shared with the front end."""

from __future__ import annotations

import json

from citelab.contract import ALLOWLISTS
from citelab.contract._allowlists import (
    ALLOWED_ATTRIBUTE_VALUES,
    ALLOWED_ATTRIBUTES,
    ALLOWED_TAGS,
    ALLOWED_URL_SCHEMES,
    LINK_REL,
)


def test_allowlists_are_json_and_match_the_constants() -> None:
    again = json.loads(json.dumps(ALLOWLISTS))
    assert again == ALLOWLISTS
    assert set(again["tags"]) == ALLOWED_TAGS
    assert {tag: set(names) for tag, names in again["attributes"].items()} == ALLOWED_ATTRIBUTES
    assert again["attribute_values"] == {"a": {"target": ["_blank"]}}
    assert set(ALLOWED_ATTRIBUTE_VALUES["a"]["target"]) == {"_blank"}
    assert set(again["url_schemes"]) == ALLOWED_URL_SCHEMES == {"http", "https", "mailto"}
    assert again["link_rel"] == LINK_REL
    assert again["allow_relative_urls"] is True


def test_the_tag_list_is_exactly_the_contracts() -> None:
    assert {
        *("h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "strong", "em", "code", "pre"),
        *("ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td"),
    } == ALLOWED_TAGS


def test_no_event_handler_or_style_attribute_is_allowed() -> None:
    names = {name for names in ALLOWED_ATTRIBUTES.values() for name in names}
    assert not {name for name in names if name.startswith("on")}
    assert not names & {"style", "src", "srcset", "rel", "target", "formaction"}
