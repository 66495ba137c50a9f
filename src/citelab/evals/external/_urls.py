"""When a cited URL and a given source's URL name the same page.

A vendor's answer cites pages as its search tool found them (OpenAI's web search adds
``?utm_source=openai``), while the user's envelope gives each source's passage under the URL
they keep. :func:`same_page_key` turns both into one key: tracking parameters removed
(``utm_*``, click ids such as ``gclid`` and ``fbclid``, mailing-list ids) and trivial
differences undone (scheme and host case, a default port, a trailing slash, the fragment, the
order of the remaining parameters). Any other difference (another path, another parameter,
``http`` against ``https``) is another page. URIs that are not web addresses pass as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["TRACKING_PARAMETERS", "PagePassages", "is_tracking_parameter", "same_page_key"]

TRACKING_PARAMETERS = frozenset(
    {
        "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "yclid",
        "twclid", "ttclid", "igshid", "li_fat_id", "mc_cid", "mc_eid", "_ga", "_gl",
        "_hsenc", "_hsmi", "mkt_tok", "srsltid", "vero_id", "oly_anon_id", "oly_enc_id",
    }
)  # fmt: skip
"""Query parameters that say how a reader arrived, not which page (besides ``utm_*``)."""

_DEFAULT_PORTS = {"http": 80, "https": 443}


def is_tracking_parameter(name: str) -> bool:
    """A query parameter that tracks the visit (``utm_source``, ``gclid``…)."""
    lowered = name.casefold()
    return lowered.startswith("utm_") or lowered in TRACKING_PARAMETERS


def same_page_key(uri: str) -> str:
    """``uri`` with tracking parameters and trivial differences removed (see the module
    docs); two web addresses of one page give the same key."""
    try:
        parts = urlsplit(uri.strip())
        port = parts.port
    except ValueError:  # a malformed port or address: compared as written
        return uri
    scheme = parts.scheme.casefold()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return uri
    host = parts.hostname.casefold()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address keeps its brackets
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    query = sorted(
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if not is_tracking_parameter(name)
    )
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, host, path, urlencode(query), ""))


class PagePassages:
    """Passages by source URI, found by the exact URI first, then by :func:`same_page_key`
    (the first passage given for a page wins)."""

    def __init__(self, passages: Mapping[str, str]) -> None:
        self._exact = dict(passages)
        self._pages: dict[str, str] = {}
        for uri, text in passages.items():
            self._pages.setdefault(same_page_key(uri), text)

    def get(self, uri: str, default: str = "") -> str:
        """The passage of ``uri``'s page, or ``default``."""
        if uri in self._exact:
            return self._exact[uri]
        return self._pages.get(same_page_key(uri), default)
