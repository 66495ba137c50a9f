"""Builders shared by the agent tests: a small invented corpus and run contexts over it."""

from __future__ import annotations

from citelab.agent import HookSwitches, RunContext, contract_template
from citelab.corpus import Access, Corpus, Document, Reader, Translation
from citelab.retrieval import ListingTool, RagSearch, SearchIndex, SourceTool
from citelab.sources import MERGE_STRATEGIES, RetrievalSettings

PROMPT = "You are the assistant of the town of Ferngrove. Be brief."

_PAGES = {
    "library": (
        "Library opening hours",
        "The Ferngrove library opens at 9:00 and closes at 18:00 on weekdays. "
        "On Saturdays the library opens at 10:00 and closes at 14:00.",
        "culture",
    ),
    "parking": (
        "Parking permits",
        "A residents' parking permit costs 40 crowns per year. "
        "Visitors pay 2 crowns per hour in the market square.",
        "transport",
    ),
    "pool": (
        "Outdoor swimming pool",
        "The outdoor swimming pool opens on the first of June. "
        "Lane swimming is reserved for adults before 8:00.",
        "sport",
    ),
    "waste": (
        "Waste collection",
        "Paper waste is collected every second Tuesday. Glass goes to the bottle banks "
        "behind the fire station.",
        "environment",
    ),
    "ferry": (
        "Ferry timetable",
        "The ferry to Gullholm leaves the harbour every hour from 7:00. "
        "A single crossing costs 6 crowns.",
        "transport",
    ),
}

SECRET = "Marrowbone"
"""A word only the restricted document contains."""


def page(
    entity_id: str, title: str, content: str, topic: str, access: Access | None = None
) -> Document:
    return Document(
        entity_type="page",
        entity_id=entity_id,
        translations={
            "en": Translation(title=title, content=content, url=f"https://fg.example/{entity_id}")
        },
        fields={"topic": topic},
        access=access or Access(),
    )


def town_corpus() -> Corpus:
    documents = [page(key, *value) for key, value in _PAGES.items()]
    documents.append(
        page(
            "budget",
            "Council budget draft",
            f"The confidential {SECRET} plan moves the library budget to the harbour. "
            "The library would then open at 11:00.",
            "council",
            Access(public=False, roles=frozenset({"council"})),
        )
    )
    return Corpus(documents, name="ferngrove")


def town_tools(
    corpus: Corpus, *, max_results: int = 3, listing: bool = False
) -> dict[str, SourceTool]:
    tools: dict[str, SourceTool] = {
        "rag_search": RagSearch(SearchIndex.build(corpus), default_max_results=max_results)
    }
    if listing:
        tools["transport_pages"] = ListingTool(
            "transport_pages", "Every transport page.", corpus, {"topic": "transport"}, "tool_api"
        )
    return tools


def town_context(
    corpus: Corpus | None = None,
    *,
    reader: Reader | None = None,
    max_results: int = 3,
    hooks: HookSwitches | None = None,
    merge: str = "merge",
    listing: bool = False,
    template: str = "default",
    agent_id: str = "town",
    tools: dict[str, SourceTool] | None = None,
) -> RunContext:
    corpus = corpus or town_corpus()
    return RunContext(
        agent_id=agent_id,
        base_prompt=PROMPT,
        reader=reader or Reader.anonymous(),
        settings=RetrievalSettings(max_results=max_results),
        template=contract_template(template),
        tools=tools or town_tools(corpus, max_results=max_results, listing=listing),
        corpus=corpus,
        hooks=hooks or HookSwitches(),
        merge=MERGE_STRATEGIES[merge],
    )
