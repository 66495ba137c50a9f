"""Builders shared by the model tests: sources, messages and tools, all invented here."""

from __future__ import annotations

import json
from typing import Any

from citelab.models import (
    AssistantMessage,
    Message,
    ModelDelta,
    SystemMessage,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from citelab.sources._block import BlockSource, render_sources_block

RAG_SEARCH: ToolSpec = {
    "type": "function",
    "function": {
        "name": "rag_search",
        "description": "Search the corpus.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}

# A small invented university catalogue, a help centre page and a sports page.
DATA_SCIENCE = BlockSource(
    1,
    "entity:program/ds-msc",
    "MSc Data Science",
    "The MSc in Data Science takes two years of full-time study. Applicants need a bachelor's "
    "degree in a quantitative field. Teaching happens on the Riverside campus.",
)
HISTORY = BlockSource(
    2,
    "entity:program/hist-ba",
    "BA History",
    "The BA in History covers ancient and modern periods. Students write a thesis in their "
    "final year.",
)
FEES = BlockSource(
    3,
    "entity:page/fees",
    "Tuition fees",
    "Tuition fees for master's programmes are 2,400 euros per semester. Fees are due before "
    "enrolment.",
)
POOL_ROW = {
    "entity_type": "page",
    "entity_id": "pool",
    "langcode": "en",
    "title": "Sports centre",
    "content": "Dogs are not allowed in the swimming pool. Guide dogs may wait in the lobby.",
    "score": 3.1,
}
LIBRARY_ROW = {
    "entity_type": "page",
    "entity_id": "library",
    "langcode": "en",
    "title": "Library",
    "content": "The library opens at eight on weekdays. Laptops can be borrowed at the desk.",
    "score": 2.4,
}


def source(number: int, base: BlockSource) -> BlockSource:
    """``base`` under another number."""
    return BlockSource(number, base.uri, base.title, base.content)


def system(*sources: BlockSource, prompt: str = "Answer with citations.") -> SystemMessage:
    return {"role": "system", "content": prompt + "\n" + render_sources_block(list(sources))}


def user(text: str) -> UserMessage:
    return {"role": "user", "content": text}


def search_call(call_id: str, query: str) -> AssistantMessage:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "rag_search", "arguments": json.dumps({"query": query})},
            }
        ],
    }


def raw_results(call_id: str, *rows: dict[str, Any]) -> ToolMessage:
    """A tool message holding raw rag_search JSON, as an agent that does not rewrite sends."""
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps({"results": rows})}


def numbered_results(call_id: str, *sources: BlockSource) -> ToolMessage:
    """A tool message rewritten with numbered sources."""
    content = "Search results:\n" + render_sources_block(list(sources))
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def conversation(*messages: Message) -> list[Message]:
    return list(messages)


def dumped(deltas: list[ModelDelta]) -> list[dict[str, Any]]:
    return [delta.model_dump() for delta in deltas]
