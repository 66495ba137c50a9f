"""Code versions: a model's module and the installed version of the package it comes from."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

import pytest

import citelab
from citelab import InvalidInput
from citelab.models import ExtractiveModel, PerturbedModel, ScriptedModel, source_version


def test_a_version_names_the_module_and_its_packages_release() -> None:
    assert source_version("citelab.models.offline._extractive") == (
        f"citelab.models.offline._extractive (citelab {citelab.__version__})"
    )


def test_citelab_models_declare_their_module_at_citelabs_release() -> None:
    release = f"(citelab {citelab.__version__})"
    assert ExtractiveModel().code_version == f"citelab.models.offline._extractive {release}"
    assert (
        ScriptedModel([{"text": "Hi."}]).code_version
        == f"citelab.models.offline._scripted {release}"
    )
    assert PerturbedModel(ExtractiveModel(), {}).code_version == (
        f"citelab.models.offline._perturbed {release}+citelab.models.offline._extractive {release}"
    )


def test_several_modules_are_named_once_each_in_order() -> None:
    assert source_version("citelab.b", "citelab.a", "citelab.b") == (
        f"citelab.a (citelab {citelab.__version__}), citelab.b (citelab {citelab.__version__})"
    )


def test_a_package_installed_under_another_name_is_found() -> None:
    # The yaml module comes from the PyYAML distribution.
    assert source_version("yaml") == f"yaml (PyYAML {metadata.version('PyYAML')})"


@pytest.mark.parametrize("module", ["__main__", "no_such_package_here.model"])
def test_a_module_no_installed_package_provides_is_a_clear_error(module: str) -> None:
    with pytest.raises(InvalidInput, match=rf"no installed package provides module '{module}'"):
        source_version(module)


def test_every_process_computes_the_same_version() -> None:
    # Ray workers and later runs compute it anew: it must not depend on the process.
    code = "from citelab.models import ExtractiveModel; print(ExtractiveModel().code_version)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ExtractiveModel().code_version
