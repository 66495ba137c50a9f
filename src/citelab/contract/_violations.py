"""Contract violations: what is wrong, where (a JSON path), and a stable code.

Codes used by the built-in checks:

========================  ==================================================================
``json_syntax``           the input is not JSON (or nests too deeply to read)
``not_an_object``         the input, a block or a payload item is not a JSON object
``missing_field``         a required field is absent
``wrong_type``            a field has the wrong JSON type
``wrong_value``           a field is not one of its allowed values (``role``, ``type``...)
``empty_value``           a string that must say something is empty or blank
``out_of_range``          a number lies outside its range (``priority``, an index)
``unknown_field``         a field the schema does not allow
``invalid_value``         any other schema failure (the message says which)
``text_block_count``      an answer has exactly one ``text`` block
``duplicate_source``      two ``resource_link`` blocks share a ``uri``
``unknown_source``        an anchor's ``sourceUri`` names no sibling ``resource_link``
``start_after_end``       an anchor's ``startIndex`` is greater than its ``endIndex``
``end_past_text``         an anchor's ``endIndex`` lies beyond the end of the text
``cited_text_mismatch``   an anchor's ``citedText`` is not ``text[startIndex:endIndex]``
``unsafe_url``            a link URL is neither absolute http(s) nor relative (``javascript:``…)
``meta_key_name``         a ``_meta`` key breaks MCP's key naming rules
``meta_key_reserved``     a ``_meta`` key uses a prefix reserved for MCP
``meta_key_placement``    a registered key sits on a block kind it is not registered for
``meta_key_unknown``      an unregistered key (reported only by a strict registry)
``check_error``           a registered payload check itself failed (a bug in the check)
========================  ==================================================================
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from citelab._errors import ContractViolation

__all__ = ["Violation", "json_path", "raise_for_violations", "violations_from_errors"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Violation(BaseModel):
    """One way a message breaks the contract."""

    model_config = ConfigDict(frozen=True)

    path: str
    """JSON path of the offending value (``$`` is the whole input), e.g.
    ``content[0]._meta["drupal.org/ai.citations"][2].endIndex``."""
    code: str
    """Stable machine-readable code (see the table in this module's docstring)."""
    message: str
    """Plain-English explanation for a person."""

    def __str__(self) -> str:
        return f"{self.path}: {self.message} [{self.code}]"


def json_path(base: str, *steps: str | int) -> str:
    """Extend ``base`` by object keys and list indices: ``json_path("content", 0, "text")``."""
    path = "" if base == "$" else base
    for step in steps:
        if not path and not (isinstance(step, str) and _IDENTIFIER.fullmatch(step)):
            path = "$"  # a path never starts with a bracket: $[0], $["x-trace"]
        if isinstance(step, int):
            path += f"[{step}]"
        elif _IDENTIFIER.fullmatch(step):
            path += f".{step}" if path else step
        else:
            path += f"[{json.dumps(step, ensure_ascii=False)}]"
    return path or "$"


def raise_for_violations(violations: Iterable[Violation]) -> None:
    """Raise :class:`~citelab.ContractViolation` carrying every violation, if there are any."""
    found = list(violations)
    if found:
        raise ContractViolation(found)


_PYDANTIC_CODES = {
    "missing": "missing_field",
    "extra_forbidden": "unknown_field",
    "string_too_short": "empty_value",
    "too_short": "empty_value",
    "empty_value": "empty_value",
    "unsafe_url": "unsafe_url",
    "greater_than": "out_of_range",
    "greater_than_equal": "out_of_range",
    "less_than": "out_of_range",
    "less_than_equal": "out_of_range",
    "finite_number": "out_of_range",
    "literal_error": "wrong_value",
    "enum": "wrong_value",
    "union_tag_invalid": "wrong_value",
    "union_tag_not_found": "missing_field",
    "model_type": "not_an_object",
    "model_attributes_type": "not_an_object",
    "dict_type": "not_an_object",
}


def _code_for(error_type: str) -> str:
    if error_type in _PYDANTIC_CODES:
        return _PYDANTIC_CODES[error_type]
    if error_type.endswith(("_type", "_parsing")):
        return "wrong_type"
    return "invalid_value"


def violations_from_errors(base: str, errors: Iterable[object]) -> list[Violation]:
    """Translate pydantic ``ValidationError.errors()`` into violations under ``base``."""
    found = []
    for error in errors:
        assert isinstance(error, dict)
        loc = tuple(step for step in error["loc"] if isinstance(step, int | str))
        code = _code_for(str(error["type"]))
        message = "required field is missing" if code == "missing_field" else str(error["msg"])
        found.append(Violation(path=json_path(base, *loc), code=code, message=message))
    return found
