"""A disk cache of model calls, keyed by the request, so re-runs never re-query a model.

:class:`CachedModel` wraps any :class:`citelab.models.Model`. The key is a hash of the model's
name and everything the call sends (messages, tools, tool choice, seed); the value is the
recorded stream of deltas, replayed as is. A call is stored only once its stream finished,
so an interrupted run leaves no half answers behind.

A model whose answers come from code rather than from a vendor declares a ``code_version``
(citelab's extractive, scripted and perturbed models do: their module and citelab's version,
see :func:`citelab.models.source_version`); it is part of the key, so answers recorded by
another citelab release are not replayed. A model without one (the OpenAI and Anthropic
adapters, user models that declare none) keeps the key it always had, so existing caches of
vendor answers stay valid. A user model may declare one: a non-empty string, or a method
taking no arguments that returns one.

When to clear a cache (delete its folder, or run with ``--no-cache``): the key knows the
request, the model's name or namespace and its declared ``code_version``, nothing else. So
clear it after changing a model's code without changing its ``code_version`` (editing
citelab's models in a checkout, where citelab's version stays the same; a user model whose
declared version was not bumped), or after a vendor changed what a model name answers.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from pydantic import TypeAdapter

from citelab.models import Message, Model, ModelDelta, ToolChoice, ToolSpec, code_version_of

__all__ = ["CachedModel"]

_DELTAS: TypeAdapter[list[ModelDelta]] = TypeAdapter(list[ModelDelta])


class CachedModel:
    """Replays a recorded answer when the same request was made before; see the module docs."""

    def __init__(
        self,
        inner: Model,
        folder: str | Path,
        namespace: str | None = None,
        *,
        enabled: bool = True,
    ) -> None:
        self.inner = inner
        self.enabled = enabled
        """Off, every call goes to the model and nothing is read or written."""
        self.name = inner.name
        self.folder = Path(folder)
        self.namespace = namespace or inner.name
        """Part of every key: two differently configured models must not share answers."""
        self.code_version = code_version_of(inner)
        """The wrapped model's ``code_version`` (``None`` when it declares none): part of the
        key when set, so answers recorded by other code are not replayed."""
        self.hits = 0
        self.misses = 0

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        if not self.enabled:
            self.misses += 1
            async for delta in self.inner.stream(
                messages, tools, tool_choice=tool_choice, seed=seed
            ):
                yield delta
            return
        path = self._path(self.key(messages, tools, tool_choice, seed))
        recorded = _read(path)
        if recorded is not None:
            self.hits += 1
            for delta in recorded:
                yield delta
            return
        self.misses += 1
        deltas: list[ModelDelta] = []
        async for delta in self.inner.stream(messages, tools, tool_choice=tool_choice, seed=seed):
            deltas.append(delta)
            yield delta
        _write(path, deltas)

    async def prepare(self) -> None:
        """Let the wrapped model open what it needs before the first call (``prepare``)."""
        prepare = getattr(self.inner, "prepare", None)
        if prepare is not None:
            await prepare()

    async def check_available(self) -> None:
        """Ask the wrapped model whether it can answer at all, when it can tell
        (``check_available``; see :meth:`citelab.models.OpenAIModel.check_available`)."""
        check = getattr(self.inner, "check_available", None)
        if check is not None:
            await check()

    async def aclose(self) -> None:
        """Close the wrapped model's connections, when it holds any (``aclose``)."""
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    def key(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        tool_choice: ToolChoice | None,
        seed: int | None,
    ) -> str:
        request: dict[str, object] = {
            "model": self.namespace,
            "messages": list(messages),
            "tools": list(tools or []),
            "tool_choice": tool_choice,
            "seed": seed,
        }
        if self.code_version is not None:  # without one, the key stays what it always was
            request["code_version"] = self.code_version
        payload = json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"


def _read(path: Path) -> list[ModelDelta] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return _DELTAS.validate_json(data)
    except ValueError:
        return None  # a corrupt entry is a miss; the fresh answer overwrites it


def _write(path: Path, deltas: list[ModelDelta]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(_DELTAS.dump_json(deltas))
    tmp.replace(path)
