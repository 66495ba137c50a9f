"""MCP's _meta key naming rules, including reserved prefixes."""

from __future__ import annotations

import pytest

from citelab.contract import is_reserved_meta_key, meta_key_problem


@pytest.mark.parametrize(
    "key",
    [
        "drupal.org/ai.citations",
        "drupal.org/ai.suggested_replies",
        "org.example/footnotes",
        "com.example.mcp/x",  # second label is "example": not reserved
        "x",
        "progressToken",
        "a-b_c.d",
        "org.example/",  # a prefix with an empty name is allowed by the rules
        "a1.b-2/n",
    ],
)
def test_well_formed_keys(key: str) -> None:
    assert meta_key_problem(key) is None


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("", "must not be empty"),
        ("bad key", "name 'bad key' is not valid"),
        ("-start", "name '-start' is not valid"),
        ("end.", "name 'end.' is not valid"),
        ("1org.example/x", "prefix label '1org' is not valid"),
        ("org.exa_mple/x", "prefix label 'exa_mple' is not valid"),
        ("org.example-/x", "prefix label 'example-' is not valid"),
        ("org..example/x", "prefix label '' is not valid"),
        ("/x", "prefix label '' is not valid"),
        ("org.example/a/b", "name 'a/b' is not valid"),
        ("org.example/ä", "name 'ä' is not valid"),
    ],
)
def test_ill_formed_keys_say_what_is_wrong(key: str, problem: str) -> None:
    found = meta_key_problem(key)
    assert found is not None
    assert problem in found


def test_non_string_key_is_a_problem() -> None:
    assert meta_key_problem(3) == "a _meta key must be a string, not int"


@pytest.mark.parametrize(
    ("key", "reserved"),
    [
        ("io.modelcontextprotocol/protocolVersion", True),
        ("dev.mcp/x", True),
        ("org.modelcontextprotocol.api/x", True),
        ("com.mcp.tools/x", True),
        ("IO.ModelContextProtocol/x", True),
        ("com.example.mcp/x", False),
        ("mcp/x", False),
        ("modelcontextprotocol.io/x", False),
        ("mcp", False),
        ("drupal.org/ai.citations", False),
    ],
)
def test_reserved_prefixes_are_those_whose_second_label_is_mcp(key: str, reserved: bool) -> None:
    assert is_reserved_meta_key(key) is reserved
