"""One registry for every kind: the same errors, listing, lazy imports and descriptions."""

from __future__ import annotations

import functools
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

import pytest

from citelab import ConfigError, Registry
from citelab._registry import description_of, plain_text
from citelab.agent import TEMPLATES, contract_template, register_template
from citelab.evals import (
    ANSWER_FORMATS,
    JUDGES,
    SCORERS,
    build_judge,
    build_scorer,
    register_judge,
    register_scorer,
)
from citelab.evals.external import to_answers
from citelab.models import MODELS, get_model, register_model
from citelab.sources import RERANKERS, get_reranker, register_reranker


@dataclass(frozen=True)
class Kind:
    """One kind's registry, its public register and build functions, and a thing to register
    (and a module attribute of the same sort, for a lazy registration)."""

    registry: Registry[Any]
    register: Callable[..., Any]
    build: Callable[[str], Any]
    thing: Any
    lazy: str
    """The attribute of the generated module (see ``_module``) that is this kind's thing."""


KINDS = {
    "model": Kind(MODELS, register_model, get_model, MODELS.get("extractive"), "model"),
    "reranker": Kind(
        RERANKERS, register_reranker, get_reranker, RERANKERS.get("lexical"), "reranker"
    ),
    "contract template": Kind(
        TEMPLATES, register_template, contract_template, "Cite as [n].\n$sources", "template"
    ),
    "judge": Kind(JUDGES, register_judge, build_judge, JUDGES.get("lexical"), "judge"),
    "scorer": Kind(SCORERS, register_scorer, build_scorer, SCORERS.get("no_answer"), "scorer"),
    "answer format": Kind(
        ANSWER_FORMATS,
        ANSWER_FORMATS.register,
        ANSWER_FORMATS.get,
        ANSWER_FORMATS.get("alce"),
        "reader",
    ),
}


@pytest.fixture(params=list(KINDS))
def kind(request: pytest.FixtureRequest) -> Iterator[Kind]:
    chosen = KINDS[request.param]
    with chosen.registry.preserved():
        yield chosen


def test_each_kind_has_one_registry_named_for_it(kind: Kind) -> None:
    assert kind.registry.kind in KINDS
    assert KINDS[kind.registry.kind] is kind
    assert kind.registry.names() == sorted(kind.registry.describe())
    assert all(kind.registry.describe().values()), "every built-in thing describes itself"


def test_an_unknown_name_lists_the_known_ones(kind: Kind) -> None:
    known = ", ".join(kind.registry.names())
    with pytest.raises(ConfigError) as caught:
        kind.build("no-such-thing")
    message = str(caught.value)
    assert f"unknown {kind.registry.kind} 'no-such-thing'" in message
    assert f"known {kind.registry.kind}s: {known}" in message


def test_a_name_registered_twice_needs_replace(kind: Kind) -> None:
    kind.register("twice", kind.thing)
    with pytest.raises(ConfigError) as caught:
        kind.register("twice", kind.thing)
    message = str(caught.value)
    assert f"{kind.registry.kind} 'twice' is already registered (pass replace=True)" in message
    assert ", ".join(kind.registry.names()) in message  # the known ones, "twice" among them
    kind.register("twice", kind.thing, replace=True)
    assert "twice" in kind.registry.names()


@pytest.mark.parametrize("name", ["", " ", "a:b", " padded "])
def test_a_malformed_name_is_refused(kind: Kind, name: str) -> None:
    with pytest.raises(ConfigError, match="must be non-empty, without ':' or surrounding"):
        kind.registry.register(name, kind.thing)


def test_registrations_inside_preserved_are_undone(kind: Kind) -> None:
    before = kind.registry.describe()
    with kind.registry.preserved():
        kind.register("passing", kind.thing)
        assert "passing" in kind.registry.names()
    assert kind.registry.describe() == before


def _module(tmp_path: Path, name: str) -> str:
    """A module (not imported yet) holding one thing of each kind, and its import name."""
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            """
            from citelab.evals import JUDGES, SCORERS, ANSWER_FORMATS
            from citelab.models import MODELS
            from citelab.sources import RERANKERS

            model = MODELS.get("extractive")
            reranker = RERANKERS.get("lexical")
            template = "Lazily: cite as [n].\\n$sources"
            judge = JUDGES.get("lexical")
            scorer = SCORERS.get("no_answer")
            reader = ANSWER_FORMATS.get("alce")
            """
        ),
        encoding="utf-8",
    )
    return name


