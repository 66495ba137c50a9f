"""A wrapper that injects citation faults into another model's answers, and records them.

On the inner model's final answer (a turn that does not finish with ``tool_calls``), every
cited number (see :mod:`citelab.models.offline._markers`; ``[1, 3]`` cites two) independently draws
one fault or none, with the probabilities in :class:`FaultRates`:

``wrong``
    the number is replaced by another number of the current view;
``stale``
    the number is replaced by one that an earlier round's view used for a different entity
    (preferring numbers whose meaning has changed since, which is what a stale citation is);
    ``entity_uri_before`` names that earlier entity;
``out_of_range``
    the number is replaced by one beyond every number any view ever held;
``dropped``
    the marker is removed.

A fault that cannot apply (``wrong`` with a one-source view, ``stale`` without history) is not
injected, and nothing is recorded for it: :attr:`Perturbation.injections` is exactly what
changed. Draws are seeded from ``seed``, the call's own ``seed``, the messages and the inner
text, so the same inputs give the same faults whatever the order of calls.

The answer is buffered until the inner model finishes (faults need the whole text), then
streamed again in word-sized pieces. Tool-call rounds pass through unchanged.

Inside :func:`recording_perturbations` every call's :class:`Perturbation` is also appended to
the list it yields: a context variable, so concurrent conversations over one wrapper (an
evaluation's cases) each get their own calls' records.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citelab.models._seen import View, round_views
from citelab.models._types import (
    FinishDelta,
    Message,
    Model,
    ModelDelta,
    TextDelta,
    ToolChoice,
    ToolSpec,
)
from citelab.models._version import code_version_of, source_version
from citelab.models.offline._markers import marker_numbers, rewrite_markers
from citelab.models.offline._pieces import word_pieces

__all__ = [
    "FaultKind",
    "FaultRates",
    "Injection",
    "Perturbation",
    "PerturbedModel",
    "inject_faults",
    "recording_perturbations",
]

FaultKind = Literal["wrong", "stale", "out_of_range", "dropped"]
_KINDS: tuple[FaultKind, ...] = ("wrong", "stale", "out_of_range", "dropped")
_OUT_OF_RANGE_SPREAD = 3


class FaultRates(BaseModel):
    """Per-marker probability of each fault; they are exclusive, so they sum to at most 1."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wrong: float = Field(default=0.0, ge=0.0, le=1.0)
    """Replace with another number of the same view."""
    stale: float = Field(default=0.0, ge=0.0, le=1.0)
    """Replace with a number an earlier round used for another entity."""
    out_of_range: float = Field(default=0.0, ge=0.0, le=1.0)
    """Replace with a number beyond every source."""
    dropped: float = Field(default=0.0, ge=0.0, le=1.0)
    """Remove the marker."""

    @model_validator(mode="after")
    def _at_most_one(self) -> FaultRates:
        total = self.wrong + self.stale + self.out_of_range + self.dropped
        if total > 1.0 + 1e-9:
            raise ValueError(f"fault rates sum to {total:g}; a marker gets at most one fault")
        return self


class Injection(BaseModel):
    """One fault put into an answer."""

    model_config = ConfigDict(frozen=True)

    kind: FaultKind
    """Which fault."""
    marker_index: int = Field(ge=0)
    """Which cited number of the inner model's text (0-based, reading order)."""
    original: int
    """The number the inner model wrote."""
    injected: int | None
    """The number written instead; ``None`` when the marker was dropped."""
    original_uri: str | None = None
    """The source the original number named in the current view (None when it named none)."""
    entity_uri_before: str | None = None
    """For ``stale``: the entity the injected number named in an earlier round."""


class Perturbation(BaseModel):
    """What one call of the wrapper did."""

    model_config = ConfigDict(frozen=True)

    call_index: int
    """The call's position among this wrapper's calls, in the order they started."""
    markers: int
    """How many cited numbers the inner answer had (0 for a tool-call round)."""
    injections: list[Injection]
    """Every fault injected, in marker order."""
    original_text: str
    """The inner model's text."""
    text: str
    """The text actually streamed."""

    @classmethod
    def unchanged(cls, call_index: int, text: str) -> Perturbation:
        """The record of a tool-call round, passed through as it was."""
        return cls(call_index=call_index, markers=0, injections=[], original_text=text, text=text)


_SINK: ContextVar[list[Perturbation] | None] = ContextVar("citelab_perturbations", default=None)


@contextmanager
def recording_perturbations() -> Iterator[list[Perturbation]]:
    """A list that receives the record of every wrapper call made inside the block (in the
    current context: one conversation's calls, not another task's)."""
    sink: list[Perturbation] = []
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


