"""What a report says about its variants, beside the numbers.

``variant_notes(variants, models, records)`` explains a variant that only rewords the system
prompt, run on a model that declares it does not read instructions (``reads_instructions =
False``, e.g. the extractive model). What the note says comes from the recorded answers, not
from the configuration: "identical to the baseline's" only when every answer of that model
is; otherwise how many differ, since the prompt's text still reaches such a model in other
ways (a perturbing wrapper draws its faults from the messages, system prompt included). The
run writes the notes into its configuration (``run.json``), where the report reads them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from citelab._errors import CitelabError
from citelab.evals.records import CaseRecord
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


def variant_notes(
    variants: Sequence[Variant], models: Sequence[ModelSpec], records: Iterable[CaseRecord] = ()
) -> dict[str, str]:
    """Variant name → a sentence, for variants that only reword the prompt of some model
    that does not read it, saying from ``records`` whether its answers are the baseline's
    (the variant named ``baseline``, else the first)."""
    deaf = [spec.name for spec in models if not reads_instructions(spec)]
    if not deaf or not variants:
        return {}
    names = [variant.name for variant in variants]
    baseline = "baseline" if "baseline" in names else names[0]
    answers = _answers(records)
    notes: dict[str, str] = {}
    for variant in variants:
        changed = set(variant.set)
        if variant.name == baseline or not changed or not changed <= PROMPT_WORDING:
            continue
        settings = ", ".join(sorted(changed))
        parts = [_model_part(answers, variant.name, baseline, model) for model in deaf]
        notes[variant.name] = (
            f"It only changes the prompt's wording ({settings}), which " + "; ".join(parts) + "."
        )
    return notes


_Answers = dict[tuple[str, str], dict[tuple[str, str, int], str]]


def _answers(records: Iterable[CaseRecord]) -> _Answers:
    """(variant, model) → (dataset, case, turn) → the answer text recorded."""
    out: _Answers = {}
    for record in records:
        texts = out.setdefault((record.variant, record.model), {})
        for turn in record.turns:
            texts[(record.dataset, record.case_id, turn.turn)] = turn.text
    return out


def _model_part(answers: _Answers, variant: str, baseline: str, model: str) -> str:
    mine, base = answers.get((variant, model), {}), answers.get((baseline, model), {})
    paired = [key for key in mine if key in base]
    if not paired:
        return f"{model} does not read (no answers of both to compare)"
    differ = sum(mine[key] != base[key] for key in paired)
    if differ == 0:
        return f"{model} does not read: its answers are identical to {baseline}'s"
    return (
        f"{model} does not read as instructions; yet {differ} of its {len(paired)} answers "
        f"differ from {baseline}'s, so the prompt's text reaches it another way (a "
        "perturbing model draws its faults from the messages)"
    )
