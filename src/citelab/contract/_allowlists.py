"""The HTML allowlists: the one place that says what rendered answers may contain.

The Python renderer hands these to ``nh3``; the JavaScript front end reads the same lists
(:data:`ALLOWLISTS`, JSON-able) for DOMPurify, so both layers agree on what may reach a page.

- ``tags``: the only elements allowed.
- ``attributes``: per tag, the attributes allowed (URLs still pass the scheme check); no
  attribute is allowed on every tag (nh3's default ``title``/``lang`` are switched off).
- ``attribute_patterns``: per tag, attributes whose value must match a regular expression
  whole (``id`` and ``class``: only the ones the renderers write, never free text).
- ``attribute_values``: per tag, attributes allowed only with one of the listed values.
- ``url_schemes``: schemes allowed in ``href``; relative and fragment URLs are also allowed.
  The scheme is read after dropping every control, space and invisible separator
  (:data:`URL_IGNORED`), stricter than a browser and never looser.
- ``drop_content_tags``: removed elements whose content goes with them (not kept as text).
- ``link_rel``: the ``rel`` the sanitizer writes on every link (never taken from input).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ALLOWED_ATTRIBUTES",
    "ALLOWED_ATTRIBUTE_PATTERNS",
    "ALLOWED_ATTRIBUTE_VALUES",
    "ALLOWED_TAGS",
    "ALLOWED_URL_SCHEMES",
    "ALLOWLISTS",
    "DROP_CONTENT_TAGS",
    "LINK_REL",
    "URL_IGNORED",
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

# Plain ASCII patterns, read the same by Python's re and JavaScript's RegExp (whole match).
ALLOWED_ATTRIBUTE_PATTERNS: dict[str, dict[str, str]] = {
    "a": {
        "class": "citation",
        "data-ref-index": "[0-9]{1,6}",
        "data-ref-turn": "[A-Za-z0-9_-]{0,128}",
    },
    "li": {
        "id": "cite-[A-Za-z0-9_-]{1,64}-[0-9]{1,6}",
        "class": "citelab-source",
        "data-ref-index": "[0-9]{1,6}",
        "data-ref-turn": "[A-Za-z0-9_-]{0,128}",
    },
    "ol": {"class": "citelab-sources", "start": "[0-9]{1,9}"},
    "ul": {"class": "citelab-sources"},
    "code": {"class": "language-[A-Za-z0-9_+#.-]{1,40}"},
    "th": {"data-align": "left|right|center"},
    "td": {"data-align": "left|right|center"},
}

ALLOWED_ATTRIBUTE_VALUES: dict[str, dict[str, frozenset[str]]] = {
    "a": {"target": frozenset({"_blank"})},
}

ALLOWED_URL_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})

LINK_REL = "noopener noreferrer"

# DOMPurify's FORBID_CONTENTS (minus the allowed thead): what is inside these is never text.
DROP_CONTENT_TAGS: frozenset[str] = frozenset(
    {
        *("annotation-xml", "audio", "colgroup", "desc", "foreignobject", "head", "iframe"),
        *("math", "mi", "mn", "mo", "ms", "mtext", "noembed", "noframes", "noscript"),
        *("plaintext", "script", "style", "svg", "template", "title", "video", "xmp"),
    }
)

URL_IGNORED = (
    "[\\u0000-\\u0020\\u007f-\\u009f\\u00a0\\u1680\\u180e\\u2000-\\u2029\\u205f\\u3000\\ufeff]"
)
"""Characters dropped from a URL before its scheme is read (a regular expression class)."""

ALLOWLISTS: dict[str, Any] = {
    "tags": sorted(ALLOWED_TAGS),
    "attributes": {tag: sorted(names) for tag, names in sorted(ALLOWED_ATTRIBUTES.items())},
    "attribute_patterns": {
        tag: dict(sorted(patterns.items()))
        for tag, patterns in sorted(ALLOWED_ATTRIBUTE_PATTERNS.items())
    },
    "attribute_values": {
        tag: {name: sorted(values) for name, values in sorted(allowed.items())}
        for tag, allowed in sorted(ALLOWED_ATTRIBUTE_VALUES.items())
    },
    "url_schemes": sorted(ALLOWED_URL_SCHEMES),
    "url_ignored": URL_IGNORED,
    "drop_content_tags": sorted(DROP_CONTENT_TAGS),
    "allow_relative_urls": True,
    "link_rel": LINK_REL,
}
"""Every list above as plain JSON data, for the front end."""