class PerturbedModel:
    """Wraps ``inner`` and injects citation faults at ``rates``; see the module docs."""

    def __init__(
        self,
        inner: Model,
        rates: FaultRates | Mapping[str, float],
        seed: int = 0,
        *,
        name: str | None = None,
    ) -> None:
        self.inner = inner
        self.rates = rates if isinstance(rates, FaultRates) else FaultRates.model_validate(rates)
        self.seed = seed
        self.name = name or f"perturbed({inner.name})"
        self.records: list[Perturbation] = []
        """One record per finished call, in the order calls finished."""
        self._started = 0

    @property
    def code_version(self) -> str:
        """Its module and citelab's version (see :mod:`citelab.models._version`), joined
        with the inner model's version when it declares one. Over a vendor model the faults
        are still citelab's: another release must not replay recorded answers."""
        inner = code_version_of(self.inner)
        own = source_version(__name__)
        return own if inner is None else f"{own}+{inner}"

    @property
    def injections(self) -> list[Injection]:
        """Every injection of every finished call, in record order."""
        return [injection for record in self.records for injection in record.injections]

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        call_index = self._started
        self._started += 1
        inner = self.inner.stream(messages, tools, tool_choice=tool_choice, seed=seed)
        deltas = [delta async for delta in inner]
        text = "".join(d.text for d in deltas if isinstance(d, TextDelta))
        finish = next((d for d in deltas if isinstance(d, FinishDelta)), None)
        if finish is None or finish.reason == "tool_calls":
            self._keep(Perturbation.unchanged(call_index, text))
            for delta in deltas:
                yield delta
            return
        record = self._perturb(call_index, messages, text, seed)
        self._keep(record)
        for piece in word_pieces(record.text):
            yield TextDelta(text=piece)
        for delta in deltas:
            if not isinstance(delta, TextDelta):
                yield delta

    def _keep(self, record: Perturbation) -> None:
        self.records.append(record)
        sink = _SINK.get()
        if sink is not None:
            sink.append(record)

    def _perturb(
        self, call_index: int, messages: Sequence[Message], text: str, call_seed: int | None
    ) -> Perturbation:
        rng = random.Random(_seed_digest(self.seed, call_seed, messages, text))
        perturbed, injections = inject_faults(text, round_views(messages), self.rates, rng)
        return Perturbation(
            call_index=call_index,
            markers=len(marker_numbers(text)),
            injections=injections,
            original_text=text,
            text=perturbed,
        )


@dataclass(frozen=True)
class _History:
    """The numbering the model saw: every round's view, the current one last."""

    views: Sequence[View]
    current: View
    top: int
    """The highest number any view held or the text used."""


def inject_faults(
    text: str, views: Sequence[View], rates: FaultRates, rng: random.Random
) -> tuple[str, list[Injection]]:
    """Draw a fault (or none) for every marker of ``text``; ``views`` are the round views,
    the current one last (see :func:`citelab.models._seen.round_views`)."""
    top = max([*marker_numbers(text), *(n for view in views for n in view)], default=0)
    history = _History(views, views[-1] if views else {}, top)
    injections: list[Injection] = []

    def replace(index: int, number: int) -> int | None:
        kind = _draw(rates, rng)
        injection = None if kind is None else _inject(kind, index, number, history, rng)
        if injection is None:
            return number
        injections.append(injection)
        return injection.injected

    return rewrite_markers(text, replace), injections


def _draw(rates: FaultRates, rng: random.Random) -> FaultKind | None:
    draw = rng.random()
    for kind in _KINDS:
        rate: float = getattr(rates, kind)
        if draw < rate:
            return kind
        draw -= rate
    return None


def _inject(
    kind: FaultKind, index: int, number: int, history: _History, rng: random.Random
) -> Injection | None:
    uri = history.current[number].uri if number in history.current else None

    def made(injected: int | None, before: str | None = None) -> Injection:
        return Injection(
            kind=kind,
            marker_index=index,
            original=number,
            injected=injected,
            original_uri=uri,
            entity_uri_before=before,
        )

    if kind == "dropped":
        return made(None)
    if kind == "out_of_range":
        return made(history.top + 1 + rng.randrange(_OUT_OF_RANGE_SPREAD))
    if kind == "wrong":
        others = sorted(n for n in history.current if n != number)
        return made(rng.choice(others)) if others else None
    stale = _stale_number(number, uri, history, rng)
    return made(*stale) if stale else None


def _stale_number(
    number: int, uri: str | None, history: _History, rng: random.Random
) -> tuple[int, str] | None:
    """A number an earlier round used for an entity other than ``uri``, and that entity."""
    earlier: dict[int, str] = {}
    for view in history.views[:-1]:
        for n, source in view.items():
            if n != number and source.uri != uri:
                earlier[n] = source.uri
    if not earlier:
        return None
    current = history.current
    changed = [n for n in sorted(earlier) if n not in current or current[n].uri != earlier[n]]
    injected = rng.choice(changed or sorted(earlier))
    return injected, earlier[injected]


def _seed_digest(seed: int, call_seed: int | None, messages: Sequence[Message], text: str) -> int:
    payload = json.dumps([seed, call_seed, list(messages), text], sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(payload.encode()).digest()[:8], "big")
