"""MCP's naming rules for ``_meta`` keys.

A key is an optional *prefix* and a *name* (MCP specification, "General fields: _meta"):

- prefix: dot-separated labels followed by ``/``; each label starts with a letter, ends with
  a letter or digit, and has only letters, digits and ``-`` inside. Reverse DNS is the
  recommended style (``org.example/``).
- name: unless empty, starts and ends with a letter or digit and has only letters, digits,
  ``-``, ``_`` and ``.`` inside.
- a prefix whose *second* label is ``modelcontextprotocol`` or ``mcp`` is reserved for MCP
  itself (``io.modelcontextprotocol/``, ``dev.mcp/``); ``com.example.mcp/`` is not.

citelab is one step stricter than the letter of the rule: the wholly empty key ``""`` is
refused, since it names nothing.
"""

from __future__ import annotations

import re

__all__ = ["is_reserved_meta_key", "meta_key_problem"]

_LABEL = re.compile(r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?")
_NAME = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")
_RESERVED_SECOND_LABELS = frozenset({"modelcontextprotocol", "mcp"})


def meta_key_problem(key: object) -> str | None:
    """What is wrong with ``key`` as a ``_meta`` key name, or ``None`` if it is well formed.

    Reserved prefixes are well formed; see :func:`is_reserved_meta_key`.
    """
    if not isinstance(key, str):
        return f"a _meta key must be a string, not {type(key).__name__}"
    if key == "":
        return "a _meta key must not be empty"
    prefix, slash, name = key.partition("/")
    if slash:
        labels = prefix.split(".")
        bad = next((label for label in labels if not _LABEL.fullmatch(label)), None)
        if bad is not None:
            return (
                f"prefix label {bad!r} is not valid: a label starts with a letter, ends with a "
                "letter or digit, and has only letters, digits and '-' inside"
            )
    else:
        name = prefix
    if not _NAME.fullmatch(name):
        return (
            f"name {name!r} is not valid: a name starts and ends with a letter or digit and "
            "has only letters, digits, '-', '_' and '.' inside (and no '/')"
        )
    return None


def is_reserved_meta_key(key: str) -> bool:
    """True if the prefix of ``key`` is reserved for MCP (see the module docstring)."""
    prefix, slash, _ = key.partition("/")
    if not slash:
        return False
    labels = prefix.lower().split(".")
    return len(labels) >= 2 and labels[1] in _RESERVED_SECOND_LABELS
