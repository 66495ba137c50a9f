"""Agent configuration: what an agent says, which model and corpus it uses, how it cites.

Agents are described as data, so an ablation is a configuration change, never a code edit.
Files are TOML or YAML with one table per agent under ``agents``::

    [agents.default]
    prompt = "You answer questions about Hollin University."
    corpus = "university"                 # a fixture corpus name, a JSONL file, or a folder
    model = "extractive"

    [agents.default.retrieval]            # omit for defaults; `retrieval = false` disables it
    max_results = 10

    [[agents.default.source_tools]]
    name = "science_programmes"
    description = "Every programme of the Faculty of Science."
    filter_fields = { faculty = "Faculty of Science" }

Every error names the file and the key (``agents.default.retrieval.max_results``).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from citelab._errors import ConfigError, InvalidInput
from citelab._paths import fixtures_dir
from citelab._validation import validation_problems
from citelab.agent._templates import contract_template
from citelab.sources import RetrievalSettings

__all__ = [
    "DEFAULT_NO_ANSWER_MESSAGE",
    "AgentConfig",
    "HookSwitches",
    "SourceToolConfig",
    "default_agents",
    "load_agents",
    "override_agents",
    "parse_agents",
    "resolve_corpus_path",
]

DEFAULT_NO_ANSWER_MESSAGE = (
    "Sorry, I could not find an answer to that in the sources available to me."
)
"""What the user gets when nothing usable reached them (see the answer service)."""

_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


class HookSwitches(BaseModel):
    """Which of the loop's citation hooks run (switch one off for an ablation)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_prompt: bool = True
    """Append the contract template, guidance and numbered sources to the agent's prompt."""
    tool_rewrite: bool = True
    """Rewrite each source tool's message with its sources under their final numbers; off,
    the model reads the raw tool JSON (and numbers it by position)."""


class SourceToolConfig(BaseModel):
    """A configured listing tool: every entity whose fields match fixed filters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_NAME_PATTERN)
    """The function name the model calls."""
    description: str = Field(min_length=1)
    """What the tool lists, for the model."""
    filter_fields: dict[str, Any] = Field(default_factory=dict)
    """Field name → wanted value (or list of accepted values)."""
    entity_type: str | None = None
    """Only entities of this type, when set."""
    shape: Literal["rag", "tool_api"] = "rag"
    """The output shape: rag_search-like rows, or Tool-API ``outputs.results[]``."""
    max_results: int = Field(default=50, ge=1)
    """The tool's own cap on listed entities."""


