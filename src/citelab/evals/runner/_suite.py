"""Suites: which datasets, agents, models and variants a run crosses, as a TOML or YAML file.

A suite is configuration only; an ablation is a variant that overrides agent settings::

    name = "default"
    datasets = ["university", "../my/cases.jsonl"]   # a bundled name, or a path
    models = ["extractive"]                          # or {spec = "...", options = {...}}
                                                     # (+ variants = [...], limit = N: this
                                                     # model runs only those variants, on a
                                                     # seeded sample of N cases per dataset)
    seed = 0
    concurrency = 8
    judge = {name = "lexical", threshold = 0.75}     # the judge of every scorer that takes one
    judge_cards = ["my_card.json"]                   # optional: cards for the judges
    labels = "my_labels.jsonl"                       # optional: labels of this run's pairs

    [[variants]]
    name = "baseline"

    [[variants]]
    name = "no_tool_rewrite"
    set = {"hooks.tool_rewrite" = false}             # dotted AgentConfig fields

    [grid]                                           # optional: every combination a variant
    "retrieval.threshold" = [0.0, 0.4]

    [prices]                                         # optional: US$ per million tokens
    "openai:gpt-4o-mini" = { input = 0.15, output = 0.60 }   # (yours: citelab ships none)

    [[findings]]                                     # claims the report checks
    title = "The tool-message rewrite keeps numbers stable"
    metric = "numbering_stability"
    baseline = "baseline"
    variant = "no_tool_rewrite"
    subset = "multi_round"
    expect = "lower"                                 # or min / max: a value against a number
    required = false                                 # true: the run fails unless it holds

    [[gates]]                                        # checks a CI run must pass (exit 3)
    metric = "citation_precision"
    min = 0.9                                        # and/or max = ...: the bounds, inclusive
    variant = "baseline"                             # default "*": every variant
    by = "value"                                     # or "interval": its 95% interval's worse end

    [[alce]]                                         # optional: ALCE's prompt, beside
    name = "asqa"                                    # the variants (variant alce_prompt)
    prompt_file = "alce/prompts/asqa_default.json"   # ALCE's own files, as they are
    eval_file = "alce/data/asqa_eval_gtr_top100.json"
    shot = 2
    ndoc = 5                                         # seed, quick_test, temperature… too
    pipeline = true                                  # optional: also citelab's pipeline
    agent = "default"                                # (every variant) on the same items

    [[gates]]                                        # non-inferiority, paired on the cases
    metric = "citation_recall"
    variant = "terse_contract"
    not_worse_than = "baseline"
    margin = 0.02                                    # at 95% confidence (confidence = 0.95)

An ``[[alce]]`` entry with ``pipeline = true`` also puts its items (those its settings
draw, case ids ``q<index in the eval file>``, dataset ``name``) through citelab's pipeline
under every variant and model, answered by ``agent`` (its prompt, retrieval and tools): each
item's shown documents (its first ``ndoc``, numbered from 1 as ALCE's prompt numbers them)
are that case's own corpus, the only one its retrieval searches, so an answer can cite no
other item's documents. Both variants' answers (``alce_prompt`` and the suite's own) are
then scored with the same scorers, judge and labels on the same questions and documents; a
pipeline entry whose item has no documents to search is an error naming the entry and the
item.

Relative paths are relative to the suite file. A dataset given by bare name is
``fixtures/datasets/<name>.jsonl``. Every error names the file, the key and what is wrong;
the variants findings and gates name, and the metrics of gates, are checked when the run is
planned (:func:`~citelab.evals.runner.plan_run`), before any case runs. Gates:
:mod:`citelab.evals.results._gates`.
"""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from citelab._errors import ConfigError
from citelab._paths import fixtures_dir, suites_dir
from citelab._validation import validation_problems
from citelab.evals.dataset import AlcePromptSettings
from citelab.evals.results import Finding, Gate, ModelPrice

__all__ = ["AlceEntry", "ModelSpec", "Suite", "Variant", "load_suite", "resolve_suite_path"]


class ModelSpec(BaseModel):
    """A model by its registered spec (``citelab.models.get_model``) and options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str = Field(min_length=1)
    """``extractive``, ``perturbed``, ``openai:<model>``…"""
    options: dict[str, Any] = {}
    """Keyword options of the model's factory."""
    label: str | None = None
    """Name in results; defaults to the spec."""
    variants: list[str] | None = Field(default=None, min_length=1)
    """The variants this model runs (default: every variant of the suite); names are
    checked when the run is planned."""
    limit: int | None = Field(default=None, ge=1)
    """At most this many cases per dataset for this model: a sample drawn with the suite's
    seed (the same cases in every run), kept in dataset order. For a model that only needs
    a subset, such as a perturbing model whose faults measure the judge."""

    @property
    def name(self) -> str:
        return self.label or self.spec

    def identity(self) -> dict[str, Any]:
        """What makes its answers: the spec without ``variants`` and ``limit`` (which only
        choose the units it runs), so choosing them re-runs and re-asks nothing."""
        return self.model_dump(mode="json", exclude={"variants", "limit"})


