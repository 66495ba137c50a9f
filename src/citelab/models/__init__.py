"""Models: one streaming interface (OpenAI chat-completions semantics) and its adapters.

* :class:`Model` — ``stream(messages, tools) -> AsyncIterator[ModelDelta]``; :func:`collect`
  assembles a stream into a :class:`ModelTurn`.
* :class:`OpenAIModel` — any OpenAI-compatible endpoint through the ``openai`` SDK.
* :class:`AnthropicModel` — Claude or any Messages-compatible endpoint (``anthropic`` SDK).
* :class:`ExtractiveModel` — the offline default: quotes and cites the sources it was shown.
* :class:`ScriptedModel` — replays given rounds and records what it saw.
* :class:`PerturbedModel` — injects citation faults at set rates and records them.
* :class:`TokenUsage` — a call's tokens (a finish delta's ``usage``); :func:`estimate_usage`
  counts them for a model that reports none.
* :func:`source_version` — a module and its package's version, for a model's
  ``code_version`` (the model-call cache keys by it).
* :func:`get_model` — build any of them by name (``"extractive"``, ``"openai:<model>"``…);
  :data:`MODELS` is their registry (:class:`~citelab.Registry`: register, list, build).
* :func:`build_app` / :func:`serve_in_thread` — serve a model as an OpenAI-compatible endpoint
  (``citelab serve-model``).
"""

from citelab.models._registry import (
    MODELS,
    ModelFactory,
    available_models,
    check_model_name,
    get_model,
    register_model,
)
from citelab.models._seen import SeenSource, View, current_view, round_views, sources_in_message
from citelab.models._types import (
    AssistantMessage,
    FinishDelta,
    FinishReason,
    FunctionCall,
    FunctionSpec,
    Message,
    Model,
    ModelDelta,
    ModelTurn,
    NamedToolChoice,
    SuggestedRepliesDelta,
    SystemMessage,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallDelta,
    ToolCallMessage,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    UserMessage,
    collect,
    message_text,
)
from citelab.models._usage import estimate_usage
from citelab.models._version import code_version_of, source_version
from citelab.models.adapters import AnthropicModel, OpenAIModel
from citelab.models.offline import (
    ExtractiveModel,
    FaultKind,
    FaultRates,
    Injection,
    Perturbation,
    PerturbedModel,
    ScriptedModel,
    ScriptedRound,
    ScriptedToolCall,
    inject_faults,
    recording_perturbations,
)
from citelab.models.serve import RunningServer, build_app, run_server, serve_in_thread

__all__ = [
    "MODELS",
    "AnthropicModel",
    "AssistantMessage",
    "ExtractiveModel",
    "FaultKind",
    "FaultRates",
    "FinishDelta",
    "FinishReason",
    "FunctionCall",
    "FunctionSpec",
    "Injection",
    "Message",
    "Model",
    "ModelDelta",
    "ModelFactory",
    "ModelTurn",
    "NamedToolChoice",
    "OpenAIModel",
    "Perturbation",
    "PerturbedModel",
    "RunningServer",
    "ScriptedModel",
    "ScriptedRound",
    "ScriptedToolCall",
    "SeenSource",
    "SuggestedRepliesDelta",
    "SystemMessage",
    "TextDelta",
    "TokenUsage",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallMessage",
    "ToolChoice",
    "ToolMessage",
    "ToolSpec",
    "UserMessage",
    "View",
    "available_models",
    "build_app",
    "check_model_name",
    "code_version_of",
    "collect",
    "current_view",
    "estimate_usage",
    "get_model",
    "inject_faults",
    "message_text",
    "recording_perturbations",
    "register_model",
    "round_views",
    "run_server",
    "serve_in_thread",
    "source_version",
    "sources_in_message",
]
