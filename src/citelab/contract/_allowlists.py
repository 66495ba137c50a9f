"""The HTML allowlists: the one place that says what rendered answers may contain.

The Python renderer hands these to ``nh3``; the JavaScript front end reads the same lists
(:data:`ALLOWLISTS`, JSON-able) for DOMPurify, so both layers agree on what may reach a page.

- ``tags``: the only elements allowed.
- ``attributes``: per tag, attributes whose value is free (URLs still pass the scheme check).
- ``attribute_values``: per tag, attributes allowed only with one of the listed values.
- ``url_schemes``: schemes allowed in ``href``; relative and fragment URLs are also allowed.
- ``link_rel``: the ``rel`` the sanitizer writes on every link (never taken from input).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ALLOWED_ATTRIBUTES",
    "ALLOWED_ATTRIBUTE_VALUES",
    "ALLOWED_TAGS",
    "ALLOWED_URL_SCHEMES",
    "ALLOWLISTS",
    "LINK_REL",
]

ALLOWED_TAGS: frozenset[str] = frozenset(
    {
        *(f"h{level}" for level in range(1, 7)),
        *("p", "br", "strong", "em", "code", "pre", "ul", "ol", "li", "a"),
        *("table", "thead", "tbody", "tr", "th", "td"),
    }
)

# data-ref-index / data-ref-turn tie an inline marker to its list item across turns;
# data-align carries table alignment (markdown-it writes it as a style, which is not allowed).
_REF = ("data-ref-index", "data-ref-turn")
ALLOWED_ATTRIBUTES: dict[str, frozenset[str]] = {
    "a": frozenset({"href", "class", *_REF}),
    "li": frozenset({"id", "class", *_REF}),
    "ol": frozenset({"class", "start"}),
    "ul": frozenset({"class"}),
    "code": frozenset({"class"}),
    "th": frozenset({"data-align"}),
    "td": frozenset({"data-align"}),
}

ALLOWED_ATTRIBUTE_VALUES: dict[str, dict[str, frozenset[str]]] = {
    "a": {"target": frozenset({"_blank"})},
}

ALLOWED_URL_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})

LINK_REL = "noopener noreferrer"

ALLOWLISTS: dict[str, Any] = {
    "tags": sorted(ALLOWED_TAGS),
    "attributes": {tag: sorted(names) for tag, names in sorted(ALLOWED_ATTRIBUTES.items())},
    "attribute_values": {
        tag: {name: sorted(values) for name, values in sorted(allowed.items())}
        for tag, allowed in sorted(ALLOWED_ATTRIBUTE_VALUES.items())
    },
    "url_schemes": sorted(ALLOWED_URL_SCHEMES),
    "allow_relative_urls": True,
    "link_rel": LINK_REL,
}
"""Every list above as plain JSON data, for the front end."""