class AgentConfig(BaseModel):
    """One agent: its own prompt, model, corpus, retrieval and citation settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_NAME_PATTERN)
    """The agent id clients ask for."""
    prompt: str = "You are a helpful assistant. Answer the user's question."
    """The agent's own system prompt; the contract is appended to it, never replacing it."""
    enabled: bool = True
    """Whether the agent may answer; a disabled agent's turns are refused (Conflict)."""
    model: str = "extractive"
    """A model name for ``citelab.models.get_model`` (``extractive``, ``openai:<model>``…)."""
    model_options: dict[str, Any] = Field(default_factory=dict)
    """Keyword options for the model factory (e.g. ``base_url``, ``max_searches``)."""
    corpus: str = "university"
    """A fixture corpus name (``university``, ``helpcentre``, ``intranet``), a JSONL path, or a
    folder of Markdown/text/HTML/PDF files (write it with a slash: ``./notes``)."""
    retrieval: RetrievalSettings | None = Field(default_factory=RetrievalSettings)
    """How rag_search results become sources; ``None`` leaves retrieval unresolved, and the
    answer service refuses the agent (Conflict)."""
    source_tools: list[SourceToolConfig] = Field(default_factory=list)
    """Listing tools the model may call besides rag_search."""
    feedback_enabled: bool = True
    """Whether users may rate this agent's answers."""
    contract_template: str = "default"
    """A registered contract template name, or inline template text."""
    hooks: HookSwitches = Field(default_factory=HookSwitches)
    """Which citation hooks run."""
    merge_strategy: Literal["merge", "replace"] = "merge"
    """How a later tool round joins the held sources (``replace`` is the stale-number ablation)."""
    numbering: Literal["conversation", "turn"] = "conversation"
    """How sources are numbered across turns: ``conversation`` (a source keeps its number for
    the whole conversation, newly cited ones continue the count, and the model is shown those
    numbers) or ``turn`` (each turn numbers its cited sources 1..k afresh: the ablation)."""
    max_rounds: int = Field(default=4, ge=1, le=32)
    """Most model calls in one turn; the turn fails when the model still calls tools."""
    no_answer_message: str = Field(default=DEFAULT_NO_ANSWER_MESSAGE, min_length=1)
    """Substituted for the answer when nothing usable reached the user."""
    starter_questions: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=8
    )
    """Questions the web page offers before the first one is asked (answerable from the
    agent's corpus)."""
    answer_deadline_seconds: float | None = Field(default=None, gt=0, le=3600)
    """Longest a whole answer may take (every model call and search); ``None``: the answer
    service's own deadline."""
    first_token_seconds: float | None = Field(default=None, gt=0, le=3600)
    """Longest one model call may take to send anything; ``None``: the service's own."""

    @field_validator("retrieval", mode="before")
    @classmethod
    def _false_means_none(cls, value: Any) -> Any:
        # TOML has no null: `retrieval = false` is how a file leaves retrieval unresolved.
        return None if value is False else value

    @field_validator("contract_template")
    @classmethod
    def _template_resolves(cls, value: str) -> str:
        try:
            contract_template(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from exc
        return value

    @model_validator(mode="after")
    def _tool_names_unique(self) -> AgentConfig:
        names = [tool.name for tool in self.source_tools]
        clashes = sorted({n for n in names if names.count(n) > 1 or n == "rag_search"})
        if clashes:
            raise ValueError(f"source tool names must be unique and not rag_search: {clashes}")
        return self


def parse_agents(data: Mapping[str, Any], where: str) -> dict[str, AgentConfig]:
    """Agents from already-parsed file data; ``where`` names the file in errors."""
    unknown = sorted(set(data) - {"agents"})
    if unknown:
        raise ConfigError(f"{where}: unknown top-level key(s) {unknown}; expected 'agents'")
    tables = data.get("agents")
    if not isinstance(tables, Mapping) or not tables:
        raise ConfigError(f"{where}: key 'agents' must be a table with at least one agent")
    return {str(name): _agent(str(name), table, where) for name, table in tables.items()}


def load_agents(path: str | Path) -> dict[str, AgentConfig]:
    """Read agents from a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file.

    Relative corpus paths are resolved against the file's folder.
    """
    path = Path(path)
    data = _read(path)
    agents = parse_agents(data, str(path))
    return {name: _resolve_corpus(agent, path.parent) for name, agent in agents.items()}


def default_agents() -> dict[str, AgentConfig]:
    """The bundled agents: ``default`` and one per fixture corpus (no configuration needed)."""
    bundled = resources.files("citelab.agent").joinpath("default_agents.toml")
    data = tomllib.loads(bundled.read_text(encoding="utf-8"))
    return parse_agents(data, "citelab/agent/default_agents.toml")


def override_agents(
    agents: Mapping[str, AgentConfig],
    *,
    model: str | None = None,
    model_options: Mapping[str, Any] | None = None,
    corpus: str | os.PathLike[str] | None = None,
) -> dict[str, AgentConfig]:
    r"""Every agent with its model (and options) and/or corpus replaced, as ``--model`` and
    ``--corpus`` do; a new model starts from ``model_options`` (the old ones were for the old
    model). Unknown model names and missing corpus paths are :class:`ConfigError`\s."""
    update: dict[str, Any] = {}
    if model is not None:
        from citelab.models import check_model_name

        check_model_name(model)
        update["model"] = model
        update["model_options"] = dict(model_options or {})
    if corpus is not None:
        path = Path(corpus).expanduser()
        if not path.exists():
            raise ConfigError(f"corpus {path}: no such file or folder")
        if path.is_dir():
            _imported(path)  # now, so a bad file is named before a server starts
        update["corpus"] = str(path.resolve())
    return {name: agent.model_copy(update=update) for name, agent in agents.items()}


def _agent(name: str, table: Any, where: str) -> AgentConfig:
    key = f"agents.{name}"
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: {key} must be a table, got {type(table).__name__}")
    if "name" in table and table["name"] != name:
        raise ConfigError(f"{where}: {key}.name is {table['name']!r} but the table is {name!r}")
    try:
        return AgentConfig.model_validate({**table, "name": name})
    except ValidationError as exc:
        raise ConfigError("\n".join(validation_problems(exc, where, key=key))) from exc


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read agent configuration: {exc.strerror}") from exc
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return _toml(text, path)
    if suffix in (".yaml", ".yml"):
        return _yaml(text, path)
    raise ConfigError(f"{path}: agent configuration must be .toml, .yaml or .yml")


def _toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc


def _yaml(text: str, path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the file must hold a mapping with key 'agents'")
    return data


def _resolve_corpus(agent: AgentConfig, base: Path) -> AgentConfig:
    corpus = Path(agent.corpus)
    if not _is_path(agent.corpus) or corpus.is_absolute():
        return agent
    return agent.model_copy(update={"corpus": str((base / corpus).resolve())})


def _imported(folder: Path) -> Path:
    from citelab.corpus import imported_corpus

    try:
        return imported_corpus(folder)
    except InvalidInput as exc:
        raise ConfigError(str(exc)) from exc


def _is_path(value: str) -> bool:
    """A corpus value with a separator or a file suffix is a path; otherwise a fixture name."""
    return "/" in value or "\\" in value or value.endswith(".jsonl")


def resolve_corpus_path(corpus: str) -> Path:
    """The JSONL file an agent's ``corpus`` names: a fixture corpus, a JSONL path, or a folder
    of documents (imported on first use and cached by content hash; see
    :func:`citelab.corpus.imported_corpus`)."""
    if _is_path(corpus):
        path = Path(corpus).expanduser()
        if path.is_dir():
            return _imported(path)
        if not path.is_file():
            raise ConfigError(f"corpus file {path} does not exist")
        return path
    folder = fixtures_dir() / "corpora"
    path = folder / f"{corpus}.jsonl"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.jsonl"))
        raise ConfigError(f"unknown fixture corpus {corpus!r} (known: {known}); or give a path")
    return path