class Variant(BaseModel):
    """One configuration of the agents: a name and the AgentConfig fields it overrides."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=120)
    """How results and the report name it."""
    set: dict[str, Any] = {}
    """Dotted AgentConfig field → value, e.g. ``{"hooks.tool_rewrite": false}``."""
    description: str = ""

    @field_validator("set")
    @classmethod
    def _dotted_names(cls, value: dict[str, Any]) -> dict[str, Any]:
        bad = [key for key in value if not all(part.isidentifier() for part in key.split("."))]
        if bad:
            raise ValueError(f"override keys must be dotted field names, got {bad}")
        return value


class AlceEntry(BaseModel):
    """An ALCE dataset answered with ALCE's prompt by every model of the suite (variant
    ``alce_prompt``), scored with the suite's scorers and judge: ALCE's files as they are,
    ``run.py``'s prompt and decoding options (see :func:`~citelab.evals.runner.run_alce`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    """The dataset's name in results."""
    prompt_file: str
    """ALCE's prompt file (relative to the suite file)."""
    eval_file: str
    """ALCE's eval file (relative to the suite file)."""
    shot: int = Field(default=2, ge=0)
    ndoc: int = Field(default=5, ge=0)
    seed: int = 42
    no_doc_in_demo: bool = False
    ndoc_in_demo: int | None = Field(default=None, ge=0)
    quick_test: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=0.5, ge=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_new_tokens: int = Field(default=300, ge=1)
    chat: bool = True
    pipeline: bool = False
    """Also answer the items with citelab's pipeline under every variant, each item
    searching only its own shown documents."""
    agent: str = Field(default="default", min_length=1)
    """The agent whose prompt, retrieval and tools answer the items in the pipeline (its
    corpus is replaced by each item's documents)."""

    def settings(self) -> AlcePromptSettings:
        """Its prompt options."""
        return AlcePromptSettings(
            shot=self.shot,
            ndoc=self.ndoc,
            seed=self.seed,
            no_doc_in_demo=self.no_doc_in_demo,
            ndoc_in_demo=self.ndoc_in_demo,
            quick_test=self.quick_test,
        )


