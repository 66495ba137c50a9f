"""The runner: a :class:`Suite` (TOML/YAML: datasets × agents' variants × models, scorers,
findings) is planned (:func:`plan_run`) into units of work, which :func:`run` answers
through the answer service with bounded concurrency — where its executor says (this process,
worker processes or a Ray cluster: ``citelab.evals.execution``) — behind a disk cache of
model calls (:class:`CachedModel`), with resumable records and progress bars, then scores and
reports; :func:`rescore` scores recorded runs again without any model call. Every option of a
run is a field of :class:`RunOptions`.

Only the suite is imported with this package: the runner, the plan and the cache pull in the
agents, the answer service and the model adapters, which scoring other people's answers
(``citelab score``) does not need, so they are imported on first use.
"""

from typing import TYPE_CHECKING

from citelab._lazy import lazy_attributes
from citelab.evals.runner._suite import ModelSpec, Suite, Variant, load_suite, resolve_suite_path

if TYPE_CHECKING:
    from citelab.evals.runner._alce import (
        AlceDecoding,
        alce_result_name,
        run_alce,
        run_alce_async,
    )
    from citelab.evals.runner._batch import BatchRunner, turn_record
    from citelab.evals.runner._cache import CachedModel
    from citelab.evals.runner._plan import RunPlan, Unit, model_endpoint, plan_run
    from citelab.evals.runner._runner import (
        Resume,
        ResumePolicy,
        RunOptions,
        default_output_dir,
        record_failed,
        rescore,
        resume_units,
        run,
        run_async,
    )

_MODULES = {
    "_alce": ("AlceDecoding", "alce_result_name", "run_alce", "run_alce_async"),
    "_batch": ("BatchRunner", "turn_record"),
    "_cache": ("CachedModel",),
    "_plan": ("RunPlan", "Unit", "model_endpoint", "plan_run"),
    "_runner": (
        "Resume",
        "ResumePolicy",
        "RunOptions",
        "default_output_dir",
        "record_failed",
        "rescore",
        "resume_units",
        "run",
        "run_async",
    ),
}
_LAZY: dict[str, str] = {
    name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names
}

__all__ = [
    "AlceDecoding",
    "BatchRunner",
    "CachedModel",
    "ModelSpec",
    "Resume",
    "ResumePolicy",
    "RunOptions",
    "RunPlan",
    "Suite",
    "Unit",
    "Variant",
    "alce_result_name",
    "default_output_dir",
    "load_suite",
    "model_endpoint",
    "plan_run",
    "record_failed",
    "rescore",
    "resolve_suite_path",
    "resume_units",
    "run",
    "run_alce",
    "run_alce_async",
    "run_async",
    "turn_record",
]

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
