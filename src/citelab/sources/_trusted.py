"""Anchor models built from values that are valid by construction, without validating them.

Finalizing a long answer makes thousands of anchors; their values come from the final text and
from sources that were validated on the way in. Measured with pydantic 2.14 on 5,500 anchors:
validating costs about 0.85 µs per anchor, ``model_construct`` about 7.5 µs (it is Python code
walking every field's aliases), and setting the instance state directly, as below, about
0.35 µs. Kept because ``benchmarks/bench_sources.py`` needs it: with validated anchors,
finalize + anchors at conversation scope took about 1.4x as long (38-40 ms against 26-32 ms
for this way, side by side on a loaded machine), beyond the 30x-the-floor target. Renumbered
sources are ordinary ``model_copy`` copies (about 1,000 of them cost far less).

The state set here is what ``model_construct`` and ``model_copy`` set themselves: ``__dict__``,
``__pydantic_fields_set__``, ``__pydantic_extra__`` and ``__pydantic_private__``. Because that
is pydantic's internal layout, :func:`self_check` compares, at import, one object built each
way with a validated one, slot by slot; should a pydantic release store models differently,
:func:`anchors` falls back to ordinary validation (slower, never wrong).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from itertools import repeat
from typing import Any

from pydantic import BaseModel, TypeAdapter

from citelab.contract import Anchor

__all__ = ["anchors", "self_check"]

_ANCHORS = TypeAdapter(list[Anchor])
_ANCHOR_FIELDS = frozenset(Anchor.model_fields)
_new = object.__new__


def _slot_setter(name: str) -> Callable[[BaseModel, Any], None]:
    """The ``__set__`` of the descriptor holding ``name`` on pydantic models: calling it is
    about twice as fast as ``object.__setattr__``, which looks the descriptor up each time.
    (Should pydantic hold ``name`` differently, a setter that fails: see ``self_check``.)"""
    for cls in BaseModel.__mro__:
        descriptor = vars(cls).get(name)
        if descriptor is not None and hasattr(descriptor, "__set__"):
            setter: Callable[[BaseModel, Any], None] = descriptor.__set__
            return setter
    return _missing_slot


def _missing_slot(model: BaseModel, value: Any) -> None:
    raise AttributeError("pydantic no longer holds this attribute in a slot")


_SET_DICT = _slot_setter("__dict__")
_SET_FIELDS_SET = _slot_setter("__pydantic_fields_set__")
_SET_EXTRA = _slot_setter("__pydantic_extra__")
_SET_PRIVATE = _slot_setter("__pydantic_private__")


def anchors(rows: list[dict[str, Any]]) -> list[Anchor]:
    """Anchors from ``{source_uri, cited_text, start_index, end_index}`` rows of valid values."""
    return _direct_anchors(rows) if _DIRECT else _ANCHORS.validate_python(rows)


def _direct_anchors(rows: list[dict[str, Any]]) -> list[Anchor]:
    count = len(rows)
    made: list[Anchor] = list(map(_new, repeat(Anchor, count)))
    # Loops in C (map over the slot descriptors) rather than in Python: this is most of the
    # cost of build_anchors.
    deque(map(_SET_DICT, made, rows), maxlen=0)
    deque(map(_SET_FIELDS_SET, made, map(set, repeat(_ANCHOR_FIELDS, count))), maxlen=0)
    deque(map(_SET_EXTRA, made, repeat(None, count)), maxlen=0)
    deque(map(_SET_PRIVATE, made, repeat(None, count)), maxlen=0)
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
