"""Contract templates: the citation instructions appended to an agent's own system prompt.

A template is ``string.Template`` text with two placeholders:

``$sources``
    The numbered sources block (``<sources><source number=.. uri=.. title=..>…``) holding
    every source the run holds so far, or a one-line note when there are none yet.
``$guidance``
    Run-specific guidance: whether sources are held, which tools may fetch more, and what
    to do when the sources do not answer the question.

Write ``$$`` for a literal dollar sign. Templates are registered by name
(:func:`register_template`); an agent's ``contract_template`` names one, or is inline text
(anything containing a placeholder or a line break is taken as inline text).
"""

from __future__ import annotations

from string import Template

from citelab._errors import ConfigError

__all__ = [
    "PLACEHOLDERS",
    "contract_template",
    "register_template",
    "render_contract",
    "template_names",
]

PLACEHOLDERS = frozenset({"sources", "guidance"})
"""The placeholders a contract template may use."""

_DEFAULT = """\
## How to cite
Answer only from the numbered sources below. After every sentence that uses a source, cite it
with its number in square brackets, for example [1] or [1][3]. Use only numbers that appear
in a <source number="…"> element; never invent a number, a source or a link.
$guidance

$sources"""

_TERSE = """\
Cite sources as [n] after each claim; n must be a source number below.
$guidance
$sources"""

_REGISTRY: dict[str, Template] = {}


def register_template(name: str, text: str, *, replace: bool = False) -> None:
    """Register ``text`` under ``name``; unknown placeholders raise :class:`ConfigError`."""
    if not name or not name.strip():
        raise ConfigError("a contract template needs a non-empty name")
    if name in _REGISTRY and not replace:
        raise ConfigError(f"contract template {name!r} is already registered (pass replace=True)")
    _REGISTRY[name] = _checked(text, where=f"contract template {name!r}")


def template_names() -> list[str]:
    """The registered template names, sorted."""
    return sorted(_REGISTRY)


def contract_template(name_or_text: str) -> Template:
    """The registered template ``name_or_text``, or the text itself when it is inline."""
    if name_or_text in _REGISTRY:
        return _REGISTRY[name_or_text]
    if _looks_inline(name_or_text):
        return _checked(name_or_text, where="inline contract template")
    known = ", ".join(template_names())
    raise ConfigError(f"unknown contract template {name_or_text!r} (registered: {known})")


def render_contract(template: Template, *, sources: str, guidance: str) -> str:
    """Fill the template; the result is appended to the agent's own prompt."""
    return template.substitute(sources=sources, guidance=guidance).strip()


def _looks_inline(text: str) -> bool:
    return "\n" in text or "$" in text


def _checked(text: str, *, where: str) -> Template:
    template = Template(text)
    if not template.is_valid():
        raise ConfigError(f"{where}: invalid placeholder syntax (write $$ for a literal $)")
    unknown = set(template.get_identifiers()) - PLACEHOLDERS
    if unknown:
        raise ConfigError(
            f"{where}: unknown placeholder(s) {sorted(unknown)}; allowed: {sorted(PLACEHOLDERS)}"
        )
    return template


register_template("default", _DEFAULT)
register_template("terse", _TERSE)
