"""Converters between the citation contract and other systems' citation shapes.

Each pair ``to_<system>(message)`` / ``from_<system>(data, sources=...)`` comes with a
:class:`Losses` constant declaring what the other shape cannot carry in each direction:

- Anthropic text-block ``citations``: :data:`ANTHROPIC_LOSSES`
- OpenAI ``annotations`` (Responses and Chat Completions): :data:`OPENAI_LOSSES`
- Cohere v2 ``citations``: :data:`COHERE_LOSSES`
- Gemini ``groundingMetadata`` (UTF-8 byte offsets): :data:`GEMINI_LOSSES`; File Search
  documents get ``gemini-file-search:`` URIs (:func:`file_search_uri`)

``from_*`` accept plain JSON data or the vendor SDK's response objects (anything with
``model_dump``); ``sources`` (optional) lists known sources first, in order, as
``build_message`` accepts them. Malformed input is an ``InvalidInput`` saying where.
"""

from citelab.contract.convert._anthropic import (
    ANTHROPIC_LOSSES,
    anthropic_document_source,
    from_anthropic,
    to_anthropic,
)
from citelab.contract.convert._cohere import COHERE_LOSSES, from_cohere, to_cohere
from citelab.contract.convert._common import Losses
from citelab.contract.convert._gemini import (
    FILE_SEARCH_SCHEME,
    GEMINI_LOSSES,
    file_search_uri,
    from_gemini,
    to_gemini,
)
from citelab.contract.convert._openai import (
    OPENAI_FILE_SCHEME,
    OPENAI_LOSSES,
    from_openai_chat,
    from_openai_responses,
    to_openai_chat,
    to_openai_responses,
)

__all__ = [
    "ANTHROPIC_LOSSES",
    "COHERE_LOSSES",
    "FILE_SEARCH_SCHEME",
    "GEMINI_LOSSES",
    "OPENAI_FILE_SCHEME",
    "OPENAI_LOSSES",
    "Losses",
    "anthropic_document_source",
    "file_search_uri",
    "from_anthropic",
    "from_cohere",
    "from_gemini",
    "from_openai_chat",
    "from_openai_responses",
    "to_anthropic",
    "to_cohere",
    "to_gemini",
    "to_openai_chat",
    "to_openai_responses",
]
