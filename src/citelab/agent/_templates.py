"""Contract templates: the citation instructions appended to an agent's own system prompt.

A template is ``string.Template`` text with two placeholders:

``$sources``
    The numbered sources block (``<sources><source number=.. uri=.. title=..>…``) holding
    every source the run holds so far, or a one-line note when there are none yet.
``$guidance``
    Run-specific guidance: whether sources are held, which tools may fetch more, and what
    to do when the sources do not answer the question.

Write ``$$`` for a literal dollar sign. Templates are registered by name
(:func:`register_template`, :data:`TEMPLATES`); an agent's ``contract_template`` names one
(or a ``module:attr`` holding one), or is inline text (anything containing a placeholder or a
line break is taken as inline text).
"""

from __future__ import annotations

from string import Template

from citelab._errors import ConfigError
from citelab._registry import Registry

__all__ = [
    "PLACEHOLDERS",
    "TEMPLATES",
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


def _checked(text: object) -> Template:
    """``text`` (or a Template's) as a Template that uses only the placeholders."""
    if not isinstance(text, str | Template):
        raise ConfigError(f"a contract template is text, not {type(text).__name__}")
    template = text if isinstance(text, Template) else Template(text)
    if not template.is_valid():
        raise ConfigError("invalid placeholder syntax (write $$ for a literal $)")
    unknown = set(template.get_identifiers()) - PLACEHOLDERS
    if unknown:
        raise ConfigError(
            f"unknown placeholder(s) {sorted(unknown)}; allowed: {sorted(PLACEHOLDERS)}"
        )
    return template


TEMPLATES: Registry[Template] = Registry("contract template", convert=_checked)
"""Every contract template by name (:class:`~citelab.Registry`): ``TEMPLATES.get("terse")``."""


def register_template(
    name: str, text: str, *, replace: bool = False, description: str | None = None
) -> None:
    """Register ``text`` under ``name`` (``TEMPLATES.register``); unknown placeholders raise
    :class:`ConfigError`. Its description is ``description``, else its first line."""
    told = description if description is not None else _first_line(text)
    TEMPLATES.register(name, _checked_as(text, name), replace=replace, description=told)


def template_names() -> list[str]:
    """The registered template names, sorted: ``TEMPLATES.names()``."""
    return TEMPLATES.names()


def contract_template(name_or_text: str) -> Template:
    """The registered template ``name_or_text``, or the text itself when it is inline."""
    if _looks_inline(name_or_text) and name_or_text not in TEMPLATES.names():
        try:
            return _checked(name_or_text)
        except ConfigError as exc:
            raise ConfigError(f"inline contract template: {exc}") from exc
    return TEMPLATES.get(name_or_text)


def render_contract(template: Template, *, sources: str, guidance: str) -> str:
    """Fill the template; the result is appended to the agent's own prompt."""
    return template.substitute(sources=sources, guidance=guidance).strip()


def _looks_inline(text: str) -> bool:
    return "\n" in text or "$" in text


def _checked_as(text: str, name: str) -> Template:
    try:
        return _checked(text)
    except ConfigError as exc:
        raise ConfigError(f"contract template {name!r}: {exc}") from exc


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


register_template(
    "default",
    _DEFAULT,
    description="The full contract: answer only from the numbered sources, cite every sentence "
    "that uses one as [n], never invent a number, a source or a link.",
)
register_template("terse", _TERSE, description="One line: cite sources as [n] after each claim.")
