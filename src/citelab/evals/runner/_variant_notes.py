"""What a report says about its variants, beside the numbers.

``variant_notes(variants, models)`` says where a variant cannot change what a model does: a
variant that only rewords the system prompt, run on a model that declares it does not read
instructions (``reads_instructions = False``, e.g. the extractive model), must equal the
baseline, and a report that shows the two side by side says why. The run writes the notes
into its configuration (``run.json``), where the report reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from citelab._errors import CitelabError
from citelab.evals.runner._suite import ModelSpec, Variant

__all__ = ["PROMPT_WORDING", "reads_instructions", "variant_notes"]

PROMPT_WORDING = frozenset({"prompt", "contract_template"})
"""Agent settings that only change the wording of the system prompt."""


def reads_instructions(spec: ModelSpec) -> bool:
    """Whether the model ``spec`` builds reads its instructions (True unless it says not,
    directly or through the model it wraps; True too when it cannot be built here)."""
    from citelab.models import get_model

    try:
        model: Any = get_model(spec.spec, **spec.options)
    except CitelabError:
        return True
    while model is not None:
        flag = getattr(model, "reads_instructions", None)
        if flag is not None:
            return bool(flag)
        model = getattr(model, "inner", None)
    return True


def variant_notes(variants: Sequence[Variant], models: Sequence[ModelSpec]) -> dict[str, str]:
    """Variant name → a sentence, for variants that cannot change what some model writes."""
    deaf = [spec.name for spec in models if not reads_instructions(spec)]
    notes: dict[str, str] = {}
    for variant in variants:
        changed = set(variant.set)
        if not deaf or not changed or not changed <= PROMPT_WORDING:
            continue
        names = ", ".join(deaf)
        settings = ", ".join(sorted(changed))
        notes[variant.name] = (
            f"It only changes the prompt's wording ({settings}), which {names} does not read: "
            "for that model it cannot differ from the baseline."
        )
    return notes
