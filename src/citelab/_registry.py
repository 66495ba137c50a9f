"""One registry for every kind of pluggable thing: models, rerankers, judges, scorers, contract
templates, answer formats, executors.

A :class:`Registry` holds the things of one kind by name, so configuration files (and a run's
log) can name them and rebuild them. Every kind is registered, listed and built the same way::

    SCORERS.register("my_metric", my_metric)            # a thing, or a factory of things
    SCORERS.register("nli", "mypkg.scorers:nli")        # imported when first used
    SCORERS.names()                                     # ['anchor_validity', ..., 'nli']
    SCORERS.describe()                                  # {'anchor_validity': 'Share of ...', ...}
    SCORERS.get("nli")                                  # the factory (imports mypkg.scorers now)
    SCORERS.build("nli", judge="lexical")               # the factory called with its options

A thing's description is its own: its ``description`` attribute, else the first paragraph of
its docstring (as plain text), unless ``register`` is given one.

Names are non-empty and hold no ``:``; a ``:`` in a name asked for means one of two things. A
factory registered with ``prefix=True`` answers to ``name:<anything>`` and gets the rest first
(``openai:gpt-4o-mini`` builds ``OpenAIModel("gpt-4o-mini")``); it is listed as
``name:<kind>``. Any other ``module:attr`` is imported when used, without being registered
(``citelab score --format mypkg.formats:reader``).

Every wrong name is a :class:`~citelab.ConfigError` that lists the known ones: unknown,
already registered (pass ``replace=True``), or not a name.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from citelab._errors import ConfigError, InvalidInput

__all__ = ["Registry", "description_of", "import_attr", "import_path", "plain_text"]

T = TypeVar("T")
R = TypeVar("R")

_IDENTIFIERS = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_IMPORT_PATH = re.compile(rf"({_IDENTIFIERS}):({_IDENTIFIERS})")


@dataclass
class _Entry(Generic[T]):
    target: T | str
    """The thing, or the ``module:attr`` it is imported from (until first used)."""
    description: str
    given: bool
    """The description was given at registration (else it is the thing's own)."""
    prefix: bool


class Registry(Generic[T]):
    """The registered things of one ``kind`` (``"model"``, ``"scorer"``…), by name.

    ``convert`` turns what is registered (or imported) into the kind's thing, or raises a
    :class:`~citelab.ConfigError` saying what is wrong with it (a template's text is checked
    into a ``string.Template``); by default things are kept as they are given.
    """

    def __init__(self, kind: str, *, convert: Callable[[Any], T] | None = None) -> None:
        self.kind = kind
        self._convert = convert
        self._entries: dict[str, _Entry[T]] = {}

    # --- registering ---------------------------------------------------------------------

    def register(
        self,
        name: str,
        thing: T | str,
        *,
        description: str | None = None,
        prefix: bool = False,
        replace: bool = False,
    ) -> None:
        """Make ``thing`` available as ``name`` (or, with ``prefix``, as ``name:<anything>``).

        ``thing`` written ``"module:attr"`` is imported when first used (its description is
        then ``description``, or says where it comes from until it is imported).
        """
        self._check_name(name)
        if name in self._entries and not replace:
            raise ConfigError(
                f"{self.kind} {name!r} is already registered (pass replace=True); {self._known()}"
            )
        if isinstance(thing, str):
            if import_path(thing) is None:
                raise ConfigError(
                    f"{self.kind} {name!r}: write where it is imported from as module:attr, "
                    f"not {thing!r}"
                )
            told = description if description is not None else f"from {thing}, once imported"
            self._entries[name] = _Entry(thing, told, description is not None, prefix)
            return
        converted = self._converted(name, thing)
        told = description if description is not None else description_of(converted)
        self._entries[name] = _Entry(converted, told, description is not None, prefix)

    def _check_name(self, name: str) -> None:
        if not isinstance(name, str) or not name.strip() or ":" in name or name != name.strip():
            raise ConfigError(
                f"{self.kind} name {name!r}: must be non-empty, without ':' or surrounding spaces"
            )

    @contextmanager
    def preserved(self) -> Iterator[Registry[T]]:
        """A block whose registrations (and replacements) are undone when it ends: for tests,
        and for trying a variant in a notebook."""
        saved = dict(self._entries)
        try:
            yield self
        finally:
            self._entries.clear()
            self._entries.update(saved)

    # --- listing -------------------------------------------------------------------------

    def names(self) -> list[str]:
        """The registered names, sorted; a prefix factory as ``name:<kind>``."""
        return sorted(self._listed(name, entry) for name, entry in self._entries.items())

    def describe(self) -> dict[str, str]:
        """Each registered name (as :meth:`names` lists it) with its description, sorted."""
        listed = {self._listed(n, e): e.description for n, e in self._entries.items()}
        return dict(sorted(listed.items()))

    def _listed(self, name: str, entry: _Entry[T]) -> str:
        return f"{name}:<{self.kind}>" if entry.prefix else name

    def __contains__(self, spec: object) -> bool:
        """True when :meth:`get` or :meth:`build` would find ``spec`` (a ``module:attr`` not
        registered counts if it is well formed: it is not imported to answer this)."""
        if not isinstance(spec, str):
            return False
        return self._lookup(spec) is not None or import_path(spec) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<Registry of {len(self)} {self.kind}s: {', '.join(self.names())}>"

    # --- getting and building ------------------------------------------------------------

    def get(self, name: str) -> T:
        """The thing registered as ``name`` (imported now if it was registered as
        ``module:attr``), or a ``module:attr`` imported now."""
        found = self._lookup(name)
        if found is not None:
            entry_name, entry, rest = found
            if rest is None:
                return self._resolved(entry_name, entry)
        return self._converted(name, self._imported(name))

    def build(self: Registry[Callable[..., R]], spec: str, /, **options: Any) -> R:
        """The factory ``spec`` names called with ``options`` (a prefix factory gets the rest
        of ``spec`` first). Options it does not take, and options it refuses, are a
        :class:`~citelab.ConfigError` naming the thing."""
        found = self._lookup(spec)
        if found is not None:
            entry_name, entry, rest = found
            factory, args = self._resolved(entry_name, entry), ([] if rest is None else [rest])
        else:
            factory, args = self._converted(spec, self._imported(spec)), []
        try:
            return factory(*args, **options)
        except TypeError as exc:
            raise ConfigError(
                f"{self.kind} {spec!r}: bad options {sorted(options)}: {exc}"
            ) from exc
        except InvalidInput as exc:
            raise ConfigError(f"{self.kind} {spec!r}: {exc}") from exc

    def check(self, spec: str) -> None:
        """Refuse a name nothing answers to (:meth:`unknown`), without building or importing."""
        if spec not in self:
            raise self.unknown(spec)

    def unknown(self, spec: object) -> ConfigError:
        """The error for a name nothing answers to: it lists the known names."""
        return ConfigError(
            f"unknown {self.kind} {spec!r}; {self._known()} (or name one as module:attr)"
        )

    def _known(self) -> str:
        return f"known {self.kind}s: {', '.join(self.names()) or 'none'}"

    def _lookup(self, spec: str) -> tuple[str, _Entry[T], str | None] | None:
        """The entry answering to ``spec``, and the rest for a prefix factory."""
        entry = self._entries.get(spec)
        if entry is not None and not entry.prefix:
            return spec, entry, None
        prefix, colon, rest = spec.partition(":")
        entry = self._entries.get(prefix)
        if colon and rest and entry is not None and entry.prefix:
            return prefix, entry, rest
        return None

    def _resolved(self, name: str, entry: _Entry[T]) -> T:
        target = entry.target
        if not isinstance(target, str):
            return target
        try:
            imported = _import(target)
        except _ImportFailed as exc:
            raise ConfigError(f"{self.kind} {name!r}: {exc}") from exc.__cause__
        thing = entry.target = self._converted(name, imported)
        if not entry.given:
            entry.description = description_of(thing)
        return thing

    def _imported(self, spec: str) -> Any:
        """``spec`` imported as ``module:attr``; the error says it is no known name either."""
        if import_path(spec) is None:
            raise self.unknown(spec)
        try:
            return _import(spec)
        except _ImportFailed as exc:
            raise ConfigError(
                f"unknown {self.kind} {spec!r} (not registered; as module:attr, {exc}); "
                f"{self._known()}"
            ) from exc.__cause__

    def _converted(self, name: str, thing: Any) -> T:
        if self._convert is None:
            return thing  # type: ignore[no-any-return]  # kept as given: the caller's type
        try:
            return self._convert(thing)
        except ConfigError as exc:
            raise ConfigError(f"{self.kind} {name!r}: {exc}") from exc


def import_path(spec: str) -> tuple[str, str] | None:
    """``(module, attr)`` of a ``module:attr`` spec (dotted names), or None."""
    match = _IMPORT_PATH.fullmatch(spec)
    return (match.group(1), match.group(2)) if match else None


def import_attr(spec: str) -> Any:
    """The attribute a ``module:attr`` spec names, imported now; a
    :class:`~citelab.ConfigError` says why it cannot be."""
    try:
        return _import(spec)
    except _ImportFailed as exc:
        raise ConfigError(f"{spec!r}: {exc}") from exc.__cause__


class _ImportFailed(Exception):
    """Why a ``module:attr`` could not be imported (the caller names what it was for)."""


def _import(spec: str) -> Any:
    parts = import_path(spec)
    if parts is None:
        raise _ImportFailed("not written module:attr")
    module_name, attr = parts
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise _ImportFailed(f"cannot import {module_name!r}: {exc}") from exc
    for part in attr.split("."):
        if not hasattr(target, part):
            raise _ImportFailed(f"module {module_name!r} has no {attr!r}")
        target = getattr(target, part)
    return target


_ROLE = re.compile(r":[\w:.-]+:`([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``|`([^`]+)`")


def description_of(thing: object) -> str:
    """What ``thing`` says it is, in one paragraph of plain text: its ``description`` (a
    string attribute or property), else the first paragraph of its docstring (a class's or a
    function's; an instance's class's), with reStructuredText markup taken off."""
    declared = getattr(thing, "description", None)
    if isinstance(declared, str) and declared.strip():
        return plain_text(declared)
    documented = thing if inspect.isclass(thing) or inspect.isroutine(thing) else type(thing)
    if documented is type(thing) and _standard(documented):
        return ""  # a Template's or a partial's docstring says nothing of what was registered
    doc = inspect.getdoc(documented) or ""
    return plain_text(doc.split("\n\n", 1)[0])


def _standard(cls: type) -> bool:
    """``cls`` comes from Python's standard library."""
    return cls.__module__.partition(".")[0] in sys.stdlib_module_names


def plain_text(text: str) -> str:
    """``text`` on one line, with reStructuredText roles and literals as their bare text
    (``:func:`~a.b``` → ``b``, ````x```` → ``x``)."""
    text = _ROLE.sub(_role_text, text)
    text = _LITERAL.sub(lambda m: m.group(1) or m.group(2), text)
    return " ".join(text.split())


def _role_text(match: re.Match[str]) -> str:
    """A role's text: its title (``title <target>``), else its target (``~``: last part)."""
    content = match.group(1)
    if "<" in content:
        return content.partition("<")[0].strip()
    if content.startswith("~"):
        return content[1:].rsplit(".", 1)[-1]
    return content
