"""Sources panels: every event of their chat, and the chat's turns, mirrored."""

from __future__ import annotations

import pytest

from citelab import InvalidInput
from citelab.widget import Chat, SourcesPanel

from .conftest import ServiceFactory, comm_of, scripted, scripted_agent

pytestmark = pytest.mark.usefixtures("comms")

FEES = "Every student pays a semester fee [1]."


def make_chat(make_service: ServiceFactory, *texts: str) -> Chat:
    rounds = [{"text": text} for text in texts]
    service = make_service(scripted_agent("scripted"), models={"scripted": scripted(*rounds)})
    return Chat(service, agent="scripted")


@pytest.mark.anyio
async def test_every_panel_receives_the_same_events_and_turns(make_service: ServiceFactory) -> None:
    chat = make_chat(make_service, FEES, "It is due in March [1].")
    panels = [SourcesPanel(chat), SourcesPanel(chat, heading="Fee sources")]
    assert chat.panels == tuple(panels)

    await chat.ask("What does a semester cost?")
    await chat.ask("When is it due?", followup=True)

    for panel in panels:
        assert comm_of(panel).custom == comm_of(chat).custom
        assert panel.turns == chat.turns
        assert comm_of(panel).states("turns")[-1] == chat.turns
    assert panels[1].heading == "Fee sources"
    assert [t["status"] for t in panels[0].turns] == ["done", "done"]


@pytest.mark.anyio
async def test_a_late_panel_starts_from_the_turns_and_a_closed_one_stops(
    make_service: ServiceFactory,
) -> None:
    chat = make_chat(make_service, FEES, "It is due in March [1].")
    await chat.ask("What does a semester cost?")
    late = SourcesPanel(chat)
    assert late.turns == chat.turns
    assert late.turns[0]["references"]

    closed = SourcesPanel(chat)
    closed_comm = comm_of(closed)
    closed.close()
    assert closed not in chat.panels
    await chat.ask("When is it due?", followup=True)
    assert closed_comm.custom == []
    assert comm_of(late).custom[0]["type"] == "turn_start"
    assert len(late.turns) == 2


def test_a_panel_needs_a_chat() -> None:
    with pytest.raises(InvalidInput, match=r"expected a citelab\.Chat, not str"):
        SourcesPanel("chat")  # type: ignore[arg-type]
