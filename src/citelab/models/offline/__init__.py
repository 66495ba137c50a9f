"""Offline models: no network, no weights. :class:`ExtractiveModel` (the default: quotes and
cites the sources it was shown), :class:`ScriptedModel` (replays given rounds and records what
it saw) and :class:`PerturbedModel` (injects citation faults at set rates and records them).
"""

from citelab.models.offline._extractive import ExtractiveModel
from citelab.models.offline._perturbed import (
    FaultKind,
    FaultRates,
    Injection,
    Perturbation,
    PerturbedModel,
    inject_faults,
    recording_perturbations,
)
from citelab.models.offline._scripted import ScriptedModel, ScriptedRound, ScriptedToolCall

__all__ = [
    "ExtractiveModel",
    "FaultKind",
    "FaultRates",
    "Injection",
    "Perturbation",
    "PerturbedModel",
    "ScriptedModel",
    "ScriptedRound",
    "ScriptedToolCall",
    "inject_faults",
    "recording_perturbations",
]
