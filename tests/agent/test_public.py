"""The public names of the agent and answers packages exist and are listed once."""

from __future__ import annotations

from types import ModuleType

import pytest

import citelab.agent
import citelab.answers


@pytest.mark.parametrize("module", [citelab.agent, citelab.answers])
def test_every_public_name_exists_once(module: ModuleType) -> None:
    names = module.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert getattr(module, name) is not None, name
    assert {"AgentConfig", "RunContext", "RoundRecord", "run_agent"} <= set(citelab.agent.__all__)
    assert {"AnswerService", "Answer", "FeedbackLogger", "LogStore"} <= set(citelab.answers.__all__)
