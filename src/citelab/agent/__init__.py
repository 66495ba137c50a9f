"""The agent loop: an agent's configuration, its per-run context, hooks and rounds.

- :class:`AgentConfig` / :func:`load_agents` / :func:`default_agents`: agents described as
  data (TOML or YAML), so ablations are configuration; the bundled ones are
  ``default_agents.toml`` in this package; :func:`corpus_agent`: the agent for a user's own
  corpus, named after it, with :func:`starter_questions` drawn from it.
- :func:`register_template` / :func:`contract_template` (:data:`TEMPLATES`): the citation
  contract templates the system-prompt hook appends (placeholders ``$sources`` and
  ``$guidance``).
- :class:`RunContext` / :func:`run_scope` / :func:`current_run`: one run's state, bound with
  ``contextvars`` so concurrent runs never see each other's sources.
- :func:`run_agent`: rounds of system prompt → model stream → tool calls → tool results,
  with the two citation hooks (:class:`ContractPromptHook`, :class:`SourceToolHook`); every
  round is kept as a :class:`RoundRecord`.
"""

from citelab.agent._config import (
    DEFAULT_NO_ANSWER_MESSAGE,
    AgentConfig,
    HookSwitches,
    SourceToolConfig,
    default_agents,
    load_agents,
    override_agents,
    parse_agents,
    resolve_corpus_path,
)
from citelab.agent._context import (
    NoRunContext,
    RoundRecord,
    RunContext,
    ToolCallRecord,
    current_run,
    run_scope,
)
from citelab.agent._corpus_agent import (
    corpus_agent,
    corpus_agent_name,
    load_agent_corpus,
    starter_questions,
)
from citelab.agent._hooks import (
    AgentHook,
    ContractPromptHook,
    SourceToolHook,
    SystemPromptEvent,
    ToolResultEvent,
    absorb_tool_output,
    default_hooks,
    guidance,
)
from citelab.agent._loop import AgentRun, ReferencesCallback, TokenCallback, run_agent
from citelab.agent._templates import (
    PLACEHOLDERS,
    TEMPLATES,
    contract_template,
    register_template,
    render_contract,
    template_names,
)

__all__ = [
    "DEFAULT_NO_ANSWER_MESSAGE",
    "PLACEHOLDERS",
    "TEMPLATES",
    "AgentConfig",
    "AgentHook",
    "AgentRun",
    "ContractPromptHook",
    "HookSwitches",
    "NoRunContext",
    "ReferencesCallback",
    "RoundRecord",
    "RunContext",
    "SourceToolConfig",
    "SourceToolHook",
    "SystemPromptEvent",
    "TokenCallback",
    "ToolCallRecord",
    "ToolResultEvent",
    "absorb_tool_output",
    "contract_template",
    "corpus_agent",
    "corpus_agent_name",
    "current_run",
    "default_agents",
    "default_hooks",
    "guidance",
    "load_agent_corpus",
    "load_agents",
    "override_agents",
    "parse_agents",
    "register_template",
    "render_contract",
    "resolve_corpus_path",
    "run_agent",
    "run_scope",
    "starter_questions",
    "template_names",
]
