"""An import-linter contract type: a private module is imported only inside its own package.

``citelab.x._y`` (any module or package whose name starts with ``_``, dunders aside) may be
imported by ``citelab.x`` and everything under it, and by nothing else: from outside, a
package's public ``__init__`` is the way in. Written as a contract type rather than one
``protected`` contract per package so that it covers every package, new ones included.
``pyproject.toml`` registers it (``[tool.importlinter] contract_types``); ``lint-imports``
runs from the repository root, which is on its path.
"""

from __future__ import annotations

from typing import Any

import grimp
from importlinter import Contract, ContractCheck, fields, output

__all__ = ["PrivateModulesContract", "owner"]


def owner(module: str) -> str | None:
    """The package whose private part ``module`` is (the parent of its last ``_`` component),
    or None for a public module."""
    parts = module.split(".")
    private = [i for i, part in enumerate(parts) if part.startswith("_") and not _dunder(part)]
    return ".".join(parts[: private[-1]]) if private else None


def _dunder(part: str) -> bool:
    return part.startswith("__") and part.endswith("__")


class PrivateModulesContract(Contract):
    """Options: ``containers`` (the packages whose modules are checked), ``ignore_imports``
    (``importer -> imported`` pairs allowed anyway; one that names no import breaks the
    contract, so an exception does not outlive its import)."""

    type_name = "private_modules"

    containers = fields.ListField(subfield=fields.StringField())
    ignore_imports = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        allowed = {_pair(text) for text in self.ignore_imports or []}
        broken: list[dict[str, Any]] = []
        for container in self.containers:  # type: ignore[attr-defined]
            for imported in sorted({container, *graph.find_descendants(container)}):
                home = owner(imported)
                if home is None:
                    continue
                for importer in sorted(graph.find_modules_that_directly_import(imported)):
                    inside = importer == home or importer.startswith(home + ".")
                    if inside or (importer, imported) in allowed:
                        continue
                    details = graph.get_import_details(importer=importer, imported=imported)
                    lines = [detail["line_number"] for detail in details]
                    broken.append({"importer": importer, "imported": imported, "lines": lines})
        unmatched = sorted(
            f"{importer} -> {imported}"
            for importer, imported in allowed
            if not graph.direct_import_exists(importer=importer, imported=imported)
        )
        return ContractCheck(
            kept=not broken and not unmatched,
            metadata={"broken": broken, "unmatched": unmatched},
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        for text in check.metadata["unmatched"]:
            output.print_error(f"No such import to ignore: {text} (remove it).", bold=False)
            output.new_line()
        for item in check.metadata["broken"]:
            lines = ", ".join(f"l.{line}" for line in item["lines"])
            output.print_error(
                f"{item['importer']} imports the private {item['imported']} ({lines}): "
                f"import it from {owner(item['imported'])} instead.",
                bold=False,
            )
            output.new_line()


def _pair(text: str) -> tuple[str, str]:
    importer, _, imported = text.partition("->")
    return importer.strip(), imported.strip()