class Suite(BaseModel):
    """A grid of variants × models × datasets, scored by a list of scorers."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    """Also the default report folder: ``evaluations/reports/<name>/``."""
    description: str = ""
    alce: list[AlceEntry] = []
    """ALCE datasets answered with ALCE's prompt (variant ``alce_prompt``) beside the
    pipeline's variants; a suite needs datasets, ALCE ones, or both."""
    datasets: list[str] = []
    """Bundled dataset names or JSONL paths (relative to the suite file)."""
    agents: str | None = None
    """An agents file (relative to the suite file); None means citelab's bundled agents."""
    models: list[ModelSpec] = Field(default_factory=lambda: [ModelSpec(spec="extractive")])
    variants: list[Variant] = Field(default_factory=lambda: [Variant(name="baseline")])
    grid: dict[str, list[Any]] = {}
    """Dotted field → values: every combination is crossed with every variant."""
    scorers: list[str | dict[str, Any]] | None = None
    """Scorer names or configurations; None means every registered scorer."""
    judge: dict[str, Any] | str | None = None
    """The judge given to every scorer that takes one (unless it names its own)."""
    judge_cards: list[str] = []
    """Judge card files (relative to the suite file) for the run's judges, beside citelab's
    shipped cards; a card that describes none of the judges is an error."""
    labels: str | None = None
    """A labels file (relative to the suite file) whose ids are this run's pair ids: its
    labels estimate citation recall and precision (``ppi`` and ``labels`` rows)."""
    findings: list[Finding] = []
    gates: list[Gate] = []
    """Checks the run must pass: ``citelab eval`` exits 3 when one does not."""
    seed: int = 0
    concurrency: int = Field(default=4, ge=1, le=1024)
    limit: int | None = Field(default=None, ge=1)
    """At most this many cases per dataset."""
    resamples: int = Field(default=1000, ge=100)
    """Bootstrap resamples for the intervals."""
    prices: dict[str, ModelPrice] = {}
    """Model name (as results name it: its label, else its spec) → US dollars per million
    input and output tokens (``{ input = 0.15, output = 0.60 }``): the run's cost."""
    path: Path | None = Field(default=None, exclude=True)
    """Where the suite was loaded from (set by :func:`load_suite`)."""

    @field_validator("judge_cards", mode="before")
    @classmethod
    def _one_card(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def card_paths(self) -> list[Path]:
        """:attr:`judge_cards` as paths (relative ones against the suite file's folder)."""
        base = self.path.parent if self.path is not None else Path()
        return [base / card for card in self.judge_cards]

    def labels_path(self) -> Path | None:
        """:attr:`labels` as a path (a relative one against the suite file's folder)."""
        if self.labels is None:
            return None
        base = self.path.parent if self.path is not None else Path()
        return base / self.labels

    @field_validator("models", mode="before")
    @classmethod
    def _model_shorthand(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"spec": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("datasets")
    @classmethod
    def _some_datasets(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if not value and not info.data.get("alce"):
            # Pydantic's own wording for an empty list, since this is one (unless alce is given).
            raise PydanticCustomError(
                "too_short", "List should have at least 1 item (or give [[alce]] datasets)"
            )
        return value

    @model_validator(mode="after")
    def _unique_names(self) -> Suite:
        for kind, names in (
            ("variant", [v.name for v in self.variants]),
            ("model", [m.name for m in self.models]),
        ):
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise ValueError(f"{kind} names must be unique, repeated: {duplicates}")
        return self

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()

    def expanded_variants(self) -> list[Variant]:
        """The variants crossed with the grid (the variants themselves when there is none)."""
        if not self.grid:
            return list(self.variants)
        keys = sorted(self.grid)
        combos = [
            dict(zip(keys, values, strict=True))
            for values in itertools.product(*(self.grid[k] for k in keys))
        ]
        out = []
        for variant in self.variants:
            for combo in combos:
                label = ",".join(f"{k}={_short(v)}" for k, v in combo.items())
                out.append(
                    Variant(
                        name=f"{variant.name}/{label}",
                        set={**variant.set, **combo},
                        description=variant.description,
                    )
                )
        return out

    def dataset_paths(self) -> list[Path]:
        return [self._dataset_path(entry) for entry in self.datasets]

    def alce_paths(self, entry: AlceEntry) -> tuple[Path, Path]:
        """An ALCE entry's prompt and eval files."""
        return self._resolve(entry.prompt_file), self._resolve(entry.eval_file)

    def agents_path(self) -> Path | None:
        return None if self.agents is None else self._resolve(self.agents)

    def _dataset_path(self, entry: str) -> Path:
        if "/" not in entry and not entry.endswith((".jsonl", ".json")):
            return fixtures_dir() / "datasets" / f"{entry}.jsonl"
        return self._resolve(entry)

    def _resolve(self, entry: str) -> Path:
        path = Path(entry)
        return path if path.is_absolute() else (self.base_dir / path).resolve()


def _short(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def resolve_suite_path(name_or_path: str | Path, search: list[Path] | None = None) -> Path:
    """A suite file from a path, or from a bare name in ``evaluations/suites/``.

    Names are looked up in the current directory's ``evaluations/suites`` and then in the
    bundled ones (in the package, or the checkout's), as ``<name>.toml``, ``.yaml`` or ``.yml``.
    """
    path = Path(name_or_path)
    if path.suffix in {".toml", ".yaml", ".yml"} or path.exists():
        if not path.is_file():
            raise ConfigError(f"suite file {path} does not exist")
        return path
    folders = search if search is not None else _suite_folders()
    for folder in folders:
        for suffix in (".toml", ".yaml", ".yml"):
            candidate = folder / f"{name_or_path}{suffix}"
            if candidate.is_file():
                return candidate
    where = ", ".join(str(f) for f in folders)
    known = sorted(
        {p.stem for f in folders if f.is_dir() for p in f.iterdir() if p.suffix in _SUFFIXES}
    )
    raise ConfigError(
        f"no suite named {str(name_or_path)!r}; the suites are: {', '.join(known) or '-'} "
        f"(looked in {where})"
    )


_SUFFIXES = (".toml", ".yaml", ".yml")


def _suite_folders() -> list[Path]:
    folders = [Path.cwd() / "evaluations" / "suites", suites_dir()]
    return list(dict.fromkeys(folders))


def load_suite(name_or_path: str | Path) -> Suite:
    """Load and validate a suite; errors name the file, the key and what is wrong."""
    path = resolve_suite_path(name_or_path)
    data = _read(path)
    try:
        suite = Suite.model_validate({**data, "path": None})
    except ValidationError as exc:
        problems = validation_problems(exc, str(path), label="key ", whole="(top level)")
        raise ConfigError("bad suite:\n" + "\n".join(problems)) from exc
    suite.path = path.resolve()
    _check_files(suite, path)
    return suite


def _read(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    else:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: a suite must be a table/mapping at the top level")
    return dict(data)


def _check_files(suite: Suite, path: Path) -> None:
    for index, dataset in enumerate(suite.dataset_paths()):
        if not dataset.is_file():
            entry = suite.datasets[index]
            raise ConfigError(f"{path}: key datasets.{index}: {entry!r} → {dataset} does not exist")
    for index, alce in enumerate(suite.alce):
        for key, file in zip(("prompt_file", "eval_file"), suite.alce_paths(alce), strict=True):
            if not file.is_file():
                raise ConfigError(f"{path}: key alce.{index}.{key}: {file} does not exist")
    agents = suite.agents_path()
    if agents is not None and not agents.is_file():
        raise ConfigError(f"{path}: key agents: {agents} does not exist")
