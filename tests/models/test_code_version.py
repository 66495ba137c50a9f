"""Code versions: what changes them (code the model runs) and what doesn't (prose, layout,
modules it never imports)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from citelab.models import ExtractiveModel, source_version
from citelab.models import _version as version_module
from citelab.models._version import module_closure


def _forget() -> None:
    for cached in (
        version_module._source,
        version_module._source_version,
        version_module._runtime_imports,
    ):
        cached.cache_clear()


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., str]]:
    """A fresh package on ``sys.path``; the returned function writes its modules (``name``,
    source) and returns the package's name. Caches are forgotten around each write."""
    name = f"verpkg_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    root.mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(**modules: str) -> str:
        for module, source in modules.items():
            (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        _forget()
        return name

    write(__init__='"""A package."""\nfrom .helper import shout\n\nLOUD = True\n')
    yield write
    _forget()


MODEL = '''
"""The model."""
from __future__ import annotations

from typing import TYPE_CHECKING

from {pkg} import shout  # re-exported by the package: followed to .helper

if TYPE_CHECKING:
    from {pkg}.typing_only import Hint


class Model:
    """Answers loudly."""

    volume = 3
    """How loud."""

    def answer(self, text: str) -> str:
        """The answer."""
        from {pkg}.lazy import suffix  # imported when called: counts

        return shout(text) + suffix()
'''
HELPER = 'def shout(text: str) -> str:\n    """Loud."""\n    return text.upper()\n'


def _setup(write: Callable[..., str]) -> str:
    pkg = write()
    return write(
        model=MODEL.format(pkg=pkg),
        helper=HELPER,
        lazy="def suffix() -> str:\n    return '!'\n",
        typing_only="Hint = int\n",
        unused="X = 1\n",
    )


def test_the_closure_is_what_the_model_runs(package: Callable[..., str]) -> None:
    pkg = _setup(package)
    assert module_closure(f"{pkg}.model") == [f"{pkg}.helper", f"{pkg}.lazy", f"{pkg}.model"]


def test_prose_comments_and_layout_change_no_version(package: Callable[..., str]) -> None:
    pkg = _setup(package)
    before = source_version(f"{pkg}.model")
    reworded = (
        MODEL.format(pkg=pkg)
        .replace('"""Answers loudly."""', '"""Answers very loudly.\n\n    Always."""')
        .replace('"""How loud."""', '"""How loud it is."""  # a comment')
        .replace("return shout(text) + suffix()", "return (\n            shout(text)\n + suffix())")
    )
    package(model=reworded, helper="# helpers\n\n\n" + HELPER.replace("Loud.", "Shouted."))
    assert source_version(f"{pkg}.model") == before
    package(unused="X = 2\n", typing_only="Hint = str\n")  # never run by the model
    assert source_version(f"{pkg}.model") == before


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("helper", HELPER.replace("upper()", "lower()")),
        ("lazy", "def suffix() -> str:\n    return '?'\n"),
        ("model", None),  # a constant of the model's own module
    ],
)
def test_code_the_model_runs_changes_its_version(
    package: Callable[..., str], module: str, source: str | None
) -> None:
    pkg = _setup(package)
    before = source_version(f"{pkg}.model")
    package(**{module: source or MODEL.format(pkg=pkg).replace("volume = 3", "volume = 4")})
    assert source_version(f"{pkg}.model") != before


def test_a_module_without_source_is_a_clear_error() -> None:
    with pytest.raises(ImportError, match="no Python source for module 'no_such_module_here'"):
        source_version("no_such_module_here")


def test_the_extractive_models_version_covers_its_helpers_not_the_vendor_adapters() -> None:
    closure = module_closure("citelab.models._extractive")
    assert {
        "citelab.models._extractive",
        "citelab.models._lexicon",
        "citelab.models._seen",
        "citelab.sources._markers",
    } <= set(closure)
    assert not {"citelab.models._openai", "citelab.models._remote", "citelab.models"} & set(closure)
    assert not any(name.startswith(("citelab.evals", "citelab.cli")) for name in closure)


def test_every_process_computes_the_same_version() -> None:
    # Ray workers and later runs compute it anew: it must not depend on the process.
    code = "from citelab.models import ExtractiveModel; print(ExtractiveModel().code_version)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ExtractiveModel().code_version
