"""Adapters: citelab's one streaming interface spoken to vendors' APIs through their SDKs.

:class:`OpenAIModel` (any OpenAI-compatible endpoint), :class:`OpenAICompletionsModel` (its
completions API) and :class:`AnthropicModel` (Claude or
any Messages-compatible endpoint), and the wire formats both ways — what a Messages or a
Responses request asks and how its answer is written — which ``citelab serve-model`` uses too.
"""

from citelab.models.adapters._anthropic import AnthropicModel
from citelab.models.adapters._anthropic_wire import (
    EventWriter,
    error_event,
    from_messages_request,
    message_body,
    message_content,
)
from citelab.models.adapters._openai import OpenAIModel
from citelab.models.adapters._openai_completions import OpenAICompletionsModel
from citelab.models.adapters._responses_wire import (
    ResponsesWriter,
    from_responses_request,
    response_body,
)
from citelab.models.adapters._sse import compact_json, sse_event

__all__ = [
    "AnthropicModel",
    "EventWriter",
    "OpenAICompletionsModel",
    "OpenAIModel",
    "ResponsesWriter",
    "compact_json",
    "error_event",
    "from_messages_request",
    "from_responses_request",
    "message_body",
    "message_content",
    "response_body",
    "sse_event",
]
