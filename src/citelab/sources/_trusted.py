"""Anchor models built from values that are valid by construction, without validating them.

Finalizing a long answer makes thousands of anchors; their values come from the final text and
from sources that were validated on the way in, and skipping their validation is what keeps
``benchmarks/bench_sources.py`` within its target. Measured side by side on a loaded machine (CPU
time, best of 60) for 5,500 anchors: validating took 8.9-10.5 ms, this module's loop 5.2-5.6 ms
(``model_construct`` is slower still: it walks every field's aliases in Python); and in one
bench_sources run, finalize + anchors at conversation scope on the answer with code and 1%
dangling numbers took 28.0x the floor this way, 33.9x with validated anchors (target: 30x).
Renumbered sources are ordinary ``model_copy`` copies (far fewer of them).

The state set here is what ``model_construct`` sets itself: ``__dict__``,
``__pydantic_fields_set__``, ``__pydantic_extra__`` and ``__pydantic_private__``. Because that
is pydantic's internal layout, :func:`self_check` compares, at import, one object built this
way with a validated one, slot by slot; should a pydantic release store models differently,
:func:`anchors` falls back to ordinary validation (slower, never wrong).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter

from citelab.contract import Anchor

__all__ = ["anchors", "self_check"]

_ANCHORS = TypeAdapter(list[Anchor])
_FIELDS = frozenset(Anchor.model_fields)
_new = object.__new__
_set = object.__setattr__


def anchors(rows: list[dict[str, Any]]) -> list[Anchor]:
    """Anchors from ``{source_uri, cited_text, start_index, end_index}`` rows of valid values."""
    return _direct_anchors(rows) if _DIRECT else _ANCHORS.validate_python(rows)


def _direct_anchors(rows: list[dict[str, Any]]) -> list[Anchor]:
    made: list[Anchor] = []
    for row in rows:
        anchor = _new(Anchor)
        _set(anchor, "__dict__", row)
        _set(anchor, "__pydantic_fields_set__", set(_FIELDS))
        _set(anchor, "__pydantic_extra__", None)
        _set(anchor, "__pydantic_private__", None)
        made.append(anchor)
    return made


_MISSING = object()


def _same_state(made: BaseModel, expected: BaseModel) -> bool:
    """True when two models hold the same state in every slot pydantic gives them."""
    slots = {slot for cls in type(expected).__mro__ for slot in getattr(cls, "__slots__", ())}
    return (
        type(made) is type(expected)
        and bool(slots)
        and all(
            getattr(made, slot, _MISSING) == getattr(expected, slot, _MISSING) for slot in slots
        )
        and made == expected
        and made.model_dump_json() == expected.model_dump_json()
    )


def self_check() -> bool:
    """True when the direct way builds exactly what pydantic builds (checked at import)."""
    row = {"source_uri": "entity:node/1", "cited_text": "A claim", "start_index": 0, "end_index": 7}
    if Anchor.__private_attributes__ or Anchor.model_config.get("extra") == "allow":
        return False  # the models would have to carry that state too
    try:
        [anchor] = _direct_anchors([dict(row)])
        return _same_state(anchor, Anchor(**row))
    except Exception:  # any failure of the direct way means: use the ordinary one
        return False


_DIRECT = self_check()