def test_a_module_attr_registration_is_imported_only_when_built(
    kind: Kind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    module = _module(tmp_path, f"lazy_{kind.lazy}_things")
    kind.registry.register("lazy", f"{module}:{kind.lazy}", description="Imported late.")
    assert kind.registry.describe()["lazy"] == "Imported late."
    assert "lazy" in kind.registry
    assert module not in sys.modules  # registered, listed, asked about: not imported
    built = kind.build("lazy")
    assert module in sys.modules
    assert built is not None
    monkeypatch.delitem(sys.modules, module)


def test_a_lazy_registration_that_cannot_be_imported_says_so(kind: Kind) -> None:
    kind.registry.register("missing", "no_such_module_here:thing")
    assert kind.registry.describe()["missing"] == "from no_such_module_here:thing, once imported"
    with pytest.raises(ConfigError, match="'missing': cannot import 'no_such_module_here'"):
        kind.build("missing")
    with pytest.raises(ConfigError, match="write where it is imported from as module:attr"):
        kind.registry.register("dotted", "no_such_module_here.thing")


def test_a_lazily_imported_thing_describes_itself_once_imported() -> None:
    with SCORERS.preserved():
        SCORERS.register("late", "citelab.evals.scorers:source_language")
        assert (
            SCORERS.describe()["late"]
            == "from citelab.evals.scorers:source_language, once imported"
        )
        SCORERS.build("late")
        assert SCORERS.describe()["late"] == "Final sources shown in the language the gold names."


def test_a_module_attr_not_registered_is_imported_when_named() -> None:
    assert isinstance(MODELS.build("citelab.models:ExtractiveModel"), MODELS.get("extractive"))
    with pytest.raises(ConfigError, match=r"unknown model 'nope:thing' \(not registered; as "):
        get_model("nope:thing")
    assert "citelab.evals.scorers:no_answer" in SCORERS
    assert "not:a:path" not in SCORERS
    answers = to_answers(
        [{"question": "q", "output": "A [1].", "docs": [{"title": "t", "text": "A."}]}],
        "citelab.evals.external._formats:read_alce",
    )
    assert [a.text for a in answers] == ["A [1]."]


def test_a_prefix_factory_answers_to_its_family() -> None:
    registry: Registry[Callable[..., str]] = Registry("greeting")
    registry.register(
        "hello", lambda rest, punctuation=".": f"hello {rest}{punctuation}", prefix=True
    )
    assert registry.names() == ["hello:<greeting>"]
    assert registry.build("hello:world", punctuation="!") == "hello world!"
    assert "hello:world" in registry
    assert "hello:" not in registry
    with pytest.raises(ConfigError, match="unknown greeting 'hello'"):
        registry.build("hello")
    with pytest.raises(ConfigError, match=r"'hello:world': bad options \['tone'\]"):
        registry.build("hello:world", tone="warm")


def test_convert_checks_what_is_registered_and_names_it() -> None:
    with TEMPLATES.preserved():
        with pytest.raises(ConfigError, match=r"contract template 'odd': unknown placeholder"):
            TEMPLATES.register("odd", Template("$question\n$sources"))
        with pytest.raises(ConfigError, match="'text': a reader is a function"):
            ANSWER_FORMATS.register("text", 42)  # type: ignore[arg-type]


class _Described:
    """The docstring's first paragraph, with a :class:`~citelab.evals.Judge` and ``code``.

    Not this one.
    """


class _Declares(_Described):
    description = "Its own words, over the ``docstring``."


def test_a_thing_describes_itself_in_plain_text() -> None:
    assert description_of(_Described) == "The docstring's first paragraph, with a Judge and code."
    assert description_of(_Described()) == description_of(_Described)
    assert description_of(_Declares) == "Its own words, over the docstring."
    assert description_of(lambda: None) == ""
    assert description_of("some text") == ""
    assert description_of(functools.partial(len)) == ""  # not partial's own docstring
    assert plain_text(":func:`run <citelab.evals.run>` and `x`\n  twice") == "run and x twice"
