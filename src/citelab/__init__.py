"""citelab: a research workbench for answers with citations.

Run the citing-answer pipeline, see it in a notebook chat, and measure citation quality.
The most used names are re-exported here and imported lazily on first use, so that
``import citelab`` stays fast; each lives in the subpackage named in ``_LAZY``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citelab._errors import (
    CitelabError,
    ConfigError,
    Conflict,
    ContractViolation,
    InvalidInput,
    MissingDependency,
    ModelError,
    ModelTimeout,
    ModelUnavailable,
    NotFound,
    Unavailable,
    WorkerLost,
)
from citelab._lazy import lazy_attributes
from citelab._registry import Registry
from citelab._version import __version__

if TYPE_CHECKING:
    from citelab.agent import AgentConfig, load_agents
    from citelab.answers import Answer, AnswerService, FeedbackLogger
    from citelab.contract import (
        Anchor,
        AnswerMessage,
        MetaRegistry,
        SuggestedReply,
        build_message,
        default_registry,
        validate_message,
    )
    from citelab.corpus import Corpus, Document, Reader, load_corpus
    from citelab.models import (
        AnthropicModel,
        ExtractiveModel,
        OpenAIModel,
        PerturbedModel,
        ScriptedModel,
        get_model,
    )
    from citelab.retrieval import RagSearch
    from citelab.sources import (
        RetrievalSettings,
        Source,
        build_anchors,
        finalize_citations,
        merge_round,
        parse_markers,
    )
    from citelab.widget import Chat, Labeller, MessageView, SourcesPanel, TemplateLab


_LAZY: dict[str, str] = {
    "AgentConfig": "citelab.agent",
    "Anchor": "citelab.contract",
    "AnthropicModel": "citelab.models",
    "Answer": "citelab.answers",
    "AnswerMessage": "citelab.contract",
    "AnswerService": "citelab.answers",
    "Chat": "citelab.widget",
    "Corpus": "citelab.corpus",
    "Document": "citelab.corpus",
    "ExtractiveModel": "citelab.models",
    "FeedbackLogger": "citelab.answers",
    "Labeller": "citelab.widget",
    "MessageView": "citelab.widget",
    "MetaRegistry": "citelab.contract",
    "OpenAIModel": "citelab.models",
    "PerturbedModel": "citelab.models",
    "RagSearch": "citelab.retrieval",
    "Reader": "citelab.corpus",
    "RetrievalSettings": "citelab.sources",
    "ScriptedModel": "citelab.models",
    "Source": "citelab.sources",
    "SourcesPanel": "citelab.widget",
    "SuggestedReply": "citelab.contract",
    "TemplateLab": "citelab.widget",
    "build_anchors": "citelab.sources",
    "build_message": "citelab.contract",
    "default_registry": "citelab.contract",
    "finalize_citations": "citelab.sources",
    "get_model": "citelab.models",
    "load_agents": "citelab.agent",
    "load_corpus": "citelab.corpus",
    "merge_round": "citelab.sources",
    "parse_markers": "citelab.sources",
    "validate_message": "citelab.contract",
}

__all__ = [
    "AgentConfig",
    "Anchor",
    "Answer",
    "AnswerMessage",
    "AnswerService",
    "AnthropicModel",
    "Chat",
    "CitelabError",
    "ConfigError",
    "Conflict",
    "ContractViolation",
    "Corpus",
    "Document",
    "ExtractiveModel",
    "FeedbackLogger",
    "InvalidInput",
    "Labeller",
    "MessageView",
    "MetaRegistry",
    "MissingDependency",
    "ModelError",
    "ModelTimeout",
    "ModelUnavailable",
    "NotFound",
    "OpenAIModel",
    "PerturbedModel",
    "RagSearch",
    "Reader",
    "Registry",
    "RetrievalSettings",
    "ScriptedModel",
    "Source",
    "SourcesPanel",
    "SuggestedReply",
    "TemplateLab",
    "Unavailable",
    "WorkerLost",
    "__version__",
    "build_anchors",
    "build_message",
    "default_registry",
    "finalize_citations",
    "get_model",
    "load_agents",
    "load_corpus",
    "merge_round",
    "parse_markers",
    "validate_message",
]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
