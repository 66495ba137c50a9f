from __future__ import annotations

from collections.abc import Iterator
from string import Template

import pytest

from citelab import ConfigError
from citelab.agent import (
    PLACEHOLDERS,
    TEMPLATES,
    contract_template,
    register_template,
    render_contract,
)


@pytest.fixture(autouse=True)
def _restore_registry() -> Iterator[None]:
    with TEMPLATES.preserved():
        yield


def test_bundled_templates_use_both_placeholders() -> None:
    for name in ("default", "terse"):
        filled = render_contract(contract_template(name), sources="<SRC>", guidance="<GUIDE>")
        assert "<SRC>" in filled
        assert "<GUIDE>" in filled
    assert {"sources", "guidance"} == PLACEHOLDERS


def test_a_registered_template_is_found_by_name() -> None:
    register_template("socratic", "Cite with [n].\n$guidance\n$sources")
    template = contract_template("socratic")
    assert render_contract(template, sources="S", guidance="G") == "Cite with [n].\nG\nS"


def test_inline_text_is_a_template_and_dollars_can_be_escaped() -> None:
    template = contract_template("Costs are in $$.\n$sources")
    assert render_contract(template, sources="S", guidance="") == "Costs are in $.\nS"


def test_unknown_placeholder_is_named() -> None:
    with pytest.raises(ConfigError, match=r"unknown placeholder\(s\) \['question'\]"):
        register_template("bad", "$question\n$sources")
    with pytest.raises(ConfigError, match="inline contract template"):
        contract_template("Answer $question now\n")


def test_unknown_name_lists_registered_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown contract template 'nope'.*default.*terse"):
        contract_template("nope")


def test_registering_twice_needs_replace() -> None:
    register_template("mine", "$sources")
    with pytest.raises(ConfigError, match="already registered"):
        register_template("mine", "$guidance")
    register_template("mine", "$guidance", replace=True)
    assert isinstance(contract_template("mine"), Template)
    assert render_contract(contract_template("mine"), sources="S", guidance="G") == "G"


def test_invalid_dollar_syntax_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"write \$\$ for a literal \$"):
        register_template("money", "It costs $5\n$sources")
